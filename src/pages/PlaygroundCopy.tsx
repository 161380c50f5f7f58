// The playground's "copy as" buttons (PlaygroundPage.tsx): the current
// settings and conversation as a curl command or a call with OpenAI's Python
// or TypeScript SDK (playgroundSnippets.ts), the key as a placeholder.
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import { Button, Stack, Typography } from '@mui/material';
import { useNotify, useTranslate } from 'react-admin';
import type { TokenRecord } from '../../common/records';
import { gatewayBaseUrl, type ChatMessage } from '../dataProvider/relayChat';
import { copyText } from '../resources/shared/clipboard';
import type { Settings } from './PlaygroundSettings';
import { curlSnippet, pythonSnippet, typescriptSnippet, type SnippetRequest } from './playgroundSnippets';

const SNIPPETS = [
  { name: 'curl', write: curlSnippet },
  { name: 'python', write: pythonSnippet },
  { name: 'typescript', write: typescriptSnippet },
] as const;

interface CopyButtonsProps {
  settings: Settings;
  tokens: TokenRecord[] | null;
  /** The conversation so far. */
  history: ChatMessage[];
  /** The message being written, sent as the last turn when there is one. */
  draft: string;
}

/** The words a snippet holds, in the console's language: the comment naming the key, and a first message when there is none. */
interface SnippetWords {
  keyComment: (name: string) => string;
  sample: string;
}

/** What the snippets send: the settings, the system prompt, the conversation and the draft (or a sample message when both are empty). */
export function snippetRequest(
  { settings, tokens, history, draft }: CopyButtonsProps,
  words: SnippetWords,
  baseUrl = gatewayBaseUrl(),
): SnippetRequest {
  const turns: ChatMessage[] = draft.trim() ? [...history, { role: 'user', content: draft.trim() }] : history;
  const token = tokens?.find((candidate) => String(candidate.id) === settings.tokenId);
  const maxTokens = Number(settings.maxTokens);
  return {
    baseUrl,
    model: settings.model,
    messages: [
      ...(settings.system.trim() ? [{ role: 'system' as const, content: settings.system }] : []),
      ...(turns.length ? turns : [{ role: 'user' as const, content: words.sample }]),
    ],
    temperature: settings.temperature,
    ...(Number.isInteger(maxTokens) && maxTokens > 0 ? { maxTokens } : {}),
    ...(token ? { keyComment: words.keyComment(token.name || `#${token.id}`) } : {}),
  };
}

/** Three buttons, each copying the current call in one form; a notice says whether the browser let it. */
export function CopyButtons(props: CopyButtonsProps) {
  const translate = useTranslate();
  const notify = useNotify();
  const copy = async (write: (request: SnippetRequest) => string) => {
    const words = {
      keyComment: (name: string) => translate('playground.copy.key_comment', { name }),
      sample: translate('playground.copy.sample'),
    };
    const text = write(snippetRequest(props, words));
    const copied = await copyText(text);
    notify(translate(copied ? 'playground.copy.copied' : 'playground.copy.not_copied'), { type: copied ? 'info' : 'warning' });
  };
  return (
    <Stack sx={{ gap: 1 }} role="group" aria-labelledby="playground-copy">
      <Typography id="playground-copy" variant="body2" color="text.secondary">
        {translate('playground.copy.title')}
      </Typography>
      {SNIPPETS.map(({ name, write }) => (
        <Button
          key={name}
          size="small"
          variant="outlined"
          startIcon={<ContentCopyIcon />}
          onClick={() => void copy(write)}
          disabled={!props.settings.model}
          sx={{ justifyContent: 'flex-start' }}
        >
          {translate(`playground.copy.${name}`)}
        </Button>
      ))}
      <Typography variant="caption" color="text.secondary">
        {translate('playground.copy.key_hint')}
      </Typography>
    </Stack>
  );
}

// /playground: a signed-in user chats with a model of their group through one
// of their own keys. The call is the relay's own (POST /v1/chat/completions,
// streamed, src/dataProvider/relayChat.ts), so it is routed, billed and logged
// as any client's; the key is fetched from its owner's endpoint when a
// message is sent and kept in memory only, never shown. This file holds the
// refusal wording, the state and requests (usePlaygroundChoices,
// useConversation) and the page; its two columns are PlaygroundSettings.tsx
// and PlaygroundConversation.tsx.
import { Alert, Card, CardContent, Link, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { Authenticated, useLocaleState, useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import type { TokenRecord } from '../../common/records';
import { TokenStatus } from '../../common/roles';
import { dataProvider } from '../dataProvider';
import { RelayError, streamChat, type ChatMessage } from '../dataProvider/relayChat';
import { LoadError } from '../layout/LoadError';
import { errorMessage } from '../dataProvider/errorMessage';
import { ConversationLog, FailureAlert, MessageForm, type Failure } from './PlaygroundConversation';
import { SettingsColumn, type Settings } from './PlaygroundSettings';

/** The title of a refusal, by what the user can do about it; the relay's own words go under it. */
export function relayErrorTitle(error: RelayError): string {
  if (error.status === 0) return 'playground.errors.network';
  if (error.status === 401) return 'playground.errors.key_refused';
  // a spent budget is a 429 too, but waiting a moment does not help: it lasts until the reset the detail gives
  if (error.code === 'budget_exceeded') return 'playground.errors.budget';
  if (error.status === 402 || error.code === 'insufficient_quota' || error.code === 'insufficient_user_quota')
    return 'playground.errors.no_quota';
  if (error.status === 429) return 'playground.errors.too_many';
  if (error.status === 403) return 'playground.errors.forbidden';
  if (error.status >= 500) return 'playground.errors.upstream';
  return 'playground.errors.refused';
}

/**
 * Seconds the relay asks a client to wait when a budget is spent only because requests in flight hold part of it
 * (server/billing/budgets.ts); any longer wait is the time until the budget resets.
 */
const BUDGET_HELD_RETRY_SECONDS = 2;

/**
 * What the user can do, in the console's language, for the refusals it knows; the relay's own words (English, with
 * the figures) are shown beneath it.
 */
export function relayErrorHint(
  error: RelayError,
  locale: string,
  now = Date.now(),
): { key: string; values?: Record<string, string> } | undefined {
  if (error.code === 'budget_exceeded') {
    if (error.retryAfter === undefined || error.retryAfter <= BUDGET_HELD_RETRY_SECONDS) return { key: 'playground.errors.budget_held' };
    return { key: 'playground.errors.budget_resets', values: { time: new Date(now + error.retryAfter * 1000).toLocaleString(locale) } };
  }
  if (error.status === 0) return { key: 'playground.errors.network_hint' };
  if (error.status === 401) return { key: 'playground.errors.key_refused_hint' };
  if (error.status === 402 || error.code === 'insufficient_quota' || error.code === 'insufficient_user_quota')
    return { key: 'playground.errors.no_quota_hint' };
  if (error.status === 429) return { key: 'playground.errors.too_many_hint' };
  return undefined;
}

/** The user's enabled keys and their group's models, and the settings chosen from them (the first of each at first). */
function usePlaygroundChoices() {
  const [tokens, setTokens] = useState<TokenRecord[] | null>(null);
  const [models, setModels] = useState<string[] | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);
  const [settings, setSettings] = useState<Settings>({ tokenId: '', model: '', system: '', temperature: 1, maxTokens: '' });

  const load = useCallback(() => {
    setLoadFailed(false);
    Promise.all([
      dataProvider.getList<TokenRecord>('token', {
        pagination: { page: 1, perPage: 100 },
        sort: { field: 'id', order: 'DESC' },
        filter: {},
      }),
      dataProvider.getPricing(),
    ]).then(
      ([tokenList, prices]) => {
        const usable = (tokenList.data as TokenRecord[]).filter((token) => Number(token.status) === TokenStatus.enabled);
        const names = prices.map((price) => price.model);
        setTokens(usable);
        setModels(names);
        setSettings((current) => ({
          ...current,
          tokenId: current.tokenId || String(usable[0]?.id ?? ''),
          model: current.model || (names[0] ?? ''),
        }));
      },
      () => setLoadFailed(true),
    );
  }, []);
  useEffect(load, [load]);

  return { tokens, models, loadFailed, load, settings, setSettings };
}

/** The conversation, the draft, the answer streaming in and the last failure; sending, stopping and clearing. */
function useConversation(settings: Settings) {
  const translate = useTranslate();
  const [locale] = useLocaleState();
  const [messages, setMessages] = useState<ChatMessage[]>([]);
  const [draft, setDraft] = useState('');
  const [answer, setAnswer] = useState<string | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const running = useRef<AbortController | null>(null);
  const keys = useRef(new Map<string, string>());
  const end = useRef<HTMLDivElement>(null);

  // a page left mid-answer stops the answer (and its billing) too
  useEffect(() => () => running.current?.abort(), []);
  // braces: newer Chromium returns a promise from scrollIntoView, which React would take for a clean-up
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [messages, answer]);

  const keyOf = async (tokenId: string) => {
    const known = keys.current.get(tokenId);
    if (known) return known;
    const key = await dataProvider.revealKey('token', tokenId);
    keys.current.set(tokenId, key);
    return key;
  };

  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = draft.trim();
    if (!text || running.current || !settings.tokenId || !settings.model) return;
    const conversation: ChatMessage[] = [...messages, { role: 'user', content: text }];
    setMessages(conversation);
    setDraft('');
    setFailure(null);
    setAnswer('');
    const controller = new AbortController();
    running.current = controller;
    let received = '';
    try {
      const key = await keyOf(settings.tokenId);
      const maxTokens = Number(settings.maxTokens);
      const request = {
        model: settings.model,
        messages: settings.system.trim() ? [{ role: 'system' as const, content: settings.system }, ...conversation] : conversation,
        temperature: settings.temperature,
        ...(settings.maxTokens.trim() && Number.isInteger(maxTokens) && maxTokens > 0 ? { max_tokens: maxTokens } : {}),
      };
      for await (const piece of streamChat(key, request, controller.signal)) {
        received += piece;
        setAnswer(received);
      }
    } catch (error) {
      if ((error as Error)?.name !== 'AbortError') {
        if (error instanceof RelayError) {
          const hint = relayErrorHint(error, locale);
          setFailure({ title: relayErrorTitle(error), ...(hint ? { hint: translate(hint.key, hint.values) } : {}), detail: error.message });
        } else {
          setFailure({ title: 'playground.errors.refused', detail: translate(errorMessage(error)) });
        }
      }
    } finally {
      running.current = null;
      // what came before a stop or a failure stays in the conversation
      if (received) setMessages((current) => [...current, { role: 'assistant', content: received }]);
      setAnswer(null);
    }
  };

  const stop = () => running.current?.abort();
  const clear = () => {
    setMessages([]);
    setFailure(null);
  };

  return { messages, draft, setDraft, answer, failure, setFailure, end, send, stop, clear };
}

function Playground() {
  const translate = useTranslate();
  const { tokens, models, loadFailed, load, settings, setSettings } = usePlaygroundChoices();
  const { messages, draft, setDraft, answer, failure, setFailure, end, send, stop, clear } = useConversation(settings);
  const streaming = answer !== null;

  return (
    <Card variant="outlined" sx={{ borderRadius: 3, maxWidth: 1200, mx: 'auto' }} data-testid="playground">
      <CardContent sx={{ p: { xs: 2, sm: 3 } }}>
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 0.5 }}>
          {translate('playground.title')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {translate('playground.intro')}
        </Typography>
        {loadFailed && <LoadError onRetry={load} />}
        {tokens !== null && tokens.length === 0 && (
          <Alert severity="info" sx={{ mb: 2 }}>
            {translate('playground.no_keys')}{' '}
            <Link component={RouterLink} to="/token/add">
              {translate('playground.create_key')}
            </Link>
          </Alert>
        )}
        {models !== null && models.length === 0 && (
          <Alert severity="info" sx={{ mb: 2 }}>
            {translate('playground.no_models')}
          </Alert>
        )}
        <Stack direction={{ xs: 'column', md: 'row' }} sx={{ gap: 3, alignItems: 'stretch' }}>
          <SettingsColumn tokens={tokens} models={models} settings={settings} setSettings={setSettings} />
          <Stack component="section" aria-label={translate('playground.conversation')} sx={{ flex: 1, minWidth: 0, gap: 1.5 }}>
            <ConversationLog messages={messages} answer={answer} endRef={end} />
            {failure && <FailureAlert failure={failure} onClose={() => setFailure(null)} />}
            <MessageForm
              draft={draft}
              setDraft={setDraft}
              settings={settings}
              streaming={streaming}
              hasMessages={messages.length > 0}
              send={send}
              stop={stop}
              clear={clear}
            />
          </Stack>
        </Stack>
      </CardContent>
    </Card>
  );
}

/** /playground, for signed-in users only. */
export default function PlaygroundPage() {
  return (
    <Authenticated>
      <Playground />
    </Authenticated>
  );
}

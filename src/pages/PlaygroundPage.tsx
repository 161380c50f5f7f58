// /playground: a signed-in user chats with a model of their group through one
// of their own keys. The call is the relay's own (POST /v1/chat/completions,
// streamed, src/dataProvider/relayChat.ts), so it is routed, billed and logged
// as any client's; the key is fetched from its owner's endpoint when a
// message is sent and kept in memory only, never shown. Each answer reports
// its tokens, billed cost, timings and log row; a refusal is shown at its
// turn. This file holds the choices (usePlaygroundChoices: the keys, the
// models and the one to open on) and the page; the conversation's state is
// usePlaygroundConversation.ts, the refusal wording playgroundErrors.ts, the
// two columns PlaygroundSettings.tsx (with PlaygroundCopy.tsx) and
// PlaygroundConversation.tsx.
import { Alert, Card, CardContent, Link, Stack, Typography } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { Authenticated, useTranslate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import type { TokenRecord } from '../../common/records';
import { TokenStatus } from '../../common/roles';
import { dataProvider } from '../dataProvider';
import { LoadError } from '../layout/LoadError';
import { ConversationLog, MessageForm } from './PlaygroundConversation';
import { CopyButtons } from './PlaygroundCopy';
import { modelsKnownToWork, openingModel } from './playgroundModels';
import { SettingsColumn, type Settings } from './PlaygroundSettings';
import { historyOf } from './playgroundTurns';
import { useConversation } from './usePlaygroundConversation';

export { relayErrorHint, relayErrorTitle } from './playgroundErrors';

/**
 * The user's enabled keys and their group's models, and the settings chosen from them: the first key, and the first
 * model a channel that passed its last test serves (else the first model).
 */
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
      modelsKnownToWork(),
    ]).then(
      ([tokenList, prices, working]) => {
        const usable = (tokenList.data as TokenRecord[]).filter((token) => Number(token.status) === TokenStatus.enabled);
        const names = prices.map((price) => price.model);
        setTokens(usable);
        setModels(names);
        setSettings((current) => ({
          ...current,
          tokenId: current.tokenId || String(usable[0]?.id ?? ''),
          model: current.model || openingModel(names, working),
        }));
      },
      () => setLoadFailed(true),
    );
  }, []);
  useEffect(load, [load]);

  return { tokens, models, loadFailed, load, settings, setSettings };
}

function Playground() {
  const translate = useTranslate();
  const { tokens, models, loadFailed, load, settings, setSettings } = usePlaygroundChoices();
  const { entries, draft, setDraft, answer, end, send, stop, clear, dismiss } = useConversation(settings);
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
          <SettingsColumn tokens={tokens} models={models} settings={settings} setSettings={setSettings}>
            <CopyButtons settings={settings} tokens={tokens} history={historyOf(entries)} draft={draft} />
          </SettingsColumn>
          <Stack component="section" aria-label={translate('playground.conversation')} sx={{ flex: 1, minWidth: 0, gap: 1.5 }}>
            <ConversationLog entries={entries} answer={answer} endRef={end} onDismiss={dismiss} />
            <MessageForm
              draft={draft}
              setDraft={setDraft}
              settings={settings}
              streaming={streaming}
              hasMessages={entries.length > 0}
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

// The playground's conversation (PlaygroundPage.tsx): its turns, the draft
// and the answer streaming in; sending, stopping and clearing. Each answer
// gets its report (playgroundTurns.ts), completed with what the gateway billed
// once the log has the call's row; a failed call is marked at its own turn.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useLocaleState, useTranslate } from 'react-admin';
import { dataProvider } from '../dataProvider';
import type { ChatMessage, ChatRequest } from '../dataProvider/relayChat';
import { failureOf } from './playgroundErrors';
import type { Settings } from './PlaygroundSettings';
import { historyOf, readBilled, runTurn, type Entry, type TurnReport } from './playgroundTurns';

/** The request for the conversation with the settings: the system prompt first, max tokens when a positive whole number. */
function requestOf(settings: Settings, conversation: ChatMessage[]): ChatRequest {
  const maxTokens = Number(settings.maxTokens);
  return {
    model: settings.model,
    messages: settings.system.trim() ? [{ role: 'system' as const, content: settings.system }, ...conversation] : conversation,
    temperature: settings.temperature,
    ...(settings.maxTokens.trim() && Number.isInteger(maxTokens) && maxTokens > 0 ? { max_tokens: maxTokens } : {}),
  };
}

export function useConversation(settings: Settings) {
  const translate = useTranslate();
  const [locale] = useLocaleState();
  const [entries, setEntries] = useState<Entry[]>([]);
  const [draft, setDraft] = useState('');
  const [answer, setAnswer] = useState<string | null>(null);
  const running = useRef<AbortController | null>(null);
  const keys = useRef(new Map<string, string>());
  const nextId = useRef(1);
  const end = useRef<HTMLDivElement>(null);

  // a page left mid-answer stops the answer (and its billing) too
  useEffect(() => () => running.current?.abort(), []);
  // braces: newer Chromium returns a promise from scrollIntoView, which React would take for a clean-up
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [entries, answer]);

  const keyOf = async (tokenId: string) => {
    const known = keys.current.get(tokenId);
    if (known) return known;
    const key = await dataProvider.revealKey('token', tokenId);
    keys.current.set(tokenId, key);
    return key;
  };

  const updateReport = (id: number, change: Partial<TurnReport>) =>
    setEntries((current) =>
      current.map((entry) => (entry.id === id && entry.report ? { ...entry, report: { ...entry.report, ...change } } : entry)),
    );

  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    const text = draft.trim();
    if (!text || running.current || !settings.tokenId || !settings.model) return;
    const conversation: ChatMessage[] = [...historyOf(entries), { role: 'user', content: text }];
    setEntries((current) => [...current, { id: nextId.current++, role: 'user', content: text }]);
    setDraft('');
    setAnswer('');
    const controller = new AbortController();
    running.current = controller;
    const tokenId = settings.tokenId;
    const outcome = await runTurn(() => keyOf(tokenId), requestOf(settings, conversation), controller.signal, setAnswer);
    running.current = null;
    setAnswer(null);
    const failure = outcome.error === undefined ? undefined : failureOf(outcome.error, translate, locale);
    // what came before a stop or a failure stays in the conversation; a stop with nothing adds no turn
    if (!outcome.received && !failure) return;
    const id = nextId.current++;
    const reported = Boolean(outcome.received || outcome.report.requestId);
    setEntries((current) => [
      ...current,
      {
        id,
        role: 'assistant',
        content: outcome.received,
        ...(reported ? { report: outcome.report } : {}),
        ...(failure ? { failure } : {}),
      },
    ]);
    const { requestId } = outcome.report;
    if (requestId && outcome.report.billed === 'pending') updateReport(id, { billed: await readBilled(requestId) });
  };

  const stop = () => running.current?.abort();
  const clear = () => setEntries([]);
  /** Closes a turn's refusal; a turn that was nothing but the refusal goes with it. */
  const dismiss = (id: number) =>
    setEntries((current) =>
      current.flatMap((entry) => {
        if (entry.id !== id) return [entry];
        return entry.content ? [{ ...entry, failure: undefined }] : [];
      }),
    );

  return { entries, draft, setDraft, answer, end, send, stop, clear, dismiss };
}

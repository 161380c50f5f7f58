// The playground's conversation column (PlaygroundPage.tsx): the log of turns
// with the answer streaming in, each answer's report (PlaygroundTurnReport.tsx),
// a failed call's refusal at its own turn, and the message box with its
// send / stop and clear buttons.
import DeleteSweepIcon from '@mui/icons-material/DeleteSweep';
import SendIcon from '@mui/icons-material/Send';
import StopIcon from '@mui/icons-material/Stop';
import { Alert, AlertTitle, Box, Button, Paper, TextField, Typography } from '@mui/material';
import type { FormEvent, RefObject } from 'react';
import { useTranslate } from 'react-admin';
import type { ChatMessage } from '../dataProvider/relayChat';
import type { Failure } from './playgroundErrors';
import type { Settings } from './PlaygroundSettings';
import { TurnReportLine } from './PlaygroundTurnReport';
import type { Entry } from './playgroundTurns';

/** One turn of the conversation; the user's on the right. */
function Bubble({ role, text, live = false }: { role: ChatMessage['role']; text: string; live?: boolean }) {
  const translate = useTranslate();
  const mine = role === 'user';
  return (
    <Box
      sx={{ display: 'flex', justifyContent: mine ? 'flex-end' : 'flex-start' }}
      data-testid={`message-${role}`}
      aria-busy={live || undefined}
    >
      <Box
        sx={{
          maxWidth: '85%',
          px: 1.5,
          py: 1,
          borderRadius: 2,
          bgcolor: mine ? 'primary.main' : 'background.paper',
          color: mine ? 'primary.contrastText' : 'text.primary',
          border: mine ? 0 : 1,
          borderColor: 'divider',
        }}
      >
        <Typography variant="caption" sx={{ display: 'block', fontWeight: 600, color: mine ? 'inherit' : 'text.secondary' }}>
          {translate(`playground.role_${role}`)}
        </Typography>
        <Typography variant="body2" sx={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
          {text}
        </Typography>
      </Box>
    </Box>
  );
}

/** One turn: its text, the refusal that ended it (where the reader is, not below the log) and its report. */
function Turn({ entry, onDismiss }: { entry: Entry; onDismiss: (id: number) => void }) {
  return (
    <Box sx={{ mb: 1.5 }} data-testid={`turn-${entry.role}`}>
      {entry.content && <Bubble role={entry.role} text={entry.content} />}
      {entry.failure && <FailureAlert failure={entry.failure} onClose={() => onDismiss(entry.id)} />}
      {entry.report && <TurnReportLine report={entry.report} failed={!entry.content} />}
    </Box>
  );
}

interface ConversationLogProps {
  entries: Entry[];
  /** The answer streaming in; null when none is. */
  answer: string | null;
  /** The end of the log, scrolled into view as turns arrive. */
  endRef: RefObject<HTMLDivElement | null>;
  /** Closes a turn's refusal. */
  onDismiss: (id: number) => void;
}

/** The conversation so far and the answer streaming in, as a live log. */
export function ConversationLog({ entries, answer, endRef, onDismiss }: ConversationLogProps) {
  const translate = useTranslate();
  const streaming = answer !== null;
  return (
    <Paper
      variant="outlined"
      role="log"
      aria-live="polite"
      sx={{ p: 2, minHeight: { xs: 240, md: 380 }, maxHeight: '60vh', overflowY: 'auto', bgcolor: 'background.default' }}
    >
      {entries.length === 0 && !streaming && (
        <Typography variant="body2" color="text.secondary">
          {translate('playground.empty')}
        </Typography>
      )}
      {entries.map((entry) => (
        <Turn key={entry.id} entry={entry} onDismiss={onDismiss} />
      ))}
      {streaming && (
        <Box sx={{ mb: 1.5 }}>
          <Bubble role="assistant" text={answer || '…'} live />
        </Box>
      )}
      <div ref={endRef} />
    </Paper>
  );
}

/** Why the last call failed: its title, the hint when the console knows one, and the relay's own words. */
export function FailureAlert({ failure, onClose }: { failure: Failure; onClose: () => void }) {
  const translate = useTranslate();
  return (
    <Alert severity="error" onClose={onClose} sx={{ mt: 0.5 }}>
      <AlertTitle>{translate(failure.title)}</AlertTitle>
      {failure.hint && <Typography variant="body2">{failure.hint}</Typography>}
      {failure.hint ? (
        <Typography variant="body2" component="p" sx={{ mt: 0.5, opacity: 0.9 }}>
          {translate('playground.errors.gateway_said', { detail: failure.detail })}
        </Typography>
      ) : (
        failure.detail
      )}
    </Alert>
  );
}

interface MessageFormProps {
  draft: string;
  setDraft: (draft: string) => void;
  settings: Settings;
  streaming: boolean;
  /** Whether there is a conversation to clear. */
  hasMessages: boolean;
  send: (event?: FormEvent) => Promise<void>;
  stop: () => void;
  clear: () => void;
}

/** The message box; Enter sends, and while an answer streams the send button is a stop button. */
export function MessageForm({ draft, setDraft, settings, streaming, hasMessages, send, stop, clear }: MessageFormProps) {
  const translate = useTranslate();
  return (
    <Box
      component="form"
      onSubmit={(event) => void send(event)}
      sx={{ display: 'flex', gap: 1, alignItems: 'flex-end', flexWrap: { xs: 'wrap', sm: 'nowrap' } }}
    >
      <TextField
        label={translate('playground.message')}
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={(event) => {
          // Enter sends, Shift+Enter starts a new line
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            void send();
          }
        }}
        multiline
        maxRows={6}
        size="small"
        fullWidth
      />
      {streaming ? (
        <Button variant="outlined" color="warning" startIcon={<StopIcon />} onClick={stop} sx={{ flexShrink: 0 }}>
          {translate('playground.stop')}
        </Button>
      ) : (
        <Button
          type="submit"
          variant="contained"
          disableElevation
          startIcon={<SendIcon />}
          disabled={!draft.trim() || !settings.tokenId || !settings.model}
          sx={{ flexShrink: 0 }}
        >
          {translate('playground.send')}
        </Button>
      )}
      <Button variant="text" startIcon={<DeleteSweepIcon />} onClick={clear} disabled={streaming || !hasMessages} sx={{ flexShrink: 0 }}>
        {translate('playground.clear')}
      </Button>
    </Box>
  );
}

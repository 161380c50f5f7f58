// The first-run checklist atop root's dashboard (common/setupChecklist.ts):
// five steps from a fresh install to a first relayed request, each ticked by
// the server from what the database holds and linked to where it is done. It
// hides itself once every step is done or root dismisses it, and stays out of
// the way when it cannot be loaded (the dashboard below matters more).
import CheckCircleIcon from '@mui/icons-material/CheckCircle';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import RadioButtonUncheckedIcon from '@mui/icons-material/RadioButtonUnchecked';
import { Box, Button, Card, CardContent, LinearProgress, Link, Stack, Typography } from '@mui/material';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useNotify } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { SETUP_STEPS, setupComplete, type SetupChecklist as Checklist, type SetupStep } from '../../common/setupChecklist';
import { dataProvider } from '../dataProvider';
import { errorMessage } from '../dataProvider/errorMessage';
import { copyText } from '../resources/shared/clipboard';
import { useDashboardTranslate } from './useDashboardTranslate';

const QUERY_KEY = ['setup-checklist'];

/** Where each step is done. */
const STEP_PATHS: Record<SetupStep, string> = {
  password_changed: '/setting',
  channel_added: '/channel/create',
  channel_tested: '/channel',
  token_created: '/token/create',
  request_sent: '/playground',
};

/** Read by screen readers, not drawn. */
const visuallyHidden = {
  position: 'absolute',
  width: '1px',
  height: '1px',
  margin: '-1px',
  padding: 0,
  overflow: 'hidden',
  clip: 'rect(0 0 0 0)',
  whiteSpace: 'nowrap',
  border: 0,
} as const;

/** The sample request: the key stays a placeholder, since the console shows a token's key only in the tokens list. */
export function sampleCurl(origin: string, model: string): string {
  const body = JSON.stringify({ model: model || 'MODEL', messages: [{ role: 'user', content: 'Hello' }] });
  return [
    `curl ${origin}/v1/chat/completions`,
    '  -H "Content-Type: application/json"',
    '  -H "Authorization: Bearer sk-..."',
    `  -d '${body}'`,
  ].join(' \\\n');
}

function SampleRequest({ model }: { model: string }) {
  const translate = useDashboardTranslate();
  const notify = useNotify();
  const curl = sampleCurl(window.location.origin, model);
  const copy = async () => {
    const copied = await copyText(curl);
    notify(translate(copied ? 'dashboard.setup.curl_copied' : 'dashboard.setup.curl_not_copied'), { type: copied ? 'info' : 'warning' });
  };
  return (
    <Box sx={{ mt: 1.5 }}>
      <Box
        component="pre"
        data-testid="setup-curl"
        sx={{
          m: 0,
          p: 1.5,
          borderRadius: 2,
          bgcolor: 'action.hover',
          color: 'text.primary',
          fontSize: 12.5,
          whiteSpace: 'pre-wrap',
          wordBreak: 'break-all',
          overflowX: 'auto',
        }}
      >
        <code>{curl}</code>
      </Box>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ mt: 1, alignItems: { sm: 'center' } }}>
        <Button
          size="small"
          variant="outlined"
          startIcon={<ContentCopyIcon />}
          onClick={() => void copy()}
          sx={{ alignSelf: 'flex-start' }}
        >
          {translate('dashboard.setup.copy_curl')}
        </Button>
        <Typography variant="body2" color="text.secondary">
          {translate('dashboard.setup.key_hint')}{' '}
          <Link component={RouterLink} to="/token">
            {translate('dashboard.setup.open_tokens')}
          </Link>
        </Typography>
      </Stack>
    </Box>
  );
}

interface StepItemProps {
  step: SetupStep;
  done: boolean;
  checklist: Checklist;
}

function StepItem({ step, done, checklist }: StepItemProps) {
  const translate = useDashboardTranslate();
  const titleId = useId();
  const stateId = useId();
  const Icon = done ? CheckCircleIcon : RadioButtonUncheckedIcon;
  const showCurl = step === 'request_sent' && !done && checklist.channel_added;
  return (
    <Box
      component="li"
      aria-labelledby={`${titleId} ${stateId}`}
      data-testid={`setup-step-${step}`}
      data-done={done}
      sx={{ py: 1.25, listStyle: 'none' }}
    >
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={{ xs: 1, sm: 2 }} sx={{ alignItems: { sm: 'center' } }}>
        <Stack direction="row" spacing={1.5} sx={{ flex: 1, minWidth: 0 }}>
          <Icon aria-hidden color={done ? 'success' : 'disabled'} sx={{ mt: 0.25 }} />
          <Box sx={{ minWidth: 0, position: 'relative' }}>
            <Typography
              id={titleId}
              sx={{ fontWeight: 600, textDecoration: done ? 'line-through' : 'none', color: done ? 'text.secondary' : 'text.primary' }}
            >
              {translate(`dashboard.setup.steps.${step}.title`)}
            </Typography>
            <Box component="span" id={stateId} sx={visuallyHidden}>
              {`(${translate(done ? 'dashboard.setup.done' : 'dashboard.setup.not_done')})`}
            </Box>
            <Typography variant="body2" color="text.secondary">
              {translate(`dashboard.setup.steps.${step}.text`)}
            </Typography>
          </Box>
        </Stack>
        <Button
          component={RouterLink}
          to={STEP_PATHS[step]}
          size="small"
          variant={done ? 'text' : 'contained'}
          disableElevation
          sx={{ alignSelf: { xs: 'flex-start', sm: 'center' }, ml: { xs: 4.5, sm: 0 }, flexShrink: 0 }}
        >
          {translate(`dashboard.setup.steps.${step}.action`)}
        </Button>
      </Stack>
      {showCurl && (
        <Box sx={{ pl: { xs: 0, sm: 4.5 } }}>
          <SampleRequest model={checklist.model} />
        </Box>
      )}
    </Box>
  );
}

function ChecklistCard({ checklist, onDismiss, dismissing }: { checklist: Checklist; onDismiss: () => void; dismissing: boolean }) {
  const translate = useDashboardTranslate();
  const headingId = useId();
  const done = SETUP_STEPS.filter((step) => checklist[step]).length;
  return (
    <Card variant="outlined" component="section" aria-labelledby={headingId} data-testid="setup-checklist" sx={{ borderRadius: 3 }}>
      <CardContent sx={{ p: { xs: 2, sm: 3 } }}>
        <Stack direction="row" spacing={2} sx={{ alignItems: 'flex-start', justifyContent: 'space-between' }}>
          <Box sx={{ minWidth: 0 }}>
            <Typography id={headingId} variant="h6" component="h2" sx={{ fontWeight: 700 }}>
              {translate('dashboard.setup.title')}
            </Typography>
            <Typography variant="body2" color="text.secondary">
              {translate('dashboard.setup.subtitle')}
            </Typography>
          </Box>
          {/* a dismissal lasts while a channel exists (the server refuses one before) */}
          {checklist.channel_added && (
            <Button size="small" color="inherit" onClick={onDismiss} disabled={dismissing} sx={{ flexShrink: 0 }}>
              {translate('dashboard.setup.dismiss')}
            </Button>
          )}
        </Stack>
        <Typography variant="body2" sx={{ mt: 2, mb: 0.5 }} id={`${headingId}-progress`}>
          {translate('dashboard.setup.progress', { done, total: SETUP_STEPS.length })}
        </Typography>
        <LinearProgress
          variant="determinate"
          value={(done / SETUP_STEPS.length) * 100}
          aria-labelledby={`${headingId}-progress`}
          sx={{ height: 6, borderRadius: 3 }}
        />
        <Box component="ol" sx={{ m: 0, mt: 1, p: 0 }} aria-labelledby={headingId}>
          {SETUP_STEPS.map((step) => (
            <StepItem key={step} step={step} done={checklist[step]} checklist={checklist} />
          ))}
        </Box>
      </CardContent>
    </Card>
  );
}

/** The checklist card for root: nothing while it loads, fails, is dismissed or has every step done. */
export function SetupChecklist() {
  const translate = useDashboardTranslate();
  const notify = useNotify();
  const queryClient = useQueryClient();
  const [dismissing, setDismissing] = useState(false);
  const { data } = useQuery({
    queryKey: QUERY_KEY,
    queryFn: ({ signal }) => dataProvider.getSetupChecklist(signal),
    retry: false,
    refetchOnWindowFocus: false,
  });
  if (!data || data.dismissed || setupComplete(data)) return null;

  const dismiss = async () => {
    setDismissing(true);
    try {
      await dataProvider.dismissSetupChecklist();
      queryClient.setQueryData<Checklist>(QUERY_KEY, { ...data, dismissed: true });
    } catch (error) {
      notify(translate(errorMessage(error), { _: errorMessage(error) }), { type: 'error' });
    } finally {
      setDismissing(false);
    }
  };
  return <ChecklistCard checklist={data} onDismiss={() => void dismiss()} dismissing={dismissing} />;
}

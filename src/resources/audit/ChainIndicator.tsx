// Above the audit list: whether the hash chain is whole ("Chain intact: 120
// rows checked") or where it breaks ("Chain broken at row #57: the row was
// changed after it was written"), walked on the server when the page opens
// and again on "Check again".
import { Alert, Button } from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useDataProvider, useTranslate } from 'react-admin';
import type { AuditChainStatus } from '../../../common/audit';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { errorMessage } from '../../dataProvider/errorMessage';

type Check = { state: 'checking' } | { state: 'done'; status: AuditChainStatus } | { state: 'failed'; message: string };

export function ChainIndicator() {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const translate = useTranslate();
  const [check, setCheck] = useState<Check>({ state: 'checking' });
  const [round, setRound] = useState(0);
  const recheck = useCallback(() => {
    setCheck({ state: 'checking' });
    setRound((value) => value + 1);
  }, []);
  useEffect(() => {
    const controller = new AbortController();
    dataProvider.auditChainStatus(controller.signal).then(
      (status) => setCheck({ state: 'done', status }),
      (error: unknown) => !controller.signal.aborted && setCheck({ state: 'failed', message: errorMessage(error) }),
    );
    return () => controller.abort();
  }, [dataProvider, round]);

  const action = (
    <Button color="inherit" size="small" onClick={recheck} disabled={check.state === 'checking'}>
      {translate('audit.chain.recheck')}
    </Button>
  );
  let severity: 'info' | 'success' | 'error' = 'info';
  let line = translate('audit.chain.checking');
  if (check.state === 'failed') {
    severity = 'error';
    line = translate('audit.chain.failed', { message: translate(check.message) });
  } else if (check.state === 'done' && check.status.broken_at) {
    const { seq, kind } = check.status.broken_at;
    severity = 'error';
    line = translate('audit.chain.broken', { seq, reason: translate(`audit.chain.reason.${kind}`) });
  } else if (check.state === 'done') {
    severity = 'success';
    line = translate('audit.chain.intact', { smart_count: check.status.rows });
    if (check.status.anchor_seq > 0) line = `${line}; ${translate('audit.chain.pruned', { seq: check.status.anchor_seq })}`;
  }
  return (
    <Alert severity={severity} action={action} role="status" data-testid="audit-chain" sx={{ mb: 1, alignItems: 'center' }}>
      {line}
    </Alert>
  );
}

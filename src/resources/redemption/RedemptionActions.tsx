// Row actions: copy key, enable/disable (not for used codes), edit, delete.
import { Stack } from '@mui/material';
import { useDataProvider, useRecordContext, useRefresh } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { RedemptionStatus } from '../../../common/roles';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../pages/errorMessage';
import { copyText } from '../shared/clipboard';
import { RowButton } from '../shared/RowButton';

export function RedemptionActions(_: { label?: string }) {
  const record = useRecordContext();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  const navigate = useNavigate();
  if (!record) return null;
  const run = async (work: () => Promise<unknown>) => {
    try {
      await work();
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  const copyKey = async () => {
    try {
      const key = await dataProvider.revealKey('redemption', record.id);
      if (await copyText(key)) notice('app.common.copied', 'success');
      else notice('app.errors.copy_manually', 'warning', { value: key });
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  const used = record.status === RedemptionStatus.used;
  const enabled = record.status === RedemptionStatus.unused;
  return (
    <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap' }}>
      <RowButton label="app.redemption.copy_key" onClick={copyKey} />
      <RowButton
        label={enabled ? 'app.token.disable' : 'app.token.enable'}
        color={enabled ? 'warning' : 'success'}
        disabled={used}
        onClick={() =>
          run(() =>
            dataProvider.update('redemption', {
              id: record.id,
              data: { status: enabled ? RedemptionStatus.disabled : RedemptionStatus.unused },
              previousData: record,
              meta: { statusOnly: true },
            }),
          )
        }
      />
      <RowButton label="ra.action.edit" onClick={() => navigate(`/redemption/edit/${record.id}`)} />
      <RowButton label="ra.action.delete" color="error" confirm="app.redemption.delete_title" onClick={() => run(() => dataProvider.delete('redemption', { id: record.id, previousData: record }))} />
    </Stack>
  );
}

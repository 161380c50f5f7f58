// Row actions: copy key, enable/disable (not for used codes), edit; in "more": delete.
import BlockIcon from '@mui/icons-material/Block';
import CheckCircleOutlineIcon from '@mui/icons-material/CheckCircleOutlineOutlined';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import { useDataProvider, useRecordContext, useRefresh } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { RedemptionStatus } from '../../../common/roles';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';
import { useCopy } from '../shared/useCopy';
import { RowActions } from '../shared/RowActions';

export function RedemptionActions(_: { label?: string }) {
  const record = useRecordContext();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const refresh = useRefresh();
  const copy = useCopy();
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
      await copy(await dataProvider.revealKey('redemption', record.id));
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  const used = record.status === RedemptionStatus.used;
  const enabled = record.status === RedemptionStatus.unused;
  return (
    <RowActions
      actions={[
        { key: 'copy', label: 'app.redemption.copy_key', icon: <ContentCopyIcon fontSize="small" />, onClick: () => void copyKey() },
        {
          key: 'toggle',
          label: enabled ? 'app.token.disable' : 'app.token.enable',
          icon: enabled ? <BlockIcon fontSize="small" /> : <CheckCircleOutlineIcon fontSize="small" />,
          color: enabled ? 'warning' : 'success',
          disabled: used,
          onClick: () =>
            void run(() =>
              dataProvider.update('redemption', {
                id: record.id,
                data: { status: enabled ? RedemptionStatus.disabled : RedemptionStatus.unused },
                previousData: record,
                meta: { statusOnly: true },
              }),
            ),
        },
        {
          key: 'edit',
          label: 'ra.action.edit',
          icon: <EditIcon fontSize="small" />,
          onClick: () => void navigate(`/redemption/edit/${record.id}`),
        },
        {
          key: 'delete',
          label: 'ra.action.delete',
          icon: <DeleteIcon fontSize="small" />,
          color: 'error',
          confirm: 'app.redemption.delete_title',
          more: true,
          onClick: () => void run(() => dataProvider.delete('redemption', { id: record.id, previousData: record })),
        },
      ]}
    />
  );
}

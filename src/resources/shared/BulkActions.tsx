// The selection toolbar of channels, tokens and codes: enable, disable and
// delete the selected rows through one bulk request each; delete asks first.
import CheckCircleOutlineIcon from '@mui/icons-material/CheckCircleOutlineOutlined';
import BlockIcon from '@mui/icons-material/Block';
import { Button } from '@mui/material';
import { BulkDeleteButton, useListContext, useRefresh, useTranslate, useUnselectAll, useUpdateMany } from 'react-admin';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';

function BulkStatusButton({
  resource,
  status,
  label,
  icon,
  color,
}: {
  resource: string;
  status: number;
  label: string;
  icon: React.ReactNode;
  color: 'success' | 'warning';
}) {
  const { selectedIds } = useListContext();
  const translate = useTranslate();
  const notice = useNotice();
  const refresh = useRefresh();
  const unselectAll = useUnselectAll(resource);
  const [updateMany, { isPending }] = useUpdateMany();
  const run = () =>
    updateMany(
      resource,
      { ids: selectedIds, data: { status } },
      {
        mutationMode: 'pessimistic',
        onSuccess: () => {
          notice('app.common.operation_success', 'success');
          unselectAll();
        },
        onError: (error) => notice(errorMessage(error), 'error'),
        // whatever part was done shows at once
        onSettled: () => refresh(),
      },
    );
  return (
    <Button size="small" color={color} startIcon={icon} disabled={isPending} onClick={() => void run()}>
      {translate(label)}
    </Button>
  );
}

/** Enable (status 1), disable (status 2), delete: the same numbers on channels, tokens and codes. */
export function BulkActions({ resource }: { resource: 'channel' | 'token' | 'redemption' }) {
  return (
    <>
      <BulkStatusButton
        resource={resource}
        status={1}
        label="app.lists.enable_selected"
        icon={<CheckCircleOutlineIcon />}
        color="success"
      />
      <BulkStatusButton resource={resource} status={2} label="app.lists.disable_selected" icon={<BlockIcon />} color="warning" />
      <BulkDeleteButton mutationMode="pessimistic" />
    </>
  );
}

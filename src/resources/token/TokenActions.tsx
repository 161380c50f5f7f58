// Row actions of the token list: copy (with client targets), chat (with client
// targets), enable/disable (only between 1 and 2), edit, delete (confirmed).
import ChatIcon from '@mui/icons-material/Chat';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import { Button, ButtonGroup, Dialog, DialogActions, DialogContent, DialogTitle, Menu, MenuItem, Stack } from '@mui/material';
import { useState } from 'react';
import { useDataProvider, useRecordContext, useRefresh, useTranslate, useUpdate } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { TokenStatus } from '../../../common/roles';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { useStatus } from '../../layout/status';
import { errorMessage } from '../../pages/errorMessage';
import { copyText } from '../shared/clipboard';
import { CLIENT_TARGETS, type ClientTarget } from './clientTargets';

export function TokenActions(_: { label?: string }) {
  const record = useRecordContext();
  const translate = useTranslate();
  const notice = useNotice();
  const refresh = useRefresh();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const { status } = useStatus();
  const [update] = useUpdate();
  const [menu, setMenu] = useState<{ anchor: HTMLElement; chat: boolean } | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  if (!record) return null;

  const useTarget = async (target: ClientTarget) => {
    setMenu(null);
    try {
      const key = await dataProvider.revealKey('token', record.id);
      const server = status?.server_address || window.location.origin;
      const value = target.build({ key, server, chatLink: status?.chat_link ?? '' });
      if (menu?.chat) {
        window.open(value, '_blank', 'noopener');
        return;
      }
      if (await copyText(value)) notice('app.common.copied', 'success');
      else notice('app.errors.copy_manually', 'warning', { value });
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  const toggle = () => {
    const next = record.status === TokenStatus.enabled ? TokenStatus.disabled : TokenStatus.enabled;
    update(
      'token',
      { id: record.id, data: { status: next }, previousData: record, meta: { statusOnly: true } },
      {
        mutationMode: 'pessimistic',
        onSuccess: () => notice('app.common.operation_success', 'success'),
        onError: (error) => notice(errorMessage(error), 'error'),
      },
    );
  };

  const remove = async () => {
    setConfirmDelete(false);
    try {
      await dataProvider.delete('token', { id: record.id, previousData: record });
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  const toggleable = record.status === TokenStatus.enabled || record.status === TokenStatus.disabled;
  return (
    <Stack direction="row" spacing={0.5} sx={{ flexWrap: 'wrap', rowGap: 0.5 }}>
      <ButtonGroup size="small" variant="outlined">
        <Button startIcon={<ContentCopyIcon />} onClick={(event) => setMenu({ anchor: event.currentTarget, chat: false })}>
          {translate('app.token.copy')}
        </Button>
        <Button startIcon={<ChatIcon />} onClick={(event) => setMenu({ anchor: event.currentTarget, chat: true })}>
          {translate('app.token.chat')}
        </Button>
      </ButtonGroup>
      <Menu anchorEl={menu?.anchor} open={Boolean(menu)} onClose={() => setMenu(null)}>
        {CLIENT_TARGETS.filter((target) => (menu?.chat ? target.chat : true)).map((target) => (
          <MenuItem key={target.id} onClick={() => useTarget(target)}>
            {target.label}
          </MenuItem>
        ))}
      </Menu>
      {toggleable && (
        <Button size="small" color={record.status === TokenStatus.enabled ? 'warning' : 'success'} onClick={toggle}>
          {translate(record.status === TokenStatus.enabled ? 'app.token.disable' : 'app.token.enable')}
        </Button>
      )}
      <Button size="small" component={RouterLink} to={`/token/edit/${record.id}`} startIcon={<EditIcon />}>
        {translate('ra.action.edit')}
      </Button>
      <Button size="small" color="error" startIcon={<DeleteIcon />} onClick={() => setConfirmDelete(true)}>
        {translate('ra.action.delete')}
      </Button>
      <Dialog open={confirmDelete} onClose={() => setConfirmDelete(false)}>
        <DialogTitle>{translate('app.token.delete_title', { name: record.name })}</DialogTitle>
        <DialogContent>{translate('ra.message.are_you_sure')}</DialogContent>
        <DialogActions>
          <Button onClick={() => setConfirmDelete(false)}>{translate('ra.action.cancel')}</Button>
          <Button color="error" variant="contained" disableElevation onClick={remove}>
            {translate('ra.action.delete')}
          </Button>
        </DialogActions>
      </Dialog>
    </Stack>
  );
}

// Row actions of the token list: copy (with client targets), chat (with client
// targets), enable/disable (only between 1 and 2), edit; in "more": delete (confirmed).
import BlockIcon from '@mui/icons-material/Block';
import ChatIcon from '@mui/icons-material/Chat';
import CheckCircleOutlineIcon from '@mui/icons-material/CheckCircleOutlineOutlined';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import { Menu, MenuItem } from '@mui/material';
import { useState } from 'react';
import { useDataProvider, useRecordContext, useRefresh, useUpdate } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { TokenStatus } from '../../../common/roles';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { useStatus } from '../../layout/status';
import { errorMessage } from '../../pages/errorMessage';
import { useCopy } from '../shared/useCopy';
import { RowActions } from '../shared/RowActions';
import { CLIENT_TARGETS, type ClientTarget } from './clientTargets';

export function TokenActions(_: { label?: string }) {
  const record = useRecordContext();
  const navigate = useNavigate();
  const notice = useNotice();
  const refresh = useRefresh();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const { status } = useStatus();
  const [update] = useUpdate();
  const copy = useCopy();
  const [menu, setMenu] = useState<{ anchor: HTMLElement; chat: boolean } | null>(null);
  if (!record) return null;

  const chooseTarget = async (target: ClientTarget) => {
    setMenu(null);
    try {
      const key = await dataProvider.revealKey('token', record.id);
      const server = status?.server_address || window.location.origin;
      const value = target.build({ key, server, chatLink: status?.chat_link ?? '' });
      if (menu?.chat) {
        window.open(value, '_blank', 'noopener');
        return;
      }
      await copy(value);
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  const toggle = () => {
    const next = record.status === TokenStatus.enabled ? TokenStatus.disabled : TokenStatus.enabled;
    void update(
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
    try {
      await dataProvider.delete('token', { id: record.id, previousData: record });
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };

  const toggleable = record.status === TokenStatus.enabled || record.status === TokenStatus.disabled;
  const enabled = record.status === TokenStatus.enabled;
  return (
    <>
      <RowActions
        actions={[
          {
            key: 'copy',
            label: 'app.token.copy',
            icon: <ContentCopyIcon fontSize="small" />,
            onClick: (anchor) => setMenu({ anchor, chat: false }),
          },
          {
            key: 'chat',
            label: 'app.token.chat',
            icon: <ChatIcon fontSize="small" />,
            onClick: (anchor) => setMenu({ anchor, chat: true }),
          },
          ...(toggleable
            ? [
                {
                  key: 'toggle',
                  label: enabled ? 'app.token.disable' : 'app.token.enable',
                  icon: enabled ? <BlockIcon fontSize="small" /> : <CheckCircleOutlineIcon fontSize="small" />,
                  color: enabled ? ('warning' as const) : ('success' as const),
                  onClick: toggle,
                },
              ]
            : []),
          {
            key: 'edit',
            label: 'ra.action.edit',
            icon: <EditIcon fontSize="small" />,
            onClick: () => void navigate(`/token/edit/${record.id}`),
          },
          {
            key: 'delete',
            label: 'ra.action.delete',
            icon: <DeleteIcon fontSize="small" />,
            color: 'error',
            confirm: 'app.token.delete_title',
            confirmArgs: { name: record.name },
            onClick: () => void remove(),
            more: true,
          },
        ]}
      />
      <Menu anchorEl={menu?.anchor} open={Boolean(menu)} onClose={() => setMenu(null)} onClick={(event) => event.stopPropagation()}>
        {CLIENT_TARGETS.filter((target) => (menu?.chat ? target.chat : true)).map((target) => (
          <MenuItem key={target.id} onClick={() => void chooseTarget(target)}>
            {target.label}
          </MenuItem>
        ))}
      </Menu>
    </>
  );
}

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
import { useDataProvider, useRecordContext, useRefresh, useUpdate, type RaRecord } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { TokenStatus } from '../../../common/roles';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { useStatus } from '../../layout/status';
import { errorMessage } from '../../dataProvider/errorMessage';
import { useCopy } from '../shared/useCopy';
import { RowActions } from '../shared/RowActions';
import { CLIENT_TARGETS, type ClientTarget } from './clientTargets';

/** A token's status switch (enabled ↔ disabled) and its deletion, each told in a notice. */
function useTokenChanges() {
  const notice = useNotice();
  const refresh = useRefresh();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const [update] = useUpdate();

  const toggle = (record: RaRecord) => {
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

  const remove = async (record: RaRecord) => {
    try {
      await dataProvider.delete('token', { id: record.id, previousData: record });
      notice('app.common.operation_success', 'success');
      refresh();
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  return { toggle, remove };
}

/** The clients a key can be copied for (or, for chat, opened in), under the button that asked. */
function ClientTargetMenu({
  menu,
  close,
  choose,
}: {
  menu: { anchor: HTMLElement; chat: boolean } | null;
  close: () => void;
  choose: (target: ClientTarget) => void;
}) {
  return (
    <Menu anchorEl={menu?.anchor} open={Boolean(menu)} onClose={close} onClick={(event) => event.stopPropagation()}>
      {CLIENT_TARGETS.filter((target) => (menu?.chat ? target.chat : true)).map((target) => (
        <MenuItem key={target.id} onClick={() => choose(target)}>
          {target.label}
        </MenuItem>
      ))}
    </Menu>
  );
}

/** The actions of one token row, with the menu of client targets that copy and chat open. */
export function TokenActions(_: { label?: string }) {
  const record = useRecordContext();
  const navigate = useNavigate();
  const notice = useNotice();
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const { status } = useStatus();
  const copy = useCopy();
  const { toggle, remove } = useTokenChanges();
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
                  onClick: () => toggle(record),
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
            onClick: () => void remove(record),
            more: true,
          },
        ]}
      />
      <ClientTargetMenu menu={menu} close={() => setMenu(null)} choose={(target) => void chooseTarget(target)} />
    </>
  );
}

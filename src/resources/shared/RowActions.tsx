// A row's actions as compact icon buttons (each with a tooltip and an
// aria-label), the rest behind a "more" menu; actions that destroy ask first.
// Row clicks open the record, so clicks here stay here.
import MoreVertIcon from '@mui/icons-material/MoreVert';
import {
  Box,
  Button,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  ListItemIcon,
  ListItemText,
  Menu,
  MenuItem,
  Tooltip,
} from '@mui/material';
import { useState, type MouseEvent, type ReactNode } from 'react';
import { useTranslate } from 'react-admin';

export interface RowAction {
  /** Stable key, also the test id (`row-action-<key>`). */
  key: string;
  /** Translation key (or text) of the tooltip, aria-label and menu entry. */
  label: string;
  labelArgs?: Record<string, unknown>;
  icon: ReactNode;
  onClick: (anchor: HTMLElement) => void;
  color?: 'primary' | 'error' | 'warning' | 'success' | 'inherit';
  disabled?: boolean;
  loading?: boolean;
  /** Translation key of a confirmation title: the action runs only after "Confirm". */
  confirm?: string;
  confirmArgs?: Record<string, unknown>;
  /** Shown in the "more" menu rather than as an icon button. */
  more?: boolean;
}

const stop = (event: MouseEvent) => event.stopPropagation();

type Confirming = { action: RowAction; anchor: HTMLElement } | null;

/** "Are you sure?" before an action that asks first; Confirm runs it at the button it came from. */
function ConfirmDialog({ confirming, close }: { confirming: Confirming; close: () => void }) {
  const translate = useTranslate();
  return (
    <Dialog open={Boolean(confirming)} onClose={close} onClick={stop}>
      <DialogTitle>{confirming ? translate(confirming.action.confirm!, confirming.action.confirmArgs) : ''}</DialogTitle>
      <DialogContent>{translate('ra.message.are_you_sure')}</DialogContent>
      <DialogActions>
        <Button onClick={close}>{translate('ra.action.cancel')}</Button>
        <Button
          color={!confirming?.action.color || confirming.action.color === 'inherit' ? 'primary' : confirming.action.color}
          variant="contained"
          disableElevation
          onClick={() => {
            const current = confirming;
            close();
            current?.action.onClick(current.anchor);
          }}
        >
          {translate('ra.action.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/** A row's actions: icon buttons, then a "more" menu; an action with `confirm` asks first. */
export function RowActions({ actions }: { actions: RowAction[] }) {
  const translate = useTranslate();
  const [menu, setMenu] = useState<HTMLElement | null>(null);
  const [confirming, setConfirming] = useState<Confirming>(null);
  const run = (action: RowAction, anchor: HTMLElement) => {
    if (action.confirm) setConfirming({ action, anchor });
    else action.onClick(anchor);
  };
  const shown = actions.filter((action) => !action.more);
  const hidden = actions.filter((action) => action.more);
  return (
    <Box onClick={stop} sx={{ display: 'inline-flex', alignItems: 'center', flexWrap: 'nowrap' }}>
      {shown.map((action) => {
        const label = translate(action.label, action.labelArgs);
        return (
          <Tooltip key={action.key} title={label}>
            {/* a span keeps the tooltip on a disabled button */}
            <span>
              <IconButton
                size="small"
                aria-label={label}
                color={action.color === 'inherit' ? 'default' : (action.color ?? 'primary')}
                disabled={action.disabled || action.loading}
                data-testid={`row-action-${action.key}`}
                onClick={(event) => run(action, event.currentTarget)}
              >
                {action.loading ? <CircularProgress size={18} /> : action.icon}
              </IconButton>
            </span>
          </Tooltip>
        );
      })}
      {hidden.length > 0 && (
        <>
          <Tooltip title={translate('app.lists.more')}>
            <IconButton
              size="small"
              aria-label={translate('app.lists.more')}
              aria-haspopup="menu"
              data-testid="row-action-more"
              onClick={(event) => setMenu(event.currentTarget)}
            >
              <MoreVertIcon fontSize="small" />
            </IconButton>
          </Tooltip>
          <Menu anchorEl={menu} open={Boolean(menu)} onClose={() => setMenu(null)} onClick={stop}>
            {hidden.map((action) => (
              <MenuItem
                key={action.key}
                disabled={action.disabled || action.loading}
                data-testid={`row-action-${action.key}`}
                onClick={() => {
                  const anchor = menu!;
                  setMenu(null);
                  run(action, anchor);
                }}
                sx={
                  action.color && action.color !== 'inherit' && action.color !== 'primary' ? { color: `${action.color}.main` } : undefined
                }
              >
                <ListItemIcon sx={{ color: 'inherit' }}>{action.icon}</ListItemIcon>
                <ListItemText>{translate(action.label, action.labelArgs)}</ListItemText>
              </MenuItem>
            ))}
          </Menu>
        </>
      )}
      <ConfirmDialog confirming={confirming} close={() => setConfirming(null)} />
    </Box>
  );
}

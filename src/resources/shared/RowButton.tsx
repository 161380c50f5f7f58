import { Button, Dialog, DialogActions, DialogContent, DialogTitle } from '@mui/material';
import { useState, type ReactNode } from 'react';
import { useTranslate } from 'react-admin';

/** A small row action that may ask "are you sure?" first. */
export function RowButton({
  label,
  onClick,
  color = 'primary',
  disabled,
  confirm,
  icon,
  loading,
}: {
  label: string;
  onClick: () => void;
  color?: 'primary' | 'error' | 'warning' | 'success' | 'inherit';
  disabled?: boolean;
  confirm?: string;
  icon?: ReactNode;
  /** A spinner in place of the icon while the action runs (also disables the button). */
  loading?: boolean;
}) {
  const translate = useTranslate();
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button
        size="small"
        color={color}
        disabled={disabled}
        loading={loading}
        loadingPosition={loading === undefined ? undefined : 'start'}
        startIcon={icon}
        onClick={() => (confirm ? setOpen(true) : onClick())}
      >
        {translate(label)}
      </Button>
      {confirm && (
        <Dialog open={open} onClose={() => setOpen(false)}>
          <DialogTitle>{translate(confirm)}</DialogTitle>
          <DialogContent>{translate('ra.message.are_you_sure')}</DialogContent>
          <DialogActions>
            <Button onClick={() => setOpen(false)}>{translate('ra.action.cancel')}</Button>
            <Button
              color={color === 'inherit' ? 'primary' : color}
              variant="contained"
              disableElevation
              onClick={() => {
                setOpen(false);
                onClick();
              }}
            >
              {translate('ra.action.confirm')}
            </Button>
          </DialogActions>
        </Dialog>
      )}
    </>
  );
}

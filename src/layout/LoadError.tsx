// What a list or page shows when its data could not be loaded (the API is
// down, the network is gone): a message and a Retry button, never a
// skeleton that waits forever.
import RefreshIcon from '@mui/icons-material/Refresh';
import { Alert, AlertTitle, Button } from '@mui/material';
import { useEditContext, useListContext, useTranslate } from 'react-admin';

export function LoadError({ onRetry, detail }: { onRetry: () => void; detail?: string }) {
  const translate = useTranslate();
  return (
    <Alert
      severity="error"
      role="alert"
      sx={{ m: 2 }}
      action={
        <Button color="inherit" size="small" startIcon={<RefreshIcon />} onClick={onRetry}>
          {translate('app.load_error.retry')}
        </Button>
      }
    >
      <AlertTitle>{translate('app.load_error.title')}</AlertTitle>
      {detail ? translate(detail, { _: detail }) : translate('app.load_error.help')}
    </Alert>
  );
}

/** A list's error state (react-admin's `<List error>`): retries the list's query. */
export function ListLoadError() {
  const { refetch } = useListContext();
  return <LoadError onRetry={() => void refetch()} />;
}

/** A record form's error state (react-admin's `<Edit error>`): loads the record again. */
export function EditLoadError() {
  const { refetch } = useEditContext();
  return <LoadError onRetry={() => void refetch()} />;
}

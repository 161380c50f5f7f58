// /webhook/create: the form; after saving, the secret is shown once in a
// dialog (the server never sends it again), then the list.
import { Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, TextField as MuiTextField } from '@mui/material';
import { useState } from 'react';
import { Create, SimpleForm, useRedirect, useTranslate, type RaRecord } from 'react-admin';
import { TitledPage } from '../shared/TitledPage';
import { WebhookInputs, webhookTransform } from './WebhookInputs';

export function WebhookCreate() {
  const translate = useTranslate();
  const redirect = useRedirect();
  const [secret, setSecret] = useState<string>();
  return (
    <TitledPage title="webhooks.create_title">
      <Create
        resource="webhook"
        title="webhooks.create_title"
        transform={webhookTransform}
        mutationOptions={{ onSuccess: (created: RaRecord) => setSecret(String(created.secret ?? '')) }}
      >
        <SimpleForm defaultValues={{ enabled: true, events: [] }}>
          <WebhookInputs />
        </SimpleForm>
      </Create>
      <Dialog open={secret !== undefined} aria-labelledby="webhook-secret-title">
        <DialogTitle id="webhook-secret-title">{translate('webhooks.secret_dialog.title')}</DialogTitle>
        <DialogContent>
          <DialogContentText sx={{ mb: 2 }}>{translate('webhooks.secret_dialog.body')}</DialogContentText>
          <MuiTextField
            value={secret ?? ''}
            label={translate('webhooks.fields.secret')}
            fullWidth
            slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'webhook-secret' } }}
            onFocus={(event) => event.target.select()}
          />
        </DialogContent>
        <DialogActions>
          <Button variant="contained" onClick={() => redirect('list', 'webhook')}>
            {translate('webhooks.secret_dialog.done')}
          </Button>
        </DialogActions>
      </Dialog>
    </TitledPage>
  );
}

// /token/add. The server returns the new key once; it is shown with a copy button.
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { useState } from 'react';
import { Create, SimpleForm, useTranslate } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { useNotice } from '../../layout/notice';
import { copyText } from '../shared/clipboard';
import { FormPage } from '../shared/FormPage';
import { TokenInputs, tokenTransform } from './TokenInputs';
import { TokenSpendsInput } from './TokenSpendsInput';

export const DEFAULT_TOKEN_QUOTA = 500000;

export function TokenCreate() {
  const translate = useTranslate();
  const notice = useNotice();
  const navigate = useNavigate();
  const [createdKey, setCreatedKey] = useState('');
  const copy = async () => {
    if (await copyText(`sk-${createdKey}`)) notice('app.common.copied', 'success');
    else notice('app.errors.copy_manually', 'warning', { value: `sk-${createdKey}` });
  };
  return (
    <FormPage title="app.token.create_title">
      <Create
        resource="token"
        title="app.token.create_title"
        transform={tokenTransform}
        mutationOptions={{
          onSuccess: (data: { key?: string } & Record<string, unknown>) => {
            notice('app.token.created', 'success');
            setCreatedKey(data.key ?? '');
          },
        }}
      >
        <SimpleForm
          defaultValues={{ remain_quota: DEFAULT_TOKEN_QUOTA, unlimited_quota: false, expiry_text: '' }}
          warnWhenUnsavedChanges={!createdKey}
        >
          <TokenSpendsInput />
          <TokenInputs />
        </SimpleForm>
      </Create>
      <Dialog open={Boolean(createdKey)} maxWidth="sm" fullWidth aria-labelledby="token-created-title">
        <DialogTitle id="token-created-title">{translate('app.token.created_title')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" sx={{ mb: 2 }}>
            {translate('app.token.copy_now')}
          </Typography>
          <TextField value={`sk-${createdKey}`} fullWidth slotProps={{ input: { readOnly: true, sx: { fontFamily: 'monospace' } } }} />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => void copy()}>{translate('app.token.copy')}</Button>
          <Button variant="contained" disableElevation onClick={() => void navigate('/token')}>
            {translate('app.token.done')}
          </Button>
        </DialogActions>
      </Dialog>
    </FormPage>
  );
}

// /user/edit: the caller's own account (username, display name, password;
// a new password needs the current one, and signs out the other sessions).
// The bound GitHub and WeChat accounts and the e-mail address are shown
// read-only: they change only by binding, under Settings. A budget an admin
// set on the account is shown with what was spent of it this period.
import { Button, Card, CardContent, Stack, TextField, Typography } from '@mui/material';
import { useEffect, useState, type FormEvent } from 'react';
import { Authenticated, RecordContextProvider, useTranslate } from 'react-admin';
import { storeUser, readStoredUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { errorMessage } from '../dataProvider/errorMessage';
import { BudgetField } from '../resources/shared/BudgetField';
import type { UserRecord } from '../../common/records';

/** The budget an admin set on the account, with what was spent of it this period. */
function OwnBudget({ user }: { user: UserRecord }) {
  const translate = useTranslate();
  return (
    <RecordContextProvider value={user}>
      <Typography component="div" variant="body2" data-testid="own-budget">
        <Typography component="span" variant="body2" sx={{ color: 'text.secondary', mr: 1 }}>
          {translate('app.budget.own')}
        </Typography>
        <BudgetField />
      </Typography>
    </RecordContextProvider>
  );
}

/** The bound GitHub and WeChat accounts and the e-mail address, read-only. */
function BoundAccounts({ bound }: { bound: Record<'github_id' | 'wechat_id' | 'email', string> }) {
  const translate = useTranslate();
  return (
    <>
      {(['github_id', 'wechat_id', 'email'] as const).map((field) => (
        <TextField
          key={field}
          name={field}
          label={translate(`resources.user.fields.${field}`)}
          value={bound[field]}
          slotProps={{ input: { readOnly: true } }}
          fullWidth
        />
      ))}
    </>
  );
}

function SelfEdit() {
  const translate = useTranslate();
  const notice = useNotice();
  const [form, setForm] = useState({ username: '', display_name: '', password: '', original_password: '' });
  const [bound, setBound] = useState({ github_id: '', wechat_id: '', email: '' });
  const [budget, setBudget] = useState<UserRecord | undefined>();
  useEffect(() => {
    dataProvider
      .getSelf()
      .then((user) => {
        setForm({ username: user.username, display_name: user.display_name, password: '', original_password: '' });
        setBound({ github_id: user.github_id ?? '', wechat_id: user.wechat_id ?? '', email: user.email ?? '' });
        if (user.budget_period) setBudget(user);
      })
      .catch((error) => notice(errorMessage(error), 'error'));
  }, [notice]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await dataProvider.updateSelf(form.password ? form : { username: form.username, display_name: form.display_name });
      const stored = readStoredUser();
      if (stored) storeUser({ ...stored, username: form.username, display_name: form.display_name });
      setForm((previous) => ({ ...previous, password: '', original_password: '' }));
      notice('app.user_edit.updated', 'success');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  const set = (field: keyof typeof form) => (event: { target: { value: string } }) =>
    setForm((previous) => ({ ...previous, [field]: event.target.value }));
  return (
    <Card variant="outlined" sx={{ borderRadius: 3, maxWidth: 560, mx: 'auto' }}>
      <CardContent sx={{ p: { xs: 3, sm: 4 } }}>
        <Typography variant="h5" component="h1" sx={{ fontWeight: 700, mb: 3 }}>
          {translate('app.user_edit.title')}
        </Typography>
        <Stack component="form" spacing={2} onSubmit={(event) => void submit(event)} noValidate>
          <TextField name="username" label={translate('app.auth.username')} value={form.username} onChange={set('username')} fullWidth />
          <TextField
            name="display_name"
            label={translate('app.user_edit.display_name')}
            value={form.display_name}
            onChange={set('display_name')}
            fullWidth
          />
          <TextField
            name="password"
            type="password"
            label={translate('app.user_edit.new_password')}
            value={form.password}
            onChange={set('password')}
            autoComplete="new-password"
            fullWidth
          />
          <TextField
            name="original_password"
            type="password"
            label={translate('app.user_edit.current_password')}
            helperText={translate('app.user_edit.current_password_help')}
            value={form.original_password}
            onChange={set('original_password')}
            autoComplete="current-password"
            fullWidth
          />
          <BoundAccounts bound={bound} />
          {budget ? <OwnBudget user={budget} /> : null}
          <Button type="submit" variant="contained" disableElevation>
            {translate('app.common.save')}
          </Button>
        </Stack>
      </CardContent>
    </Card>
  );
}

export default function UserSelfEditPage() {
  return (
    <Authenticated>
      <SelfEdit />
    </Authenticated>
  );
}

// /user/add creates a user (always role 1 on the server); /user/edit/:id is
// the admin edit, which also exposes group, quota, limits and a budget per day,
// week or month (and, for root, a reset of the user's two-factor sign-in).
import { Box } from '@mui/material';
import { Create, Edit, NumberInput, PasswordInput, required, SimpleForm, TextInput } from 'react-admin';
import { EditLoadError } from '../../layout/LoadError';
import { FormPage } from '../shared/FormPage';
import { BudgetInputs, budgetValue } from '../shared/BudgetField';
import { QuotaInput, wholeQuota } from '../shared/QuotaInput';
import { rateLimitValue } from '../shared/RateLimitsField';
import { textOf } from '../shared/textOf';
import { useNavigate, useParams } from 'react-router-dom';
import { useNotice } from '../../layout/notice';
import { GroupInput } from './GroupInput';
import { RootTwoFactorReset } from './UserTwoFactorReset';

const frame = { maxWidth: 560 } as const;
const usernameValidators = [required('app.validation.username_required')];
const passwordValidators = [required('app.validation.password_required')];
const quotaValidators = [wholeQuota(0, 'app.validation.quota_whole')];

export function UserCreate() {
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <FormPage title="app.page_title.user_add">
      <Create
        resource="user"
        transform={(values: Record<string, unknown>) => ({
          username: textOf(values.username).trim(),
          display_name: textOf(values.display_name).trim(),
          password: values.password,
        })}
        mutationOptions={{
          onSuccess: () => {
            notice('app.user.created', 'success');
            void navigate('/user');
          },
        }}
      >
        <SimpleForm warnWhenUnsavedChanges>
          <TextInput source="username" validate={usernameValidators} sx={frame} fullWidth />
          <TextInput source="display_name" sx={frame} fullWidth />
          <PasswordInput source="password" validate={passwordValidators} sx={frame} fullWidth />
        </SimpleForm>
      </Create>
    </FormPage>
  );
}

export function UserEdit() {
  const { id } = useParams();
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <FormPage title="app.page_title.user_edit" resource="user" id={id} nameOf={(record) => record.username}>
      <Edit
        resource="user"
        id={id}
        mutationMode="pessimistic"
        error={<EditLoadError />}
        transform={(values: Record<string, unknown>) => ({
          id: values.id,
          username: textOf(values.username).trim(),
          display_name: textOf(values.display_name).trim(),
          password: values.password ? textOf(values.password) : '',
          group: textOf(values.group ?? 'default').trim() || 'default',
          quota: Number.parseInt(textOf(values.quota ?? 0), 10) || 0,
          concurrency_limit: Number.parseInt(textOf(values.concurrency_limit ?? 0), 10) || 0,
          rpm_limit: rateLimitValue(values.rpm_limit),
          tpm_limit: rateLimitValue(values.tpm_limit),
          ...budgetValue(values),
        })}
        mutationOptions={{
          onSuccess: () => {
            notice('app.user_edit.updated', 'success');
            void navigate('/user');
          },
        }}
      >
        <SimpleForm warnWhenUnsavedChanges>
          <Box sx={{ width: '100%', ...frame }}>
            <TextInput source="username" validate={usernameValidators} fullWidth />
            <TextInput source="display_name" fullWidth />
            <PasswordInput source="password" label="app.user_edit.new_password" fullWidth />
            <GroupInput />
            <QuotaInput source="quota" validate={quotaValidators} />
            <NumberInput
              source="concurrency_limit"
              label="app.user_edit.concurrency_limit"
              helperText="app.user_edit.concurrency_limit_help"
              step={1}
              min={-1}
              fullWidth
            />
            <NumberInput
              source="rpm_limit"
              label="app.user_edit.rpm_limit"
              helperText="app.user_edit.rate_limit_help"
              step={1}
              min={0}
              fullWidth
            />
            <NumberInput
              source="tpm_limit"
              label="app.user_edit.tpm_limit"
              helperText="app.user_edit.rate_limit_help"
              step={1}
              min={0}
              fullWidth
            />
            <BudgetInputs help="app.user_edit.budget_help" />
            <TextInput source="email" disabled fullWidth />
            <TextInput source="github_id" disabled fullWidth />
            <TextInput source="wechat_id" disabled fullWidth />
          </Box>
        </SimpleForm>
      </Edit>
      <RootTwoFactorReset id={id} />
    </FormPage>
  );
}

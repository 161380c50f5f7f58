// /user/add creates a user (always role 1 on the server) in one step: group,
// quota (the quota for new users filled in) and budget with the sign-in;
// /user/edit/:id is the admin edit, which also exposes limits (and, for root,
// a reset of the user's two-factor sign-in).
import { Box } from '@mui/material';
import { useEffect } from 'react';
import { Create, Edit, NumberInput, PasswordInput, required, SimpleForm, TextInput, useDataProvider } from 'react-admin';
import { useFormContext } from 'react-hook-form';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { EditLoadError } from '../../layout/LoadError';
import { FormPage } from '../shared/FormPage';
import { BudgetInputs, budgetValue } from '../shared/BudgetField';
import { QuotaInput, wholeQuota } from '../shared/QuotaInput';
import { rateLimitValue } from '../shared/RateLimitsField';
import { textOf } from '../shared/textOf';
import { useNavigate, useParams } from 'react-router-dom';
import { useNotice } from '../../layout/notice';
import { GroupInput, GroupSelect } from './GroupInput';
import { RootTwoFactorReset } from './UserTwoFactorReset';

const frame = { maxWidth: 560 } as const;
const usernameValidators = [required('app.validation.username_required')];
const passwordValidators = [required('app.validation.password_required')];
const quotaValidators = [wholeQuota(0, 'app.validation.quota_whole')];

/** The create's form values as the server takes them: an empty quota is null (the server gives the new-user quota). */
export function newUserValue(values: Record<string, unknown>) {
  const quota = values.quota === undefined || values.quota === null || values.quota === '' ? null : Number(values.quota);
  return {
    username: textOf(values.username).trim(),
    display_name: textOf(values.display_name).trim(),
    password: values.password,
    group: textOf(values.group ?? 'default').trim() || 'default',
    quota: quota !== null && Number.isSafeInteger(quota) ? quota : null,
    ...budgetValue(values),
  };
}

/**
 * The new user's quota, filled in with the quota for new users (the
 * QuotaForNewUser option) once it loads, unless typed over: what the user
 * would get is what the form shows. Left empty, the server applies it.
 */
function NewUserQuotaInput() {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const { getFieldState, resetField } = useFormContext();
  useEffect(() => {
    let live = true;
    dataProvider.getOptions().then(
      (rows) => {
        const quota = Number(rows.find((row) => row.key === 'QuotaForNewUser')?.value);
        if (live && Number.isSafeInteger(quota) && quota >= 0 && !getFieldState('quota').isDirty)
          resetField('quota', { defaultValue: quota });
      },
      // not loaded: the field stays empty and the server applies the quota for new users itself
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [dataProvider, getFieldState, resetField]);
  return <QuotaInput source="quota" validate={quotaValidators} help="app.user.quota_help" />;
}

/** One step: sign-in, group, quota and budget, so a new user can work at once. */
export function UserCreate() {
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <FormPage title="app.page_title.user_add">
      <Create
        resource="user"
        transform={newUserValue}
        mutationOptions={{
          onSuccess: () => {
            notice('app.user.created', 'success');
            void navigate('/user');
          },
        }}
      >
        <SimpleForm warnWhenUnsavedChanges defaultValues={{ group: 'default', budget_period: '' }}>
          <Box sx={{ width: '100%', ...frame }}>
            <TextInput source="username" validate={usernameValidators} fullWidth />
            <TextInput source="display_name" fullWidth />
            <PasswordInput source="password" validate={passwordValidators} fullWidth />
            <GroupSelect />
            <NewUserQuotaInput />
            <BudgetInputs help="app.user_edit.budget_help" />
          </Box>
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

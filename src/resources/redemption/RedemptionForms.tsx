// /redemption/add creates `count` codes and downloads them as <name>.txt;
// /redemption/edit/:id changes the name and quota.
import { Box } from '@mui/material';
import { Edit, NumberInput, required, SaveButton, SimpleForm, TextInput, Toolbar, useDataProvider, useTranslate } from 'react-admin';
import { EditLoadError } from '../../layout/LoadError';
import { FormPage } from '../shared/FormPage';
import { QuotaInput, wholeQuota } from '../shared/QuotaInput';
import { textOf } from '../shared/textOf';
import { useNavigate, useParams } from 'react-router-dom';
import type { SwitchboardDataProvider } from '../../dataProvider';
import { useNotice } from '../../layout/notice';
import { errorMessage } from '../../dataProvider/errorMessage';

export const DEFAULT_REDEMPTION_QUOTA = 100000;

/** Saves the keys, one per line, as a text file named after the batch. */
export function downloadKeys(name: string, keys: string[]): void {
  const blob = new Blob([`${keys.join('\n')}\n`], { type: 'text/plain;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `${name}.txt`;
  document.body.appendChild(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

const toInteger = (value: unknown) => Number.parseInt(textOf(value), 10);

// name required on create; quota and count whole numbers (the server's limits: quota above 0, 1 to 100 codes)
const nameValidators = [required('app.validation.name_required')];
const quotaValidators = [required('app.validation.quota_positive'), wholeQuota(1, 'app.validation.quota_positive')];
const validCount = (value: unknown) => {
  const count = Number(value);
  return Number.isInteger(count) && count >= 1 && count <= 100 ? undefined : 'app.validation.count_range';
};

export function RedemptionCreate() {
  const dataProvider = useDataProvider<SwitchboardDataProvider>();
  const notice = useNotice();
  const navigate = useNavigate();
  const translate = useTranslate();
  const submit = async (values: Record<string, unknown>) => {
    const name = textOf(values.name).trim();
    try {
      const keys = await dataProvider.createRedemptions({ name, quota: toInteger(values.quota), count: toInteger(values.count) });
      downloadKeys(name, keys);
      notice('app.redemption.created', 'success', { count: keys.length });
      void navigate('/redemption');
    } catch (error) {
      notice(errorMessage(error), 'error');
    }
  };
  return (
    <FormPage title="app.page_title.redemption_add">
      <Box sx={{ bgcolor: 'background.paper', borderRadius: 3, border: 1, borderColor: 'divider' }}>
        <SimpleForm
          onSubmit={submit}
          defaultValues={{ quota: DEFAULT_REDEMPTION_QUOTA, count: 1 }}
          warnWhenUnsavedChanges
          toolbar={
            <Toolbar>
              <SaveButton alwaysEnable label={translate('app.redemption.create')} />
            </Toolbar>
          }
        >
          <TextInput source="name" resource="redemption" validate={nameValidators} sx={{ maxWidth: 560 }} fullWidth />
          <QuotaInput source="quota" resource="redemption" validate={quotaValidators} sx={{ maxWidth: 560 }} />
          <NumberInput source="count" resource="redemption" step={1} validate={validCount} sx={{ maxWidth: 560 }} fullWidth />
        </SimpleForm>
      </Box>
    </FormPage>
  );
}

export function RedemptionEdit() {
  const { id } = useParams();
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <FormPage title="app.page_title.redemption_edit" resource="redemption" id={id}>
      <Edit
        resource="redemption"
        id={id}
        mutationMode="pessimistic"
        error={<EditLoadError />}
        transform={(values: Record<string, unknown>) => ({
          id: values.id,
          name: textOf(values.name).trim(),
          quota: toInteger(values.quota),
        })}
        mutationOptions={{
          onSuccess: () => {
            notice('app.redemption.updated', 'success');
            void navigate('/redemption');
          },
        }}
      >
        <SimpleForm warnWhenUnsavedChanges>
          <TextInput source="name" validate={nameValidators} sx={{ maxWidth: 560 }} fullWidth />
          <QuotaInput source="quota" validate={quotaValidators} sx={{ maxWidth: 560 }} />
        </SimpleForm>
      </Edit>
    </FormPage>
  );
}

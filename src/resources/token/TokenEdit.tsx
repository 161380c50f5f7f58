// /token/edit/:id
import { Edit, SimpleForm, useRecordContext, type RaRecord } from 'react-admin';
import type { TokenRecord } from '../../../common/records';
import { useNavigate, useParams } from 'react-router-dom';
import { useNotice } from '../../layout/notice';
import { EditLoadError } from '../../layout/LoadError';
import { FormPage } from '../shared/FormPage';
import { expiryText, TokenInputs, tokenTransform } from './TokenInputs';

function TokenEditForm() {
  const record = useRecordContext<RaRecord & Pick<TokenRecord, 'expired_time'> & { models?: string | null; allowed_ips?: string | null }>();
  if (!record) return null;
  return (
    <SimpleForm
      record={{
        ...record,
        expiry_text: expiryText(record.expired_time),
        models: record.models ?? '',
        allowed_ips: record.allowed_ips ?? '',
      }}
      warnWhenUnsavedChanges
    >
      <TokenInputs />
    </SimpleForm>
  );
}

export function TokenEdit() {
  const { id } = useParams();
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <FormPage title="app.token.edit_title" resource="token" id={id}>
      <Edit
        resource="token"
        id={id}
        title="app.token.edit_title"
        mutationMode="pessimistic"
        error={<EditLoadError />}
        transform={tokenTransform}
        mutationOptions={{
          onSuccess: () => {
            notice('app.token.updated', 'success');
            void navigate('/token');
          },
        }}
      >
        <TokenEditForm />
      </Edit>
    </FormPage>
  );
}

// /channel/edit/:id. The key is write-only: left empty, the stored key stays.
import { useMemo } from 'react';
import { Edit, SimpleForm, useRecordContext } from 'react-admin';
import { useNavigate, useParams } from 'react-router-dom';
import { EditLoadError } from '../../layout/LoadError';
import { useNotice } from '../../layout/notice';
import { FormPage } from '../shared/FormPage';
import { ChannelInputs, channelFormValues, channelTransform, validateChannelForm } from './ChannelInputs';

function ChannelEditForm() {
  const record = useRecordContext();
  // a changed base URL or type needs the key again (the server refuses it otherwise)
  const validateEdit = useMemo(() => validateChannelForm(false, record as { base_url?: unknown; type?: unknown } | undefined), [record]);
  if (!record) return null;
  return (
    <SimpleForm record={channelFormValues(record)} validate={validateEdit} warnWhenUnsavedChanges>
      <ChannelInputs />
    </SimpleForm>
  );
}

export function ChannelEdit() {
  const { id } = useParams();
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <FormPage title="app.channel.edit_title" resource="channel" id={id}>
      <Edit
        resource="channel"
        id={id}
        title="app.channel.edit_title"
        mutationMode="pessimistic"
        error={<EditLoadError />}
        transform={channelTransform}
        mutationOptions={{
          onSuccess: () => {
            notice('app.channel.updated', 'success');
            void navigate('/channel');
          },
        }}
      >
        <ChannelEditForm />
      </Edit>
    </FormPage>
  );
}

// /channel/edit/:id. The key is write-only: left empty, the stored key stays.
// A multi-key channel lists its keys (masked) under the form, each with its own actions.
import { useMemo } from 'react';
import { Edit, SimpleForm, useRecordContext } from 'react-admin';
import { useNavigate, useParams } from 'react-router-dom';
import { EditLoadError } from '../../layout/LoadError';
import { useNotice } from '../../layout/notice';
import { FormPage } from '../shared/FormPage';
import { ChannelInputs, channelFormValues, channelTransform, validateChannelForm } from './ChannelInputs';
import { ChannelKeyList } from './ChannelKeyList';

function ChannelEditForm() {
  const record = useRecordContext();
  // a changed base URL or type needs the key again (the server refuses it otherwise)
  const validateEdit = useMemo(() => validateChannelForm(false, record as { base_url?: unknown; type?: unknown } | undefined), [record]);
  if (!record) return null;
  return (
    <>
      <SimpleForm record={channelFormValues(record)} validate={validateEdit} warnWhenUnsavedChanges>
        <ChannelInputs />
      </SimpleForm>
      {record.multi_key === true && <ChannelKeyList channelId={record.id} />}
    </>
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

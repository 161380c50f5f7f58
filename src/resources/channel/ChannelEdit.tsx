// /channel/edit/:id. The key is write-only: left empty, the stored key stays.
import { useMemo } from 'react';
import { Edit, SimpleForm, useRecordContext } from 'react-admin';
import { useNavigate, useParams } from 'react-router-dom';
import { useNotice } from '../../layout/notice';
import { TitledPage } from '../shared/TitledPage';
import { ChannelInputs, channelFormValues, channelTransform, validateChannelForm } from './ChannelInputs';

function ChannelEditForm() {
  const record = useRecordContext();
  // a changed base URL or type needs the key again (the server refuses it otherwise)
  const validateEdit = useMemo(() => validateChannelForm(false, record as { base_url?: unknown; type?: unknown } | undefined), [record]);
  if (!record) return null;
  return (
    <SimpleForm record={channelFormValues(record)} validate={validateEdit}>
      <ChannelInputs />
    </SimpleForm>
  );
}

export function ChannelEdit() {
  const { id } = useParams();
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <TitledPage title="app.channel.edit_title">
      <Edit
        resource="channel"
        id={id}
        title="app.channel.edit_title"
        mutationMode="pessimistic"
        transform={channelTransform}
        mutationOptions={{
          onSuccess: () => {
            notice('app.channel.updated', 'success');
            navigate('/channel');
          },
        }}
      >
        <ChannelEditForm />
      </Edit>
    </TitledPage>
  );
}

// /channel/add. With batch mode on, each line of the key field becomes its own channel.
import { Create, SimpleForm } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { useNotice } from '../../layout/notice';
import { TitledPage } from '../shared/TitledPage';
import { CHANNEL_DEFAULTS, ChannelInputs, channelTransform, validateChannelForm } from './ChannelInputs';

const validateCreate = validateChannelForm(true);

export function ChannelCreate() {
  const notice = useNotice();
  const navigate = useNavigate();
  return (
    <TitledPage title="app.channel.create_title">
      <Create
        resource="channel"
        title="app.channel.create_title"
        transform={channelTransform}
        mutationOptions={{
          onSuccess: (data: { created?: { ids?: number[] } } & Record<string, unknown>) => {
            notice('app.channel.created', 'success', { smart_count: data.created?.ids?.length ?? 1 });
            void navigate('/channel');
          },
        }}
      >
        <SimpleForm defaultValues={CHANNEL_DEFAULTS} validate={validateCreate} warnWhenUnsavedChanges>
          <ChannelInputs creating />
        </SimpleForm>
      </Create>
    </TitledPage>
  );
}

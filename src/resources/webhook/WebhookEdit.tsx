// /webhook/:id: the same fields; the secret stays unless a new one is typed.
import { Edit, SimpleForm } from 'react-admin';
import { TitledPage } from '../shared/TitledPage';
import { WebhookInputs, webhookTransform } from './WebhookInputs';

export function WebhookEdit() {
  return (
    <TitledPage title="webhooks.edit_title">
      <Edit resource="webhook" title="webhooks.edit_title" transform={webhookTransform} mutationMode="pessimistic">
        <SimpleForm>
          <WebhookInputs editing />
        </SimpleForm>
      </Edit>
    </TitledPage>
  );
}

// The fields of the webhook form, shared by Create and Edit. The secret is
// write-only: blank on create means "generate one", blank on edit "keep it".
import { BooleanInput, CheckboxGroupInput, PasswordInput, regex, required, TextInput, type Validator } from 'react-admin';
import { WEBHOOK_EVENTS } from '../../../common/webhooks';

const EVENT_CHOICES = WEBHOOK_EVENTS.map((event) => ({ id: event, name: `webhooks.events.${event}` }));
// ra-core types regex as a function & lodash's MemoizedFunction, and without @types/lodash that type does not resolve
const httpUrl = (regex as (pattern: RegExp, message: string) => Validator)(/^https?:\/\/\S+$/, 'webhooks.validation.url');

export function WebhookInputs({ editing = false }: { editing?: boolean }) {
  return (
    <>
      <TextInput source="name" label="webhooks.fields.name" validate={required()} fullWidth />
      <TextInput source="url" label="webhooks.fields.url" type="url" validate={[required(), httpUrl]} fullWidth />
      <CheckboxGroupInput source="events" label="webhooks.fields.events" choices={EVENT_CHOICES} validate={required()} row={false} />
      <BooleanInput source="enabled" label="webhooks.fields.enabled" />
      <PasswordInput
        source="secret"
        label="webhooks.fields.secret"
        helperText={editing ? 'webhooks.fields.secret_edit_help' : 'webhooks.fields.secret_create_help'}
        autoComplete="new-password"
        fullWidth
      />
    </>
  );
}

/** What goes over the wire: the secret only when one was typed. */
export const webhookTransform = (data: Record<string, unknown>) => {
  const { secret, id: _id, created_time: _created, ...rest } = data;
  return typeof secret === 'string' && secret.trim() ? { ...rest, secret: secret.trim() } : rest;
};

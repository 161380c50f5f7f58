// Azure OpenAI: OpenAI's wire format (bodies and streams pass as bytes) at a
// per-deployment URL with an `api-key` header. Reference:
// https://learn.microsoft.com/azure/ai-services/openai/reference
//
// URL: <base>/openai/deployments/<deployment>/<task>?api-version=<version>,
// the version being the client's `api-version` query, else the channel's
// `other`, else the type's fallback. The deployment is the (mapped) model
// name as Azure's portal names deployments of it: dots removed, and a
// trailing -0301/-0314/-0613 snapshot suffix dropped (one-api's rule, so
// `gpt-3.5-turbo-0613` finds `gpt-35-turbo`; `gpt-4o-mini` stays as it is).
import { findChannelType } from '../../../common/channelTypes';
import { upstreamFailure } from '../shared';
import type { AdaptorCall, ChannelConfig, HttpTarget, Operation, UpstreamAdaptor, UpstreamFailure } from '../types';
import { baseUrlOf, openAiAdaptor, openAiFailure, OPENAI_OPERATION_PATHS } from './openai';

const AZURE_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>([
  'chat',
  'completions',
  'embeddings',
  'images',
  // gpt-image-1's edits; Azure has no dall-e-2, so no variations
  'image_edit',
  'realtime',
]);

/** The deployment a model is served by. */
export function azureDeployment(model: string): string {
  let deployment = model.replace(/\./g, '');
  for (const suffix of ['-0301', '-0314', '-0613']) {
    if (deployment.endsWith(suffix)) deployment = deployment.slice(0, -suffix.length);
  }
  return deployment;
}

/** The api-version a call uses. */
export function azureApiVersion(channel: ChannelConfig, call: Pick<AdaptorCall, 'query'>): string {
  return call.query?.['api-version'] || channel.other || findChannelType(channel.type)?.other?.fallback || '';
}

/**
 * Azure's refusals of a key come as `{"error": {"code": "401", "message":
 * "Access denied due to invalid subscription key or wrong API endpoint..."}}`;
 * a disabled resource as 403 `{"error": {"code": "AccountDisabled" ...}}` (or
 * "SubscriptionNotRegistered"). Everything else reads like OpenAI's.
 */
const AZURE_DEAD_KEY_CODES = new Set(['401', 'AccountDisabled', 'SubscriptionNotRegistered', 'AccountDeprovisioned']);

function azureFailure(status: number, body: string): UpstreamFailure {
  const failure = openAiFailure(status, body);
  if (failure.deadKey) return failure;
  const code = String(failure.code ?? '');
  const invalidKey = status === 401 && (AZURE_DEAD_KEY_CODES.has(code) || /invalid subscription key/i.test(failure.message));
  if (invalidKey || AZURE_DEAD_KEY_CODES.has(code)) return { ...failure, deadKey: true, retryable: true };
  // a deployment the resource does not have is this channel's gap, not the request's fault
  if (code === 'DeploymentNotFound') return { ...failure, retryable: true };
  return failure;
}

export const azureAdaptor: UpstreamAdaptor = {
  ...openAiAdaptor,
  protocol: 'azure',
  docs: 'https://learn.microsoft.com/azure/ai-services/openai/reference',
  operations: AZURE_OPERATIONS,
  // Azure serves Responses under its own preview paths and api-versions, which this relay has not
  // been checked against: a Responses client's request is translated into chat for it
  alsoSpeaks: undefined,

  target(channel: ChannelConfig, call: AdaptorCall): HttpTarget | UpstreamFailure {
    const base = baseUrlOf(channel);
    if (!base)
      return upstreamFailure(500, 'an Azure channel needs its resource endpoint as base URL', {
        code: 'channel_base_url_missing',
        retryable: true,
      });
    const task = OPENAI_OPERATION_PATHS[call.operation].slice(1);
    const version = encodeURIComponent(azureApiVersion(channel, call));
    return {
      url: `${base}/openai/deployments/${encodeURIComponent(azureDeployment(call.model))}/${task}?api-version=${version}`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        'api-key': channel.key,
      },
    };
  },

  failure: azureFailure,
};

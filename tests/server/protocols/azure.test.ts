// The Azure adaptor over recorded fixtures, and its particulars: the
// deployment URL, the api-version choice, the api-key header, Azure's own
// words for a dead key.
import { describe, expect, it } from 'vitest';
import { azureAdaptor, azureDeployment } from '../../../server/protocols/upstream/azure';
import { isUpstreamFailure, type AdaptorCall, type HttpTarget } from '../../../server/protocols/types';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('azure', azureAdaptor);

const channel = { type: 3, key: 'azure-key-0123', baseUrl: 'https://res.openai.azure.com/', other: '2024-10-21' };
const targetOf = (config: typeof channel, call: AdaptorCall) => azureAdaptor.target(config, call) as HttpTarget;

describe('the Azure adaptor', () => {
  it('names the deployment after the model: dots removed, old snapshot suffixes dropped', () => {
    expect(azureDeployment('gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(azureDeployment('gpt-3.5-turbo-0613')).toBe('gpt-35-turbo');
    expect(azureDeployment('gpt-4-32k-0314')).toBe('gpt-4-32k');
    expect(azureDeployment('gpt-4.1')).toBe('gpt-41');
  });

  it('takes the api-version from the client, else the channel, else the type fallback', () => {
    expect(targetOf(channel, { ...callFor('chat', 'gpt-4o', false), query: { 'api-version': '2025-01-01-preview' } }).url).toBe(
      'https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01-preview',
    );
    expect(targetOf({ ...channel, other: '' }, callFor('embeddings', 'text-embedding-3-small', false)).url).toBe(
      'https://res.openai.azure.com/openai/deployments/text-embedding-3-small/embeddings?api-version=2023-06-01-preview',
    );
  });

  it('offers images (v0.5.3 did not), sends the key as api-key, and has no default host', () => {
    expect(azureAdaptor.operations.has('images')).toBe(true);
    expect(azureAdaptor.operations.has('audio_speech')).toBe(false);
    const images = targetOf(channel, callFor('images', 'dall-e-3', false));
    expect(images.url).toBe('https://res.openai.azure.com/openai/deployments/dall-e-3/images/generations?api-version=2024-10-21');
    expect(images.headers['api-key']).toBe('azure-key-0123');
    expect(images.headers.authorization).toBeUndefined();
    expect(isUpstreamFailure(azureAdaptor.target({ ...channel, baseUrl: '' }, callFor('chat', 'gpt-4o', false)))).toBe(true);
  });

  it("passes bytes (speaks OpenAI) and reads a missing deployment as the channel's gap", () => {
    expect(azureAdaptor.speaks).toBe('openai');
    const missing = azureAdaptor.failure(
      404,
      JSON.stringify({ error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } }),
    );
    expect(missing).toMatchObject({ deadKey: false, retryable: true });
  });
});

// one-api keeps its OpenID Connect settings in its options table under the
// names Switchboard declares (common/options.ts): the importer carries them,
// secret included, and leaves out a discovery URL that is not an http(s) link.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapOptions } from '../../../server/import/mapOptions';
import { buildTestApp } from '../../support/app';

let app: FastifyInstance;

beforeAll(async () => {
  app = await buildTestApp();
});
afterAll(async () => {
  await app.close();
});

const ONE_API_OIDC_OPTIONS = [
  { key: 'OidcEnabled', value: 'true' },
  { key: 'OidcClientId', value: 'one-api-client' },
  { key: 'OidcClientSecret', value: 'one-api-secret' },
  { key: 'OidcWellKnown', value: 'https://sso.example.com/realms/main/.well-known/openid-configuration' },
  { key: 'OidcAuthorizationEndpoint', value: 'https://sso.example.com/realms/main/protocol/openid-connect/auth' },
  { key: 'OidcTokenEndpoint', value: 'https://sso.example.com/realms/main/protocol/openid-connect/token' },
  { key: 'OidcUserinfoEndpoint', value: 'https://sso.example.com/realms/main/protocol/openid-connect/userinfo' },
];

describe('importing one-api OIDC options', () => {
  it("carries one-api's seven Oidc options as they are", async () => {
    const { options, unknownOptions } = await mapOptions(app.ctx.db, ONE_API_OIDC_OPTIONS, false);
    expect(unknownOptions).toEqual([]);
    expect(options).toEqual(ONE_API_OIDC_OPTIONS);
  });

  it('leaves out a discovery URL that is not an http(s) link, and carries nothing with --merge', async () => {
    const unsafe = [{ key: 'OidcWellKnown', value: 'javascript:alert(1)' }];
    const { options, outcome } = await mapOptions(app.ctx.db, unsafe, false);
    expect(options).toEqual([]);
    expect(outcome.carried).toBe(0);
    expect((await mapOptions(app.ctx.db, ONE_API_OIDC_OPTIONS, true)).options).toEqual([]);
  });
});

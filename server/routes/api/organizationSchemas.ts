// The JSON schemas of the organisation routes' input, in the conventions of
// inputSchemas.ts: ids and pages are digit strings, text is bounded and free
// of NUL, and every fragment has the `description` the error handler reads.
// Bodies name no required field: schema checks run before the role check,
// and a caller who may not call the route learns that first (the handlers
// refuse what is missing).
import { Type, type Static, type TUnsafe } from 'typebox';
import { PAGE_SIZES } from '../../../common/listQuery';
import { ORGANIZATION_ROLES, type OrganizationRole } from '../../../common/organizations';
import type { NumberOrDigits } from './inputSchemas';
import { idParams, NO_NUL, text, tokenCreateSchema } from './inputSchemas';

type Schema = Record<string, unknown>;
const typed = <T>(schema: Schema): TUnsafe<T> => Type.Unsafe<T>(schema);

const objectOf = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  maxProperties: 64,
  description: 'a JSON object',
});

const idString: Schema = { type: 'string', pattern: '^[0-9]{1,15}$', description: 'a whole number of 1 to 15 digits' };
const idValue: Schema = {
  anyOf: [
    { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    { type: 'string', pattern: '^[0-9]{1,15}$' },
  ],
  description: 'a positive whole number',
};
const status: Schema = {
  anyOf: [
    { type: 'integer', enum: [1, 2] },
    { type: 'string', enum: ['1', '2'] },
  ],
  description: '1 (enabled) or 2 (disabled)',
};
const role: Schema = { type: 'string', enum: [...ORGANIZATION_ROLES], description: ORGANIZATION_ROLES.join(', ') + ' (one of)' };
const username: Schema = { type: 'string', maxLength: 64, pattern: NO_NUL, description: 'a username of at most 64 characters' };

const paged = objectOf({
  p: { type: 'string', pattern: '^[0-9]{0,15}$', description: 'a page number of at most 15 digits' },
  page_size: { type: 'string', enum: PAGE_SIZES.map(String), description: `one of ${PAGE_SIZES.join(', ')}` },
});

/** `?p=&page_size=`. */
export const organizationPage = { querystring: typed<{ p?: string; page_size?: string }>(paged) };
/** `?keyword=`. */
export const organizationSearch = { querystring: typed<{ keyword?: string }>(objectOf({ keyword: text(128) })) };
/** `/:id`. */
export const organizationById = { params: idParams };
/** `/:id/member?p=&page_size=`. */
export const memberPage = { params: idParams, querystring: typed<{ p?: string; page_size?: string }>(paged) };

export const organizationCreateSchema = {
  body: typed<{ name?: string; owner?: string; status?: NumberOrDigits }>(objectOf({ name: text(64), owner: username, status })),
};

export const organizationUpdateSchema = {
  body: typed<{
    id?: NumberOrDigits;
    name?: string;
    owner?: string;
    status?: NumberOrDigits;
    // the organisation's budget per period: checked by the handler as a user's is (common/budgets.ts)
    budget_period?: unknown;
    budget_quota?: unknown;
  }>(objectOf({ id: idValue, name: text(64), owner: username, status })),
};

export const memberAddSchema = {
  params: idParams,
  body: typed<{ username?: string; role?: OrganizationRole }>(objectOf({ username, role })),
};

export const memberUpdateSchema = {
  params: idParams,
  body: typed<{
    user_id?: NumberOrDigits;
    role?: OrganizationRole;
    // the member's spending caps: checked by the handler (common/organizations.ts parseMemberCaps)
    cap_quota?: unknown;
    cap_period?: unknown;
    cap_period_quota?: unknown;
  }>(objectOf({ user_id: idValue, role })),
};

export const memberRemoveSchema = {
  params: typed<{ id: string; userId: string }>(objectOf({ id: idString, userId: idString }, ['id', 'userId'])),
};

const wholeNumber: Schema = {
  anyOf: [
    { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
    { type: 'string', pattern: '^-?[0-9]{1,15}$' },
  ],
  description: 'a whole number within ±9007199254740991',
};

/** `/:id/token?p=&page_size=`. */
export const keyPage = memberPage;

/** `/:id/token/:tokenId`. */
export const keyById = {
  params: typed<{ id: string; tokenId: string }>(objectOf({ id: idString, tokenId: idString }, ['id', 'tokenId'])),
};

/** A token form's fields (as POST /api/token/ takes them) and whether the key is the organisation's own. */
export const keyCreateSchema = {
  params: idParams,
  body: Type.Unsafe<Static<typeof tokenCreateSchema.body> & { service?: boolean | string }>(tokenCreateSchema.body),
};

export const keyStatusSchema = {
  params: idParams,
  body: typed<{ id?: NumberOrDigits; status?: NumberOrDigits }>(objectOf({ id: idValue, status: wholeNumber })),
};

const timestamp: Schema = { type: 'string', pattern: '^[0-9]{0,15}$', description: 'a Unix time in seconds (digits only)' };

/** `/:id/usage?start_timestamp=&end_timestamp=`. */
export const usageQuery = {
  params: idParams,
  querystring: typed<{ start_timestamp?: string; end_timestamp?: string }>(
    objectOf({ start_timestamp: timestamp, end_timestamp: timestamp }),
  ),
};

export const topUpSchema = { params: idParams, body: typed<{ quota?: NumberOrDigits }>(objectOf({ quota: wholeNumber })) };

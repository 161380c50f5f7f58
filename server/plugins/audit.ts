// The audit log's plugin: every state-changing call to /api (as the CSRF
// check counts them, so one-api's state-changing GETs too) and the reads
// that reveal a key write one row (server/audit/chain.ts) with who called,
// what route, on what target, how it ended and, when the route said so
// through request.audit(), the target's fields before and after.
//
// The row is written in onSend, before the answer leaves: a client that has
// its answer finds its row. The relay (/v1) is never audited. A call refused
// before it reached the API (cross-site, by the CSRF check in an earlier
// onRequest hook; too large; no such route) writes no row: nothing ran, and
// the server log has it. Writing the row never fails the call: a failure is
// logged and counted (switchboard_audit_write_failures_total). Rows past
// AuditRetentionDays go with the other stored rows' prune (plugins/retention.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter } from 'prom-client';
import { actionOf, AUDITED_READS } from '../audit/actions';
import { changesOf } from '../audit/changes';
import { appendAudit, type AuditFields } from '../audit/chain';
import { isStateChanging } from './csrf';

/** Who acted, when the route knows better than requireRole (a sign-in, whose caller is not set yet). */
export interface AuditActor {
  id: number | string;
  username: string;
  role: number | string;
}

/** What a route adds to its call's row (request.audit()); every field optional, later calls override earlier ones. */
export interface AuditDetails {
  /** A name of its own instead of the route's (server/audit/actions.ts). */
  action?: string;
  targetType?: string;
  targetId?: string | number;
  /** The target's fields before and after the call: only those that differ are kept, secrets masked (audit/changes.ts). */
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  actor?: AuditActor;
  /** The name a caller gave without being known (a failed sign-in's). */
  username?: string;
  organizationId?: number | null;
}

function textOf(payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload;
  return Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
}

/** The payload's envelope `success`, when it is one; else the status decides. */
function succeeded(statusCode: number, payload: unknown): boolean {
  if (statusCode >= 400) return false;
  const text = textOf(payload);
  if (text === undefined || !text.startsWith('{') || text.length > 1_000_000) return true;
  try {
    const parsed = JSON.parse(text) as { success?: unknown };
    return typeof parsed.success === 'boolean' ? parsed.success : true;
  } catch {
    return true;
  }
}

/** The target's id: the route's `:id`, else the body's `id`, else (for the caller's own account) the caller's. */
function targetIdOf(request: FastifyRequest, details: AuditDetails, targetType: string, actorId: number | null): string {
  if (details.targetId !== undefined && details.targetId !== null) return String(details.targetId);
  const params = request.params as Record<string, unknown> | undefined;
  const body = request.body as Record<string, unknown> | undefined;
  const id = params?.id ?? (body && typeof body === 'object' ? body.id : undefined);
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  return targetType === 'user' && actorId !== null ? String(actorId) : '';
}

/** The organisation a call acted in: the route's, for the routes under /api/organization/:id. */
function organizationIdOf(request: FastifyRequest, route: string, details: AuditDetails): number | null {
  if (details.organizationId !== undefined) return details.organizationId;
  if (!route.startsWith('/api/organization/:id')) return null;
  const id = Number((request.params as Record<string, unknown> | undefined)?.id);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** The row's fields (before the chain links it) for a finished call. */
export function auditFieldsOf(request: FastifyRequest, statusCode: number, payload: unknown, details: AuditDetails): AuditFields {
  const route = request.routeOptions.url ?? '';
  const named = actionOf(request.method, route);
  const caller = request.caller;
  const actor: AuditActor | undefined =
    details.actor ?? (caller ? { id: caller.id, username: caller.username, role: caller.role } : undefined);
  const userId = actor ? Number(actor.id) : null;
  const targetType = details.targetType ?? named.targetType;
  const changes = changesOf(details.before, details.after);
  const userAgent = request.headers['user-agent'];
  return {
    created_at: Math.floor(Date.now() / 1000),
    organization_id: organizationIdOf(request, route, details),
    user_id: userId,
    username: actor?.username ?? details.username ?? '',
    role: actor ? Number(actor.role) : 0,
    ip: request.ip,
    user_agent: typeof userAgent === 'string' ? userAgent : '',
    request_id: String(request.id),
    method: request.method,
    route,
    action: details.action ?? named.action,
    target_type: targetType,
    target_id: targetIdOf(request, details, targetType, userId),
    status: statusCode,
    success: succeeded(statusCode, payload) ? 1 : 0,
    changes: changes ? JSON.stringify(changes) : null,
  };
}

const isAudited = (request: FastifyRequest) => {
  const route = request.routeOptions.url;
  if (route === undefined || !route.startsWith('/api/')) return false;
  return AUDITED_READS.has(route) || isStateChanging(request);
};

function addDetails(this: FastifyRequest, details: AuditDetails): void {
  // a call the plugin does not audit (a plain read) is audited once its route asks
  this.auditEntry = { ...(this.auditEntry ?? {}), ...details };
}

export const auditPlugin = fp(
  (app) => {
    const { db, metrics } = app.ctx;
    const failures = metrics
      ? new Counter({
          name: 'switchboard_audit_write_failures_total',
          help: 'Audit rows that could not be written (the call itself went on)',
          registers: [metrics.registry],
        })
      : undefined;
    app.decorateRequest('auditEntry', null);
    app.decorateRequest('audit', addDetails);
    // registered after the CSRF check: a call it refused never gets here, so it writes no row
    app.addHook('onRequest', (request, _reply, done) => {
      if (isAudited(request)) request.auditEntry = {};
      done();
    });
    app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const details = request.auditEntry;
      if (!details) return payload;
      request.auditEntry = null;
      try {
        await appendAudit(db, auditFieldsOf(request, reply.statusCode, payload, details));
      } catch (error) {
        failures?.inc();
        request.log.error({ err: error }, 'audit row not written');
      }
      return payload;
    });
    return Promise.resolve();
  },
  { name: 'switchboard-audit', dependencies: ['switchboard-services', 'switchboard-csrf'] },
);

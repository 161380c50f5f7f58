// The money side of every relay route, shared so each route only says what
// it charges: may this key use this model and at what price (admit), hold the
// most the request can cost (reserve), and after the answer replace the hold
// by the real charge and log it (settle), or give it all back (release).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { LogType } from '../../common/roles';
import { lookupPrice } from './billing';
import type { Bookkeeping } from './bookkeeping';
import type { Dispatched } from './dispatch';
import { isRelayError, relayError, sendRelayError, type RelayError } from './errors';
import type { Reservation } from './quota';
import { remindIfLow } from './quotaReminder';
import { relayFieldProblem } from './requestFields';
import { authenticateRelay, type RelayCaller } from './tokenAuth';
import { DisconnectSignal } from './upstream';

export interface Admission {
  caller: RelayCaller;
  model: string;
  /** modelRatio x groupRatio */
  ratio: number;
  modelRatio: number;
  groupRatio: number;
  startedAt: number;
}

/** The start of every JSON relay route: a valid key and a JSON object body (synchronous when the key was cached). */
export function openJsonRequest(
  app: FastifyInstance,
  request: Pick<FastifyRequest, 'ip' | 'body'> & { headers: { authorization?: string } },
): OpenedRequest | RelayError | Promise<OpenedRequest | RelayError> {
  const caller = authenticateRelay(app.ctx.db, request, app.ctx.relayCache);
  return caller instanceof Promise ? caller.then((checked) => withBody(checked, request.body)) : withBody(caller, request.body);
}

export interface OpenedRequest {
  caller: RelayCaller;
  body: Record<string, unknown>;
}

function withBody(caller: RelayCaller | RelayError, body: unknown): OpenedRequest | RelayError {
  if (isRelayError(caller)) return caller;
  if (!body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return relayError(400, 'the request body must be a JSON object');
  return relayFieldProblem(body as Record<string, unknown>) ?? { caller, body: body as Record<string, unknown> };
}

/** The trimmed `model` of a body, or ''. */
export const modelOf = (body: Record<string, unknown>) => (typeof body.model === 'string' ? body.model.trim() : '');

export function admitModel(app: FastifyInstance, caller: RelayCaller, model: string): Admission | RelayError {
  const { options } = app.ctx;
  if (caller.token.models && !caller.token.models.split(',').includes(model)) {
    return relayError(403, `this API key may not use the model ${model}`, 'model_not_allowed', 'permission_error');
  }
  const price = lookupPrice(model, caller.user.group, options.json('ModelRatio'), options.json('GroupRatio'));
  if (!price.known) return relayError(403, price.reason, 'model_price_unset', 'permission_error');
  return { caller, model, ratio: price.ratio, modelRatio: price.modelRatio, groupRatio: price.groupRatio, startedAt: Date.now() };
}

export async function reserve(app: FastifyInstance, admission: Admission, amount: number, hint?: { alone?: boolean }): Promise<Reservation | RelayError> {
  const { caller } = admission;
  const reservation: Reservation = {
    userId: Number(caller.user.id),
    tokenId: Number(caller.token.id),
    limitedToken: Number(caller.token.unlimited_quota) !== 1,
    amount,
  };
  const reserved = await app.ctx.ledger.reserve(reservation, hint);
  if (reserved.ok) return reservation;
  return relayError(
    429,
    reserved.reason === 'user' ? 'your account quota is insufficient' : 'the quota of this API key is insufficient',
    'insufficient_quota',
    'insufficient_quota',
  );
}

export const release = (app: FastifyInstance, reservation: Reservation) => app.ctx.ledger.release(reservation);

/** No upstream answered: everything reserved goes back, and the client gets the last error (or nothing, if it left). */
export async function answerUnanswered(app: FastifyInstance, reply: FastifyReply, reservation: Reservation, dispatched: Exclude<Dispatched, { outcome: 'answered' }>) {
  await release(app, reservation);
  return dispatched.outcome === 'failed' ? sendRelayError(reply, dispatched.error) : reply;
}

export interface Settlement {
  channelId: number;
  charge: number;
  promptTokens: number;
  completionTokens: number;
  isStream: boolean;
  estimated: boolean;
  /** Appended to the log's "model ratio, group ratio" line, e.g. the image size. */
  detail?: string;
}

/** The log's "model ratio, group ratio" line, made once per pair of ratios (bounded: ratios come from the options). */
const ratioLines = new Map<number, Map<number, string>>();

function ratioLine(modelRatio: number, groupRatio: number): string {
  let byGroup = ratioLines.get(modelRatio);
  if (!byGroup) {
    if (ratioLines.size >= 1000) ratioLines.clear();
    byGroup = new Map();
    ratioLines.set(modelRatio, byGroup);
  }
  let line = byGroup.get(groupRatio);
  if (line === undefined) {
    line = `model ratio ${modelRatio.toFixed(2)}, group ratio ${groupRatio.toFixed(2)}`;
    if (byGroup.size >= 1000) byGroup.clear();
    byGroup.set(groupRatio, line);
  }
  return line;
}

/** Queued after the answer: the real charge, the counters, the reminder e-mail and the consume log. */
export function settleLater(app: FastifyInstance, bookkeeping: Bookkeeping, admission: Admission, reservation: Reservation, settlement: Settlement): void {
  const now = Date.now();
  const elapsedMs = now - admission.startedAt;
  const { options } = app.ctx;
  const { caller } = admission;
  const used = settlement.charge > 0 || settlement.promptTokens + settlement.completionTokens > 0;
  bookkeeping.settle(
    { reservation, charge: settlement.charge, channelId: settlement.channelId, countRequest: used },
    caller.user.email ? (userId, charge) => void remindIfLow(app, userId, charge) : undefined,
  );
  if (options.bool('LogConsumeEnabled')) {
    bookkeeping.logs.write({
      userId: reservation.userId,
      username: caller.user.username,
      type: LogType.consume,
      content: settlement.detail ? `${ratioLine(admission.modelRatio, admission.groupRatio)}, ${settlement.detail}` : ratioLine(admission.modelRatio, admission.groupRatio),
      quota: settlement.charge,
      tokenName: caller.token.name,
      tokenId: reservation.tokenId,
      modelName: admission.model,
      channelId: settlement.channelId,
      promptTokens: settlement.promptTokens,
      completionTokens: settlement.completionTokens,
      elapsedMs,
      isStream: settlement.isStream,
      estimated: settlement.estimated,
      createdAt: Math.floor(now / 1000),
    });
  }
}

/** Aborts the upstream call when the client goes away before the answer is complete. */
export function abortOnDisconnect(raw: ServerResponse): DisconnectSignal {
  const signal = new DisconnectSignal();
  raw.on('close', () => {
    if (!raw.writableFinished) signal.abort();
  });
  return signal;
}

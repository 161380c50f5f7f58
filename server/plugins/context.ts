// What every route module needs, decorated once on the Fastify instance
// (plugins/services.ts builds it), and the one place that augments Fastify's
// types: every decorator the gateway adds is declared here.
import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Config } from '../config';
import type { Database } from '../db/database';
import type { QuotaLedger } from '../billing/quota';
import type { RelayCache } from '../relay/relayCache';
import type { UserRow } from '../repositories/users';
import type { AuditDetails } from './audit';
import type { SendMail } from '../services/mailer';
import type { JobRunner } from '../services/jobRunner';
import type { OptionStore } from '../services/optionStore';
import type { RateLimiter } from '../services/rateLimiter';
import type { SessionSigner } from '../services/session';
import type { GatewayMetrics } from '../services/metrics';
import type { DeliveryLoop } from '../webhooks/delivery';
import type { TaskPoller } from '../relay/tasks/poller';

export interface AppContext {
  config: Config;
  db: Kysely<Database>;
  dialect: Config['database']['dialect'];
  options: OptionStore;
  sessions: SessionSigner;
  sendMail: SendMail;
  rateLimiter: RateLimiter;
  /** Tokens, owners and routes the relay reads on every request; dropped on any write to them. */
  relayCache: RelayCache;
  /** Where the relay reserves, settles and logs (a faster path of its own on SQLite). */
  ledger: QuotaLedger;
  /** This process's id among the relay nodes (relay_nodes on PostgreSQL and MySQL). */
  nodeId: string;
  /** The background jobs' leases: each job on one worker of one node at a time. */
  jobs: JobRunner;
  /** A new id for a relayed request, unique across nodes (its reservation row's key). */
  newRequestId: () => string;
  redis?: Redis;
  /** Unix seconds when this process started. */
  startTime: number;
  /** The node's metrics (GET /metrics); absent when METRICS_ENABLED is off. */
  metrics?: GatewayMetrics;
  /**
   * Starts a shutdown's drain (SHUTDOWN_DRAIN_SECONDS): /readyz answers 503
   * while everything else is still served, so load balancers take the node
   * out before it stops accepting connections.
   */
  startDraining: () => void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The services (plugins/services.ts). */
    ctx: AppContext;
    /** This node's webhook delivery loop (plugins/backgroundJobs.ts; tests run passes with runOnce). */
    webhookDelivery: DeliveryLoop;
    /** This node's poller of asynchronous tasks (plugins/backgroundJobs.ts; tests run passes with runOnce). */
    taskPoller: TaskPoller;
  }
  interface FastifyRequest {
    /** The signed-in user, set by requireRole() (decorated by plugins/auth.ts). */
    caller: UserRow | null;
    /** Adds to the call's audit row, and audits a call that is not audited otherwise (plugins/audit.ts). */
    audit(details: AuditDetails): void;
    /** The call's audit row in the making; null when the call is not audited (plugins/audit.ts). */
    auditEntry: AuditDetails | null;
  }
}

// Moves a one-api or new-api database into Switchboard's (see docs/migrating.md, "Moving
// from one-api or new-api"). Every table of the source is read and mapped in
// memory first, so a dry run and an import report the same plan; an import
// then writes users, tokens, channels (with their abilities), redemptions and
// options in ONE transaction, which also checks that the quota totals moved
// by exactly what was carried and rolls everything back if not. Logs, which
// can be millions of rows, follow in batches, each batch with its rollups in
// its own transaction, under the source's ids (offset like every other id),
// so a batch already written is recognised and skipped when the same command
// runs again after a failure (the target then holds exactly the source's
// users: the import resumes with the logs, nothing else is written twice).
// Keys (tokens', channels', redemptions', access tokens) are never put in
// the report, an error or a log line.
//
// This file holds the steps in their order (runImport) and the report they
// add up to. Each step is its own file: readSource.ts, targetState.ts (refuse,
// resume or replace a fresh root; the id offsets), mapUsers.ts, mapTokens.ts,
// mapChannels.ts, mapRedemptions.ts, mapOptions.ts, writePlan.ts, copyLogs.ts;
// every query is in server/repositories/importRows.ts.
import type { Kysely } from 'kysely';
import type { ImportProgress } from '../../common/importJob';
import type { DatabaseConfig } from '../config';
import type { Database } from '../db/database';
import { copyLogs } from './copyLogs';
import { mapChannels } from './mapChannels';
import { mapOptions } from './mapOptions';
import { mapRedemptions } from './mapRedemptions';
import { mapTokens } from './mapTokens';
import { mapUsers } from './mapUsers';
import type { Outcome, TableOutcome } from './outcome';
import { newMappingState, type MappingState, type Plan } from './plan';
import { detectProduct, type Detected } from './products';
import { addTotals, quotaTotals, ZERO, type QuotaTotals } from './quotaTotals';
import { countLogs, readSource } from './readSource';
import type { SourceDatabase } from './source';
import { placeImport, targetState, type Placement } from './targetState';
import { writePlan } from './writePlan';

export type { ImportProgress } from '../../common/importJob';
export type { TableOutcome } from './outcome';
export { quotaTotals, type QuotaTotals } from './quotaTotals';

type Target = { db: Kysely<Database>; dialect: DatabaseConfig['dialect'] };

export interface ImportOptions {
  /** Write (the default is a dry run that writes nothing). */
  apply?: boolean;
  /** Add to a target that already holds users: ids are offset, clashes renamed or left out. */
  merge?: boolean;
  /** Also move the logs (and build the dashboard's rollups from them). */
  withLogs?: boolean;
  /** Logs per batch (default 5000). */
  logBatchSize?: number;
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportReport {
  source: string;
  detected: Detected;
  applied: boolean;
  merge: boolean;
  withLogs: boolean;
  /** Set when the target holds data and --merge was not given: nothing is written. */
  refused?: string;
  tables: TableOutcome[];
  /** Option keys with no meaning here (left out). */
  unknownOptions: string[];
  /** Usernames and keys that clashed with the target's (--merge). */
  clashes: string[];
  /** Source settings that have no place here, counted per field. */
  notCarried: string[];
  /** Channels whose type number changed on the way (new-api numbers its types its own way). */
  renumbered: string[];
  /** Set when users, tokens, channels, codes and options were imported by an earlier run: only the logs are copied (from where they stopped). */
  resumed?: boolean;
  /** The fresh install's root account the import replaces, if any. */
  replacedRoot?: string;
  totals: {
    /** The source's live rows. */
    source: QuotaTotals;
    /** What is carried over. */
    carried: QuotaTotals;
    targetBefore: QuotaTotals;
    /** After the import (in a dry run: what it would be). */
    targetAfter: QuotaTotals;
  };
  elapsedMs: number;
}

/** What the mapping steps made of the source. */
interface Mapped {
  plan: Plan;
  /** users, tokens, channels, redemptions, options: the report's tables, in its order. */
  outcomes: Outcome[];
  unknownOptions: string[];
  renumbered: string[];
}

/** The mapping steps, in their order (each adds its clashes and uncarried fields to the state in turn). */
async function mapSource(
  db: Kysely<Database>,
  read: Awaited<ReturnType<typeof readSource>>,
  product: Detected['product'],
  state: MappingState,
): Promise<Mapped> {
  const users = await mapUsers(db, read.users, state);
  const tokens = await mapTokens(db, read.tokens, users.liveUsers, product === 'new-api', state);
  const channels = mapChannels(read.channels, product, state);
  const redemptions = await mapRedemptions(db, read.redemptions, state);
  const options = await mapOptions(db, read.options, state.merge);
  return {
    plan: {
      users: users.users,
      tokens: tokens.tokens,
      channels: channels.channels,
      channelKeys: channels.channelKeys,
      redemptions: redemptions.redemptions,
      options: options.options,
      offsets: state.offsets,
    },
    outcomes: [users.outcome, tokens.outcome, channels.outcome, redemptions.outcome, options.outcome],
    unknownOptions: options.unknownOptions,
    renumbered: channels.renumbered,
  };
}

/** The report of the plan (a dry run's whole report; an import's until it is written). */
function planReport(facts: {
  source: SourceDatabase;
  detected: Detected;
  withLogs: boolean;
  placement: Placement;
  mapped: Mapped;
  mapping: MappingState;
  logOutcome: Outcome | undefined;
  targetBefore: QuotaTotals;
}): ImportReport {
  const { placement, mapped, mapping, logOutcome, targetBefore } = facts;
  const { replaceRoot } = placement;
  return {
    source: facts.source.label,
    detected: facts.detected,
    applied: false,
    merge: mapping.merge,
    withLogs: facts.withLogs,
    refused: placement.refused,
    resumed: placement.resumed || undefined,
    tables: [...mapped.outcomes, ...(logOutcome ? [logOutcome] : [])].map((outcome) => outcome.toJSON()),
    unknownOptions: mapped.unknownOptions,
    clashes: mapping.clashes,
    notCarried: mapping.uncarried.list(),
    renumbered: mapped.renumbered,
    replacedRoot: replaceRoot
      ? `the fresh install's account "${replaceRoot.username}" (#${replaceRoot.id}) gives way to the source's users`
      : undefined,
    totals: {
      source: mapping.sourceTotals,
      carried: mapping.carried,
      targetBefore,
      targetAfter: addTotals(
        addTotals(targetBefore, mapping.carried),
        replaceRoot ? { userQuota: replaceRoot.quota, userUsedQuota: replaceRoot.used, tokenRemainQuota: 0 } : ZERO,
        -1,
      ),
    },
    elapsedMs: 0,
  };
}

/** Writes the plan (unless resumed: then only the logs are left), then the logs; the report's totals follow. */
async function applyPlan(
  source: SourceDatabase,
  target: Target,
  report: ImportReport,
  run: {
    placement: Placement;
    plan: Plan;
    newApi: boolean;
    logs: Awaited<ReturnType<typeof countLogs>>;
    logBatchSize: number;
    targetBefore: QuotaTotals;
    progress: (progress: ImportProgress) => void;
  },
): Promise<void> {
  const { placement, plan, progress } = run;
  if (placement.resumed) {
    report.totals.carried = { ...ZERO };
    report.totals.targetAfter = run.targetBefore;
  }
  if (!placement.resumed) await writePlan(target, plan, placement.replaceRoot, report.totals.targetAfter, progress);
  report.applied = true;

  if (run.logs.outcome)
    await copyLogs(source, target, run.newApi, plan.offsets, { size: run.logBatchSize, total: run.logs.count }, progress);
  report.totals.targetAfter = await quotaTotals(target.db);
  progress({ step: 'done', done: 1, total: 1 });
}

/** Reads, maps and (with `apply`) writes the source; the report says what was, or would be, carried and left out. */
export async function runImport(source: SourceDatabase, target: Target, options: ImportOptions = {}): Promise<ImportReport> {
  const started = Date.now();
  const { db } = target;
  const merge = options.merge === true;
  const withLogs = options.withLogs === true;
  const progress = options.onProgress ?? (() => undefined);
  const detected = detectProduct(source.columns);
  progress({ step: 'read', done: 0, total: 1 });

  const state = await targetState(db);
  const targetBefore = await quotaTotals(db);
  const read = await readSource(source);
  progress({ step: 'read', done: 1, total: 1 });

  const placement = await placeImport(db, state, read.users, { merge, withLogs });
  const mapping = newMappingState(merge, placement.offsets);
  const mapped = await mapSource(db, read, detected.product, mapping);
  const logs = await countLogs(source, options.withLogs);
  const report = planReport({ source, detected, withLogs, placement, mapped, mapping, logOutcome: logs.outcome, targetBefore });
  if (!options.apply || placement.refused) {
    report.elapsedMs = Date.now() - started;
    return report;
  }

  await applyPlan(source, target, report, {
    placement,
    plan: mapped.plan,
    newApi: detected.product === 'new-api',
    logs,
    logBatchSize: options.logBatchSize ?? 5000,
    targetBefore,
    progress,
  });
  report.elapsedMs = Date.now() - started;
  return report;
}

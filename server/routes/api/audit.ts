// The audit log (admin and root; both see every row): the list with its
// filters (user, action or route, target, outcome, time range), ten a page
// newest first unless page_size says otherwise; the search; the chain's
// status for the console's indicator; and the filtered rows as CSV, a page
// of rows per query so a long export never holds one huge result.
import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AUDIT_EXPORT_COLUMNS, type AuditFilter, type AuditRecord } from '../../../common/audit';
import { ok } from '../../../common/envelope';
import { PAGE_SIZES } from '../../../common/listQuery';
import { Role } from '../../../common/roles';
import { toAuditRecord, verifyAuditChain } from '../../audit/chain';
import { requireRole } from '../../plugins/auth';
import { auditRowsBefore, listAudit, searchAudit } from '../../repositories/auditLog';
import { pageWindowOf } from '../../repositories/pagination';
import { text } from './inputSchemas';

type FilterQuery = Partial<Record<keyof AuditFilter, string>>;

const digits = (maxLength: number, description: string) => ({ type: 'string', pattern: `^[0-9]{0,${maxLength}}$`, description });
const FILTER_PROPERTIES = {
  user_id: digits(15, 'a user id (digits only)'),
  username: text(64),
  action: text(255),
  target_type: text(32),
  target_id: text(64),
  success: { type: 'string', enum: ['', 'true', 'false'], description: 'true or false' },
  start_timestamp: digits(15, 'a Unix time in seconds (digits only)'),
  end_timestamp: digits(15, 'a Unix time in seconds (digits only)'),
};
const queryOf = <T>(properties: Record<string, unknown>) =>
  Type.Unsafe<T>({ type: 'object', properties, maxProperties: 32, description: 'a JSON object' });

const listSchema = {
  querystring: queryOf<FilterQuery & { p?: string; page_size?: string }>({
    ...FILTER_PROPERTIES,
    p: digits(15, 'a page number of at most 15 digits'),
    page_size: { type: 'string', enum: PAGE_SIZES.map(String), description: `one of ${PAGE_SIZES.join(', ')}` },
  }),
};
const searchSchema = { querystring: queryOf<FilterQuery & { keyword?: string }>({ ...FILTER_PROPERTIES, keyword: text(128) }) };
const exportSchema = { querystring: queryOf<FilterQuery>(FILTER_PROPERTIES) };

function filterOf(query: FilterQuery): AuditFilter {
  const textOf = (key: keyof FilterQuery) => {
    const value = query[key]?.trim();
    return value ? value : undefined;
  };
  const numberOf = (key: keyof FilterQuery) => {
    const value = Number.parseInt(query[key] ?? '', 10);
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  };
  return {
    user_id: numberOf('user_id'),
    username: textOf('username'),
    action: textOf('action'),
    target_type: textOf('target_type'),
    target_id: textOf('target_id'),
    success: textOf('success'),
    start_timestamp: numberOf('start_timestamp'),
    end_timestamp: numberOf('end_timestamp'),
  };
}

const EXPORT_PAGE = 1000;

/** One CSV field (RFC 4180); text a spreadsheet would run as a formula is prefixed with a quote. */
function csvField(value: unknown): string {
  let field = '';
  if (typeof value === 'string') field = value;
  else if (value !== null && value !== undefined) field = JSON.stringify(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(field)) field = `'${field}`;
  return /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

function csvLine(record: AuditRecord): string {
  const values: Record<string, unknown> = { ...record, changes: record.changes ? JSON.stringify(record.changes) : '' };
  return `${AUDIT_EXPORT_COLUMNS.map((column) => csvField(values[column])).join(',')}\r\n`;
}

export function auditRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db } = app.ctx;
  const admin = requireRole(Role.admin);

  app.get('/api/audit/', { preHandler: admin, schema: listSchema }, async (request) => {
    const rows = await listAudit(db, filterOf(request.query), pageWindowOf(request.query));
    return ok(rows.map(toAuditRecord));
  });

  app.get('/api/audit/search', { preHandler: admin, schema: searchSchema }, async (request) => {
    const rows = await searchAudit(db, (request.query.keyword ?? '').trim(), filterOf(request.query));
    return ok(rows.map(toAuditRecord));
  });

  app.get('/api/audit/verify', { preHandler: admin }, async () => ok(await verifyAuditChain(db)));

  app.get('/api/audit/export', { preHandler: admin, schema: exportSchema }, async (request, reply) => {
    const filter = filterOf(request.query);
    async function* lines() {
      yield `${AUDIT_EXPORT_COLUMNS.join(',')}\r\n`;
      let before: number | undefined;
      for (;;) {
        const rows = await auditRowsBefore(db, filter, before, EXPORT_PAGE);
        if (rows.length === 0) return;
        yield rows.map((row) => csvLine(toAuditRecord(row))).join('');
        if (rows.length < EXPORT_PAGE) return;
        before = Number(rows[rows.length - 1].seq);
      }
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-${Math.floor(Date.now() / 1000)}.csv"`)
      .send(Readable.from(lines()));
  });
  return Promise.resolve();
}

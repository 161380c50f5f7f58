// The import of a one-api or new-api database from the console (root only):
// the same importer as `npm run import`, run in the background on this node,
// one at a time. POST starts it; GET answers how far it is and, when done,
// its report. The source may be a DSN with a password: it is never sent back.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { Role } from '../../../common/roles';
import type { ImportJobState } from '../../../common/importJob';
import { runImport, type ImportReport } from '../../import/importer';
import { formatReport } from '../../import/report';
import { openSource, redactedLocation } from '../../import/source';
import { requireRole } from '../../plugins/auth';
import { importStartSchema } from './inputSchemas';

const isOn = (value: unknown) => value === true || value === 'true' || value === 1 || value === '1';

export function importRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const rootOnly = requireRole(Role.root);
  let state: ImportJobState = { running: false, source: '', apply: false };

  app.get('/api/import/', { preHandler: rootOnly }, () => ok(state));

  app.post('/api/import/', { preHandler: rootOnly, schema: importStartSchema }, (request) => {
    if (state.running) return fail('an import is already running on this server');
    const body = request.body;
    const location = body.source.trim();
    if (!location) return fail('give the source: a SQLite file path on the server, or a MySQL or PostgreSQL DSN');
    const apply = isOn(body.apply);
    state = { running: true, source: redactedLocation(location), apply, started_at: Math.floor(Date.now() / 1000) };
    request.audit({ after: { source: state.source, apply, merge: isOn(body.merge), with_logs: isOn(body.with_logs) } });
    const run = async () => {
      let report: ImportReport | undefined;
      const source = await openSource(location);
      try {
        report = await runImport(
          source,
          { db: app.ctx.db, dialect: app.ctx.config.database.dialect },
          {
            apply,
            merge: isOn(body.merge),
            withLogs: isOn(body.with_logs),
            onProgress: (progress) => {
              state.progress = progress;
            },
          },
        );
      } finally {
        await source.close();
      }
      if (report.applied) await app.ctx.options.reload();
      return report;
    };
    run().then(
      (report) => {
        state = {
          ...state,
          running: false,
          report: formatReport(report),
          refused: report.refused,
          finished_at: Math.floor(Date.now() / 1000),
        };
      },
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        // a driver may quote the DSN it was given: never with its password
        state = {
          ...state,
          running: false,
          error: redactedLocation(message).split(location).join(state.source),
          finished_at: Math.floor(Date.now() / 1000),
        };
        request.log.warn({ source: state.source }, `import failed: ${state.error}`);
      },
    );
    return ok(state);
  });
  return Promise.resolve();
}

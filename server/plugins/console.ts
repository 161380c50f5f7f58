// The console: its built files (console/dist) served as they are, and every
// other GET that no route took answered with its index.html, so the console's
// own router shows the page. Unknown /v1 and /api paths (and other methods)
// get a 404 in the envelope their callers read.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import fp from 'fastify-plugin';
import { fail } from '../../common/envelope';

export const consolePlugin = fp<{ consoleDir: string }>(
  async (app, { consoleDir }) => {
    const indexHtml = join(consoleDir, 'index.html');
    const consoleBuilt = existsSync(indexHtml);
    if (consoleBuilt) {
      await app.register(fastifyStatic, {
        root: consoleDir,
        wildcard: false,
        index: false,
        // the build writes .br and .gz beside each bundle (scripts/precompress.mjs): the smallest one the browser
        // accepts is sent, with Content-Encoding and Vary, and nothing is compressed per request
        preCompressed: true,
        setHeaders(reply, path) {
          // hashed bundles never change; everything else is revalidated
          reply.header('Cache-Control', path.includes(join(consoleDir, 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });
    }

    app.setNotFoundHandler(async (request, reply) => {
      const path = request.url.split('?')[0];
      if (path === '/v1' || path.startsWith('/v1/')) {
        return reply.code(404).send({
          error: { message: `Invalid URL (${request.method} ${path})`, type: 'invalid_request_error', param: null, code: null },
        });
      }
      if (path === '/api' || path.startsWith('/api/') || (request.method !== 'GET' && request.method !== 'HEAD')) {
        return reply.code(404).send(fail(`not found: ${request.method} ${path}`, 'not_found'));
      }
      if (!consoleBuilt) {
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The console is not built yet: run `npm run build` (npm start does it for you).\n');
      }
      return reply.header('Cache-Control', 'no-cache').sendFile('index.html');
    });
  },
  { name: 'switchboard-console' },
);

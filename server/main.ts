// Process entry: configuration, listening, and a graceful stop on SIGTERM/SIGINT.
import { buildApp } from './app';
import { loadConfig } from './config';

const config = loadConfig();
const app = await buildApp(config, { logger: { level: config.logLevel } });

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info(`${signal} received, shutting down`);
  const forced = setTimeout(() => {
    app.log.error('shutdown took longer than 10 s, exiting');
    process.exit(1);
  }, 10_000);
  forced.unref();
  try {
    await app.close();
    process.exit(0);
  } catch (error) {
    app.log.error(error);
    process.exit(1);
  }
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));

try {
  await app.listen({ port: config.port, host: config.host });
  const where = config.database.dialect === 'sqlite' ? `SQLite at ${config.database.path}` : config.database.dialect;
  console.log(`[switchboard] gateway and console on http://localhost:${config.port} (${where})`);
} catch (error) {
  app.log.error(error);
  process.exit(1);
}

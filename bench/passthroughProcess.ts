// The lean relay (the benchmark's floor) as a standalone process for the benchmark.
import { startPassthrough } from './passthrough';

const passthrough = await startPassthrough({
  upstream: process.env.UPSTREAM_URL!,
  upstreamKey: 'sk-good',
  clientKeys: [process.env.CLIENT_KEY!],
});
console.log(`LISTENING ${passthrough.baseUrl}`);
process.on('SIGTERM', () => void passthrough.close().then(() => process.exit(0)));

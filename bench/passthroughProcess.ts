// The lean relay (the benchmark's floor) as a standalone process for the benchmark: LEAN_PROTOCOL picks the
// vendor protocol it relays (openai by default), UPSTREAM_KEY the upstream's key (sk-good, the OpenAI emulator's).
import { startPassthrough, type LeanProtocol } from './passthrough';

const passthrough = await startPassthrough({
  upstream: process.env.UPSTREAM_URL!,
  upstreamKey: process.env.UPSTREAM_KEY ?? 'sk-good',
  clientKeys: [process.env.CLIENT_KEY!],
  protocol: (process.env.LEAN_PROTOCOL as LeanProtocol | undefined) ?? 'openai',
});
console.log(`LISTENING ${passthrough.baseUrl}`);
process.on('SIGTERM', () => void passthrough.close().then(() => process.exit(0)));

// The OpenAI emulator as a standalone process for the benchmark.
import { startOpenAIEmulator } from '../tests/support/openaiEmulator';

const emulator = await startOpenAIEmulator({ record: false });
console.log(`LISTENING ${emulator.baseUrl}`);
process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));

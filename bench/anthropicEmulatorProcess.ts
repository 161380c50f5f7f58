// The Anthropic Messages emulator as a standalone process for the benchmark's
// Anthropic-channel row (OpenAI client in, Messages upstream out).
import { startAnthropicEmulator } from '../tests/support/emulators/anthropic';

const emulator = await startAnthropicEmulator({ record: false });
console.log(`LISTENING ${emulator.baseUrl}`);
process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));

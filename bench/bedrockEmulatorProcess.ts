// The Bedrock emulator as a standalone process for the benchmark's Bedrock row
// (OpenAI client in, Converse out, every call's SigV4 signature verified). Its
// signatures stay good for an hour: the direct row repeats one signed request.
import { startBedrockEmulator } from '../tests/support/emulators/bedrock';

const emulator = await startBedrockEmulator({ record: false, signatureWindowSeconds: 3600 });
console.log(`LISTENING ${emulator.baseUrl}`);
process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));

// The realtime emulator as a standalone process for the benchmark's realtime row: OpenAI's Realtime API over a
// WebSocket, its deltas back to back, nothing recorded (a long run holds no memory for its frames).
import { startRealtimeEmulator } from '../tests/support/emulators/realtime';

const emulator = await startRealtimeEmulator({ record: false });
emulator.deltaMs = 0;
console.log(`LISTENING ${emulator.baseUrl}`);
process.on('SIGTERM', () => void emulator.close().then(() => process.exit(0)));

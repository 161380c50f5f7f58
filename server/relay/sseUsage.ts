// Moved to server/protocols/inbound/openaiChat.ts (the OpenAI client side's usage watcher); kept so older imports still resolve.
export { SseUsageWatcher, type StreamUsage } from '../protocols/inbound/openaiChat';

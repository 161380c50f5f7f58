// Moved to server/protocols/inbound/tokenCount.ts (pure counting); kept so older imports still resolve.
export { contentText, countChatPromptTokens, countInputTokens, countTextTokens, type CountOptions } from '../protocols/inbound/tokenCount';

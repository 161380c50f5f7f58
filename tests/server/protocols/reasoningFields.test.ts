// Reasoning models get the fields they accept, whichever client asked:
// OpenAI's reasoning models take their limit as max_completion_tokens (they
// refuse max_tokens), Claude Code's adaptive thinking carries its effort to
// the other vendors, and an effort given to Claude leaves the answer room.
import { describe, expect, it } from 'vitest';
import { chatRequestOf } from '../../../server/protocols/inbound/anthropicMessagesRequest';
import { thinkingFor } from '../../../server/protocols/upstream/anthropic/request';
import { openAiAdaptor } from '../../../server/protocols/upstream/openai';
import type { AdaptorCall, ChatRequest } from '../../../server/protocols/types';

const call = (model: string): AdaptorCall => ({ operation: 'chat', model, stream: false, responseId: 'chatcmpl-test', now: 0 });
const toOpenAi = (model: string, request: Partial<ChatRequest>) =>
  JSON.parse(openAiAdaptor.encodeChat({ model, messages: [{ role: 'user', content: 'think' }], ...request }, call(model))) as Record<
    string,
    unknown
  >;

describe('reasoning fields', () => {
  it('a translated request to an OpenAI reasoning model carries max_completion_tokens, never max_tokens; other models keep max_tokens', () => {
    for (const model of ['o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'openai/gpt-5.1']) {
      const body = toOpenAi(model, { max_tokens: 500, reasoning_effort: 'high' });
      expect(body, model).toMatchObject({ max_completion_tokens: 500, reasoning_effort: 'high' });
      expect(body, model).not.toHaveProperty('max_tokens');
    }
    const plain = toOpenAi('gpt-4o', { max_tokens: 500, reasoning_effort: 'high' });
    expect(plain).toMatchObject({ max_tokens: 500 });
    expect(plain).not.toHaveProperty('reasoning_effort');
    expect(plain).not.toHaveProperty('max_completion_tokens');
  });

  it("maps Claude Code's adaptive thinking and output_config.effort to reasoning_effort", () => {
    const ask = (extra: Record<string, unknown>) =>
      chatRequestOf({ model: 'gpt-5', max_tokens: 32000, messages: [{ role: 'user', content: 'hi' }], ...extra }).reasoning_effort;
    expect(ask({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })).toBe('high');
    expect(ask({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } })).toBe('low');
    expect(ask({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } })).toBe('high');
    expect(ask({ thinking: { type: 'adaptive' } })).toBe('medium');
    expect(ask({ thinking: { type: 'disabled' } })).toBeUndefined();
  });

  it('gives Claude a thinking budget that leaves the answer a quarter of max_tokens, never max_tokens - 1', () => {
    expect(thinkingFor('high', 'claude-sonnet-4-5', { max_tokens: 4000 })).toEqual({ type: 'enabled', budget_tokens: 3000 });
    expect(thinkingFor('high', 'claude-sonnet-4-5', { max_tokens: 64000 })).toEqual({ type: 'enabled', budget_tokens: 24576 });
    // too little room for Anthropic's floor of 1,024 and an answer: no thinking
    expect(thinkingFor('high', 'claude-sonnet-4-5', { max_tokens: 1200 })).toBeUndefined();
  });
});

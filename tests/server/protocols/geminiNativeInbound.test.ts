// The Gemini native inbound codec on its own: the request in the chat form
// (function calls and their answers paired), the errors by status, the usage
// of passed-through answers (a recorded stream split at every byte), and chat
// answers and chunks written back as Gemini's JSON and SSE events.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { geminiNative } from '../../../server/protocols/inbound/geminiNative';
import { encodeResponse, GenerateContentStreamEncoder, googleStatus } from '../../../server/protocols/inbound/geminiNativeAnswer';
import { chatRequestOf } from '../../../server/protocols/inbound/geminiNativeRequest';
import type { ChatChunk, ChatResponse } from '../../../server/protocols/types';
import { fixtureDir } from './contract';

const fixture = (name: string) => readFileSync(join(fixtureDir('gemini'), name));

describe('a Gemini request in the chat form', () => {
  it('maps the system instruction, media, function calls and responses, tools, tool config and generation config', () => {
    const chat = chatRequestOf(
      {
        systemInstruction: { role: 'user', parts: [{ text: 'One.' }, { text: 'Two.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'look' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
          { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { forecast: 'sunny' } } }, { text: 'and now?' }] },
        ],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'The weather',
                parameters: { type: 'OBJECT', properties: { city: { type: 'STRING', enum: ['Paris'] } }, required: ['city'] },
              },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
        generationConfig: {
          temperature: 0.5,
          topP: 0.8,
          topK: 7,
          maxOutputTokens: 64,
          stopSequences: ['STOP'],
          candidateCount: 2,
          seed: 3,
          responseMimeType: 'application/json',
          responseSchema: { type: 'OBJECT', properties: { answer: { type: 'STRING' } } },
          thinkingConfig: { thinkingBudget: 4000 },
        },
        safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      },
      { model: 'gpt-x', streamed: true },
    );
    expect(chat).toEqual({
      model: 'gpt-x',
      stream: true,
      messages: [
        { role: 'system', content: 'One.\nTwo.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'call_0_get_weather', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0_get_weather', content: '{"forecast":"sunny"}' },
        { role: 'user', content: 'and now?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather',
            parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris'] } }, required: ['city'] },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 64,
      temperature: 0.5,
      top_p: 0.8,
      top_k: 7,
      n: 2,
      seed: 3,
      stop: ['STOP'],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'response', schema: { type: 'object', properties: { answer: { type: 'string' } } } },
      },
      reasoning_effort: 'medium',
    });
  });

  it('pairs each functionResponse with the earliest unanswered call of its name, or its id', () => {
    const chat = chatRequestOf(
      {
        contents: [
          { role: 'user', parts: [{ text: 'two cities' }] },
          {
            role: 'model',
            parts: [
              { functionCall: { name: 'f', args: { city: 'A' } } },
              { functionCall: { name: 'f', args: { city: 'B' } } },
              { functionCall: { id: 'own', name: 'g', args: {} } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { id: 'own', name: 'g', response: { ok: true } } },
              { functionResponse: { name: 'f', response: { city: 'A' } } },
              { functionResponse: { name: 'f', response: { city: 'B' } } },
            ],
          },
        ],
      },
      { model: 'm', streamed: false },
    );
    expect(chat.stream).toBeUndefined();
    expect(chat.messages[1].tool_calls!.map((call) => call.id)).toEqual(['call_0_f', 'call_1_f', 'own']);
    expect(chat.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'own', content: '{"ok":true}' },
      { role: 'tool', tool_call_id: 'call_0_f', content: '{"city":"A"}' },
      { role: 'tool', tool_call_id: 'call_1_f', content: '{"city":"B"}' },
    ]);
  });

  it('reads tool modes, thinking levels and a plain JSON answer format', () => {
    const request = (fields: Record<string, unknown>) =>
      chatRequestOf(
        { contents: [{ role: 'user', parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: [{ name: 'f' }] }], ...fields },
        { model: 'm', streamed: false },
      );
    expect(request({ toolConfig: { functionCallingConfig: { mode: 'NONE' } } }).tool_choice).toBe('none');
    expect(request({ toolConfig: { functionCallingConfig: { mode: 'AUTO' } } }).tool_choice).toBe('auto');
    expect(request({ toolConfig: { functionCallingConfig: { mode: 'ANY' } } }).tool_choice).toBe('required');
    expect(request({}).tools).toEqual([{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }]);
    const effort = (thinkingConfig: unknown) => request({ generationConfig: { thinkingConfig } }).reasoning_effort;
    expect(effort({ thinkingBudget: 1024 })).toBe('low');
    expect(effort({ thinkingBudget: 24576 })).toBe('high');
    expect(effort({ thinkingBudget: -1 })).toBe('medium');
    expect(effort({ thinkingBudget: 0 })).toBeUndefined();
    expect(effort({ thinkingLevel: 'HIGH' })).toBe('high');
    expect(request({ generationConfig: { responseMimeType: 'application/json' } }).response_format).toEqual({ type: 'json_object' });
    // one candidate is chat's default
    expect(request({ generationConfig: { candidateCount: 1 } })).not.toHaveProperty('n');
  });

  it('takes the model and the stream flag from the path, the limits from generationConfig', () => {
    expect(geminiNative.model('chat', {}, 'gemini-2.0-flash')).toBe('gemini-2.0-flash');
    expect(geminiNative.streamed({}, 'streamGenerateContent')).toBe(true);
    expect(geminiNative.streamed({ stream: true }, 'generateContent')).toBe(false);
    expect(geminiNative.streamed({}, 'constructor')).toBe(false);
    expect(geminiNative.outputLimit({ generationConfig: { maxOutputTokens: 300 } })).toBe(300);
    expect(geminiNative.answers('chat', { generationConfig: { candidateCount: 3 } })).toBe(3);
    expect(geminiNative.answers('chat', {})).toBe(1);
    expect(geminiNative.check('chat', {})?.message).toMatch(/contents/);
    expect(
      geminiNative.check('chat', { contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { maxOutputTokens: 0 } })
        ?.message,
    ).toMatch(/max_output_tokens/);
    expect(geminiNative.check('chat', { contents: [{ role: 'user', parts: [{ text: 'x' }] }] })).toBeUndefined();
  });

  it('writes a lowered limit into generationConfig and leaves the rest as it was', () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'x' }] }], generationConfig: { temperature: 0.1 } };
    expect(JSON.parse(geminiNative.encodeChanged(body, { model: 'm', outputLimit: 50, askUsage: false }))).toEqual({
      ...body,
      generationConfig: { temperature: 0.1, maxOutputTokens: 50 },
    });
    expect(geminiNative.encodeChanged(body, { model: 'm', askUsage: false })).toBe(JSON.stringify(body));
    expect(geminiNative.modelUnchanged(body, 'any-model')).toBe(true);
  });

  it('reads the key from x-goog-api-key first, else Authorization', () => {
    expect(geminiNative.authorization({ 'x-goog-api-key': 'sk-a', authorization: 'Bearer sk-b' })).toBe('Bearer sk-a');
    expect(geminiNative.authorization({ authorization: 'Bearer sk-b' })).toBe('Bearer sk-b');
    expect(geminiNative.authorization({})).toBeUndefined();
  });

  it('counts every part: texts, calls, responses, media at what Gemini bills, the tool declarations', () => {
    const text = { contents: [{ role: 'user', parts: [{ text: 'hello world' }] }] };
    const withImage = {
      contents: [{ role: 'user', parts: [{ text: 'hello world' }, { inlineData: { mimeType: 'image/png', data: 'A'.repeat(4000) } }] }],
    };
    const counted = geminiNative.promptTokens('chat', text, 'gemini-2.0-flash', {});
    // an image whose header gives no size: 16 tiles of 258 (the part itself one more)
    expect(geminiNative.promptTokens('chat', withImage, 'gemini-2.0-flash', {})).toBe(counted + 1 + 258 * 16);
    // the bound is at least the count
    expect(geminiNative.promptTokens('chat', text, 'gemini-2.0-flash', { bound: true })).toBeGreaterThanOrEqual(counted);
  });
});

describe("errors in Google's shape", () => {
  it('names the status by HTTP code', () => {
    expect([400, 401, 403, 404, 429, 500, 502, 503, 504].map(googleStatus)).toEqual([
      'INVALID_ARGUMENT',
      'UNAUTHENTICATED',
      'PERMISSION_DENIED',
      'NOT_FOUND',
      'RESOURCE_EXHAUSTED',
      'INTERNAL',
      'INTERNAL',
      'UNAVAILABLE',
      'DEADLINE_EXCEEDED',
    ]);
    expect(JSON.parse(geminiNative.errorBody({ status: 429, message: 'slow down', type: 'x', code: null }))).toEqual({
      error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' },
    });
  });
});

describe('usage of passed-through answers', () => {
  it('reads a recorded JSON answer: thoughts are output', () => {
    const bytes = fixture('chat.answer.json');
    expect(geminiNative.jsonUsage({ bytes, value: undefined })).toEqual({
      promptTokens: 301,
      completionTokens: 22 + 44,
      cachedPromptTokens: 0,
    });
    expect(geminiNative.answerText(JSON.parse(bytes.toString('utf8')))).toBe(
      'Rome is the capital of Italy — its flag has three vertical bands: green, white and red.',
    );
    const cached = Buffer.from(
      JSON.stringify({ candidates: [], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, cachedContentTokenCount: 6 } }),
    );
    expect(geminiNative.jsonUsage({ bytes: cached, value: undefined })).toEqual({
      promptTokens: 10,
      completionTokens: 2,
      cachedPromptTokens: 6,
    });
  });

  it('reads a recorded stream split at every byte: the last event usage, the text; passes the bytes unchanged', () => {
    const bytes = fixture('chat.stream.txt');
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      const watcher = geminiNative.watchStream(false);
      const out = Buffer.concat(
        [watcher.pushBytes(bytes.subarray(0, cut)), watcher.pushBytes(bytes.subarray(cut))].map((part) => Buffer.from(part)),
      );
      expect(out.equals(bytes)).toBe(true);
      expect(watcher.flush()).toBe('');
      expect(watcher.reportedUsage()).toEqual({ promptTokens: 301, completionTokens: 22 + 44, cachedPromptTokens: 0 });
      expect(watcher.streamedText()).toBe('Rome is the capital of Italy — its flag has three vertical bands: green, white and red.');
    }
  });

  it('reports nothing for a stream cut before its finish reason (the relay counts instead)', () => {
    const bytes = fixture('chat.stream.txt');
    const watcher = geminiNative.watchStream(false);
    watcher.pushBytes(bytes.subarray(0, bytes.lastIndexOf('data: ')));
    expect(watcher.reportedUsage()).toBeUndefined();
    expect(watcher.streamedText()).toBe('Rome is the capital of Italy — its flag has three');
  });
});

describe("answers written back in Gemini's shape", () => {
  const chat: ChatResponse = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-x',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me look.',
          reasoning_content: 'hmm',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        finish_reason: 'tool_calls',
      },
      { index: 1, message: { role: 'assistant', content: 'Cut' }, finish_reason: 'length' },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18 },
  };

  it('a whole answer: a candidate per choice with thought, text and functionCall parts, the finish reasons, the usage', () => {
    expect(
      JSON.parse(encodeResponse(chat, { promptTokens: 10, completionTokens: 8, cachedPromptTokens: 4, reasoningTokens: 3 }, 'my-model')),
    ).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'hmm', thought: true },
              { text: 'Let me look.' },
              { functionCall: { id: 'call_1', name: 'f', args: { a: 1 } } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
        { content: { role: 'model', parts: [{ text: 'Cut' }] }, finishReason: 'MAX_TOKENS', index: 1 },
      ],
      usageMetadata: {
        promptTokenCount: 10,
        candidatesTokenCount: 5,
        thoughtsTokenCount: 3,
        cachedContentTokenCount: 4,
        totalTokenCount: 18,
      },
      modelVersion: 'my-model',
      responseId: 'chatcmpl-1',
    });
  });

  it('a stream: an event per text chunk, function calls joined and sent whole at the end with the finish reason and usage', () => {
    const base = { id: 'chatcmpl-2', object: 'chat.completion.chunk' as const, created: 1, model: 'gpt-x' };
    const chunk = (
      delta: ChatChunk['choices'][number]['delta'],
      finish: ChatChunk['choices'][number]['finish_reason'] = null,
    ): ChatChunk => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const encoder = new GenerateContentStreamEncoder('my-model');
    let text = encoder.chunks(
      [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' }), chunk({ content: ' there' })],
      undefined,
      'fallback',
    );
    text += encoder.chunks(
      [
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
        // the usage chunk OpenAI sends last: no choices, nothing to write
        { ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } },
      ],
      undefined,
      'fallback',
    );
    text += encoder.end({ promptTokens: 9, completionTokens: 5, cachedPromptTokens: 0 }, 'fallback');
    expect(text.endsWith('\r\n\r\n')).toBe(true);
    const events = text
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((event) => {
        expect(event.startsWith('data: ')).toBe(true);
        return JSON.parse(event.slice('data: '.length));
      });
    const meta = { modelVersion: 'my-model', responseId: 'chatcmpl-2' };
    expect(events).toEqual([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, index: 0 }], ...meta },
      { candidates: [{ content: { role: 'model', parts: [{ text: ' there' }] }, index: 0 }], ...meta },
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { id: 'call_a', name: 'f', args: { a: 1 } } },
                { functionCall: { id: 'call_b', name: 'g', args: {} } },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 },
        ...meta,
      },
    ]);
    expect(encoder.error({ status: 502, message: 'upstream broke off', type: 'x', code: null })).toBe(
      'data: {"error":{"code":502,"message":"upstream broke off","status":"INTERNAL"}}\r\n\r\n',
    );
  });
});

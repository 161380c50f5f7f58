// The Gemini adaptor: the shared contract over recorded fixtures (type 24 on
// Google's host; type 11 through a mirror), then Gemini's particulars and the
// old PaLM converter's defects that must not come back.
import { describe, expect, it } from 'vitest';
import { geminiAdaptor } from '../../../server/protocols/upstream/gemini';
import { UPSTREAM_ADAPTORS, adaptorForChannelType } from '../../../server/protocols/upstream';
import {
  isUpstreamFailure,
  type ChannelConfig,
  type ChatChunk,
  type ChatRequest,
  type ChatResponse,
  type HttpTarget,
} from '../../../server/protocols/types';
import { assembleChatResponse } from '../../../server/protocols/shared';
import { callFor, decodeStream, describeAdaptor } from './contract';

describeAdaptor('gemini', geminiAdaptor);
describeAdaptor('gemini-palm', geminiAdaptor);

const channel: ChannelConfig = { type: 24, key: 'AIza-test', baseUrl: '', other: '' };
const chatCall = (model = 'gemini-2.0-flash', stream = false) => callFor('chat', model, stream);
const encode = (request: Partial<ChatRequest>, model = 'gemini-2.0-flash') =>
  JSON.parse(geminiAdaptor.encodeChat({ model, messages: [{ role: 'user', content: 'hi' }], ...request }, chatCall(model))) as Record<
    string,
    any
  >;
const decoded = (answer: unknown, model = 'gemini-2.0-flash'): ChatResponse => {
  const result = geminiAdaptor.decodeChat(JSON.stringify(answer), chatCall(model));
  if (isUpstreamFailure(result)) throw new Error(result.message);
  return result;
};
const sse = (...events: unknown[]) => Buffer.from(events.map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`).join(''));
const targetOf = (config: ChannelConfig, operation: 'chat' | 'embeddings', stream = false): HttpTarget => {
  const result = geminiAdaptor.target(config, callFor(operation, operation === 'chat' ? 'gemini-2.0-flash' : 'text-embedding-004', stream));
  if (isUpstreamFailure(result)) throw new Error(result.message);
  return result;
};

describe('gemini adaptor: registry and targets', () => {
  it('is the registered gemini adaptor, for type 11 (PaLM) as for Gemini', () => {
    expect(UPSTREAM_ADAPTORS.gemini).toBe(geminiAdaptor);
    expect(adaptorForChannelType(11)).toBe(geminiAdaptor);
  });

  it('streams with streamGenerateContent?alt=sse and sends the key as a header, never in the URL', () => {
    const plain = targetOf(channel, 'chat');
    const streamed = targetOf(channel, 'chat', true);
    expect(plain.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent');
    expect(streamed.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
    for (const target of [plain, streamed, targetOf(channel, 'embeddings')]) {
      expect(target.headers['x-goog-api-key']).toBe('AIza-test');
      expect(target.url).not.toContain('AIza-test');
      expect(target.url).not.toMatch(/[?&]key=/);
    }
  });

  it("takes a channel's base URL, with or without its version, and a model named with its resource prefix", () => {
    expect(targetOf({ ...channel, baseUrl: 'http://127.0.0.1:9999/' }, 'chat').url).toBe(
      'http://127.0.0.1:9999/v1beta/models/gemini-2.0-flash:generateContent',
    );
    expect(targetOf({ ...channel, baseUrl: 'https://proxy.example.com/google/v1beta' }, 'chat').url).toBe(
      'https://proxy.example.com/google/v1beta/models/gemini-2.0-flash:generateContent',
    );
    const tuned = geminiAdaptor.target(channel, callFor('chat', 'tunedModels/my-model-42', false)) as HttpTarget;
    expect(tuned.url).toBe('https://generativelanguage.googleapis.com/v1beta/tunedModels/my-model-42:generateContent');
  });

  it('refuses a channel without a key as a dead key, and operations Gemini lacks', () => {
    const noKey = geminiAdaptor.target({ ...channel, key: '  ' }, chatCall());
    expect(isUpstreamFailure(noKey) && noKey.deadKey).toBe(true);
    const images = geminiAdaptor.target(channel, callFor('images', 'imagen', false));
    expect(isUpstreamFailure(images)).toBe(true);
    expect(geminiAdaptor.operations.has('images')).toBe(false);
  });
});

describe('gemini adaptor: request encoding', () => {
  it('PaLM defect: topK is top_k, never max_tokens; candidateCount is n; zero values kept', () => {
    const body = encode({ max_tokens: 512, n: 3, temperature: 0, top_p: 0 });
    expect(body.generationConfig).toEqual({ maxOutputTokens: 512, candidateCount: 3, temperature: 0, topP: 0 });
    expect(body.generationConfig.topK).toBeUndefined();
    expect(encode({ top_k: 5, max_tokens: 100 }).generationConfig).toEqual({ topK: 5, maxOutputTokens: 100 });
    // max_completion_tokens wins over the deprecated max_tokens
    expect(encode({ max_completion_tokens: 64, max_tokens: 999 }).generationConfig.maxOutputTokens).toBe(64);
    expect(encode({ stop: 'END' }).generationConfig.stopSequences).toEqual(['END']);
    expect(encode({}).generationConfig).toBeUndefined();
  });

  it('sends penalties that do something, and leaves out the 0 some clients always send (a no-op)', () => {
    expect(encode({ presence_penalty: 0.5, frequency_penalty: -0.25 }).generationConfig).toEqual({
      presencePenalty: 0.5,
      frequencyPenalty: -0.25,
    });
    expect(encode({ presence_penalty: 0, frequency_penalty: 0, temperature: 1 }, 'gemini-2.5-pro').generationConfig).toEqual({
      temperature: 1,
    });
  });

  it('puts system and developer messages in systemInstruction, never a fake turn', () => {
    const body = encode({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use British spelling.' }] },
        { role: 'user', content: 'Colour of the sky?' },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Use British spelling.' }] });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Colour of the sky?' }] }]);
    expect(JSON.stringify(body.contents)).not.toMatch(/Okay/);
  });

  it('merges consecutive turns of one role (Gemini wants them alternating)', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: 'four' },
        { role: 'user', content: 'five' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'one' }, { text: 'two' }] },
      { role: 'model', parts: [{ text: 'three' }, { text: 'four' }] },
      { role: 'user', parts: [{ text: 'five' }] },
    ]);
  });

  it('sends data: images inline and web images by URI with a guessed type', () => {
    const body = encode({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these.' },
            { type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRg==' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.JPEG?size=large' } },
            { type: 'image_url', image_url: { url: 'https://example.com/render/12345' } },
            { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
          ],
        },
      ],
    });
    expect(body.contents[0].parts).toEqual([
      { text: 'Compare these.' },
      { inlineData: { mimeType: 'image/webp', data: 'UklGRg==' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPEG?size=large' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/render/12345' } },
      { inlineData: { mimeType: 'audio/mp3', data: 'SUQz' } },
    ]);
  });

  it('maps tool_choice to functionCallingConfig (and drops it without tools, which Google refuses)', () => {
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
    ];
    expect(encode({ tools, tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(encode({ tools, tool_choice: 'auto' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(encode({ tools, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(encode({ tools, tool_choice: { type: 'function', function: { name: 'lookup' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] },
    });
    expect(encode({ tools }).toolConfig).toBeUndefined();
    expect(encode({ tool_choice: 'required' }).toolConfig).toBeUndefined();
    expect(encode({ tools: [], tool_choice: 'auto' }).tools).toBeUndefined();
  });

  it('cleans tool schemas of what Google refuses: additionalProperties, $schema, $refs, unsupported formats, empty objects', () => {
    const body = encode({
      tools: [
        {
          type: 'function',
          function: {
            name: 'ping',
            description: 'No arguments.',
            parameters: { type: 'object', properties: {}, additionalProperties: false },
          },
        },
        {
          type: 'function',
          function: {
            name: 'book',
            parameters: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              $defs: {
                guest: {
                  type: 'object',
                  properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } },
                  required: ['name'],
                  additionalProperties: false,
                },
              },
              properties: {
                guests: { type: 'array', items: { $ref: '#/$defs/guest' }, minItems: 1 },
                when: { type: 'string', format: 'date-time' },
                kind: { const: 'hotel' },
                nights: { type: 'integer', minimum: 1, exclusiveMinimum: 0 },
              },
              required: ['guests', 'missing'],
              additionalProperties: false,
            },
          },
        },
      ],
    });
    const [ping, book] = body.tools[0].functionDeclarations;
    expect(ping).toEqual({ name: 'ping', description: 'No arguments.' });
    expect(book.parameters).toEqual({
      type: 'object',
      properties: {
        guests: {
          type: 'array',
          minItems: 1,
          items: { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string' } }, required: ['name'] },
        },
        when: { type: 'string', format: 'date-time' },
        kind: { enum: ['hotel'] },
        nights: { type: 'integer', minimum: 1 },
      },
      required: ['guests'],
    });
    expect(JSON.stringify(body)).not.toMatch(/additionalProperties|\$schema|\$ref|\$defs|exclusiveMinimum/);
  });

  it('asks for JSON with responseMimeType, and the schema as responseSchema', () => {
    expect(encode({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    const body = encode({
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'answer',
          strict: true,
          schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        },
      },
    });
    expect(body.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    });
    expect(encode({ response_format: { type: 'text' } }).generationConfig).toBeUndefined();
  });

  it('names a tool answer after the call it answers, and wraps answers that are not JSON objects', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'Roll two dice.' },
        {
          role: 'assistant',
          content: 'Rolling.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'roll', arguments: '{"sides":6}' } },
            { id: 'call_b', type: 'function', function: { name: 'roll_again', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '4' },
        { role: 'tool', tool_call_id: 'call_b', content: 'a six' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Roll two dice.' }] },
      {
        role: 'model',
        parts: [
          { text: 'Rolling.' },
          { functionCall: { name: 'roll', args: { sides: 6 } } },
          { functionCall: { name: 'roll_again', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'roll', response: { content: 4 } } },
          { functionResponse: { name: 'roll_again', response: { content: 'a six' } } },
        ],
      },
    ]);
  });

  it('gives Gemini 3 back the thought signature of each call, and the documented placeholder where there is none', () => {
    const history = {
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'weather', arguments: '{}' },
              extra_content: { google: { thought_signature: 'c2lnbmF0dXJl' } },
            },
            { id: 'c2', type: 'function', function: { name: 'weather', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"sky":"clear"}' },
        { role: 'tool', tool_call_id: 'c2', content: '{"sky":"rain"}' },
      ],
    } as Partial<ChatRequest>;
    const parts = encode(history, 'gemini-3-pro-preview').contents[1].parts;
    expect(parts[0].thoughtSignature).toBe('c2lnbmF0dXJl');
    expect(parts[1].thoughtSignature).toBeUndefined();
    const unsigned = encode(
      {
        ...history,
        messages: history.messages!.map((message) => (message.tool_calls ? { ...message, tool_calls: [message.tool_calls[1]] } : message)),
      },
      'gemini-3-pro-preview',
    );
    expect(unsigned.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
    expect(encode(history, 'gemini-2.5-flash').contents[1].parts[1].thoughtSignature).toBeUndefined();
  });

  it('maps reasoning_effort to a thinking budget (2.5) or level (3), and leaves models that do not think alone', () => {
    expect(encode({ reasoning_effort: 'low' }, 'gemini-2.5-flash').generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1024 } });
    expect(encode({ reasoning_effort: 'none' }, 'gemini-2.5-flash').generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(encode({ reasoning_effort: 'none' }, 'gemini-2.5-pro').generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 128 } });
    expect(encode({ reasoning_effort: 'high' }, 'gemini-3-pro-preview').generationConfig).toEqual({
      thinkingConfig: { thinkingLevel: 'high' },
    });
    expect(encode({ reasoning_effort: 'high' }, 'gemini-2.0-flash').generationConfig).toBeUndefined();
    expect(encode({ reasoning_effort: 'extreme' }, 'gemini-2.5-pro').generationConfig).toBeUndefined();
  });

  it('sends a prompt of instructions only as the prompt (Google refuses empty contents)', () => {
    const body = encode({ messages: [{ role: 'system', content: 'Say hello.' }] });
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Say hello.' }] }]);
    expect(body.systemInstruction).toBeUndefined();
  });

  it('encodes embeddings per input, and refuses token arrays it cannot read', () => {
    const call = callFor('embeddings', 'text-embedding-004', false);
    expect(JSON.parse(geminiAdaptor.encodeEmbeddings!({ model: 'text-embedding-004', input: 'one' }, call))).toEqual({
      requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'one' }] } }],
    });
    expect(() => geminiAdaptor.encodeEmbeddings!({ model: 'text-embedding-004', input: [1, 2, 3] }, call)).toThrow(/text/);
  });
});

describe('gemini adaptor: answers', () => {
  it('PaLM defect: id, object, created, model and indexes are present (the vendor id and model when given)', () => {
    const answer = decoded({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hi.' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
      modelVersion: 'gemini-2.0-flash-001',
      responseId: 'resp-1',
    });
    expect(answer).toMatchObject({ id: 'resp-1', object: 'chat.completion', created: 1_700_000_000, model: 'gemini-2.0-flash-001' });
    expect(answer.choices[0].index).toBe(0);
    const bare = decoded({
      candidates: [{ content: { parts: [{ text: 'Hi.' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 3 },
    });
    expect(bare.id).toBe('chatcmpl-contract');
    expect(bare.model).toBe('gemini-2.0-flash');
  });

  it('reads thoughts as reasoning, and bills thoughts as completion, cache reads as cached prompt', () => {
    const answer = decoded({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Let me think.', thought: true }, { text: '42' }] }, finishReason: 'STOP' }],
      usageMetadata: {
        promptTokenCount: 2100,
        cachedContentTokenCount: 2048,
        candidatesTokenCount: 1,
        thoughtsTokenCount: 120,
        totalTokenCount: 2221,
      },
      modelVersion: 'gemini-2.5-pro',
    });
    expect(answer.choices[0].message.content).toBe('42');
    expect(answer.choices[0].message.reasoning_content).toBe('Let me think.');
    expect(answer.usage).toEqual({
      prompt_tokens: 2100,
      completion_tokens: 121,
      total_tokens: 2221,
      prompt_tokens_details: { cached_tokens: 2048 },
      completion_tokens_details: { reasoning_tokens: 120 },
    });
  });

  it('maps finish reasons: MAX_TOKENS to length, the safety family to content_filter', () => {
    const finish = (reason: string) =>
      decoded({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: reason }], usageMetadata: {} }).choices[0].finish_reason;
    expect(finish('STOP')).toBe('stop');
    expect(finish('MAX_TOKENS')).toBe('length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']) expect(finish(reason)).toBe('content_filter');
    expect(finish('OTHER')).toBe('stop');
  });

  it('round trip: a function call comes back with an id and JSON arguments, and goes out again as the same call', () => {
    const answer = decoded({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ functionCall: { name: 'lookup', args: { q: 'Zürich', limit: 2 } }, thoughtSignature: 'c2ln' }],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 5 },
      responseId: 'r42',
    });
    const choice = answer.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: 'call_r42_0',
        type: 'function',
        function: { name: 'lookup', arguments: '{"q":"Zürich","limit":2}' },
        extra_content: { google: { thought_signature: 'c2ln' } },
      },
    ]);
    const body = encode({
      messages: [
        { role: 'user', content: 'Find it.' },
        choice.message,
        { role: 'tool', tool_call_id: 'call_r42_0', content: '{"hits":["a","b"]}' },
      ],
    });
    expect(body.contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'Zürich', limit: 2 } }, thoughtSignature: 'c2ln' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { hits: ['a', 'b'] } } }] },
    ]);
  });

  it('a blocked prompt is a content_filter answer billed as Google reports it', () => {
    const blocked = {
      promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
      usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
      modelVersion: 'gemini-2.0-flash',
      responseId: 'blk',
    };
    const answer = decoded(blocked);
    expect(answer.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }]);
    expect(answer.usage.prompt_tokens).toBe(9);
    const stream = decodeStream(geminiAdaptor, chatCall('gemini-2.0-flash', true), sse(blocked));
    expect(stream.chunks.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['content_filter']);
    expect(stream.done).toBe(true);
    expect(stream.usage).toEqual({ promptTokens: 9, completionTokens: 0, cachedPromptTokens: 0 });
  });

  it('an error inside a 2xx body is a failure, not an answer', () => {
    const result = geminiAdaptor.decodeChat(
      JSON.stringify({ error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } }),
      chatCall(),
    );
    expect(isUpstreamFailure(result)).toBe(true);
    expect(isUpstreamFailure(result) && result.retryable).toBe(true);
    expect(isUpstreamFailure(geminiAdaptor.decodeChat('<html>Bad gateway</html>', chatCall()))).toBe(true);
    // no candidates and no block reason: nothing to answer with
    expect(isUpstreamFailure(geminiAdaptor.decodeChat(JSON.stringify({ usageMetadata: { promptTokenCount: 3 } }), chatCall()))).toBe(true);
  });
});

describe('gemini adaptor: streams', () => {
  const words = ['The ', 'sky ', 'is ', 'blue.'];
  const wire = sse(
    ...words.map((word, index) => ({
      candidates: [
        { content: { role: 'model', parts: [{ text: word }] }, ...(index === words.length - 1 ? { finishReason: 'STOP' } : {}) },
      ],
      usageMetadata:
        index === words.length - 1
          ? { promptTokenCount: 4, candidatesTokenCount: 4, totalTokenCount: 8 }
          : { promptTokenCount: 4, totalTokenCount: 4 },
      modelVersion: 'gemini-2.0-flash',
      responseId: 'stream-1',
    })),
  );

  it('PaLM defect: a real stream, one chunk per event, role first, null finish until the last', () => {
    const { chunks, usage, done } = decodeStream(geminiAdaptor, chatCall('gemini-2.0-flash', true), wire);
    expect(chunks).toHaveLength(4);
    expect(chunks.map((chunk) => chunk.choices[0].delta.content)).toEqual(words);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.slice(1).every((chunk) => chunk.choices[0].delta.role === undefined)).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0].finish_reason)).toEqual([null, null, null, 'stop']);
    expect(
      chunks.every(
        (chunk: ChatChunk) =>
          chunk.id === 'stream-1' && chunk.object === 'chat.completion.chunk' && chunk.model === 'gemini-2.0-flash' && chunk.created > 0,
      ),
    ).toBe(true);
    expect(done).toBe(true);
    // the last usage seen, not the partial figures of the first events
    expect(usage).toEqual({ promptTokens: 4, completionTokens: 4, cachedPromptTokens: 0 });
  });

  it('a stream cut short has no usage (the relay estimates) and is not done', () => {
    const cut = wire.subarray(0, wire.indexOf('data:', wire.indexOf('is ')));
    const { chunks, usage, done } = decodeStream(geminiAdaptor, chatCall('gemini-2.0-flash', true), cut);
    expect(chunks.length).toBeGreaterThan(0);
    expect(usage).toBeUndefined();
    expect(done).toBe(false);
  });

  it('streams thoughts as reasoning_content and function calls with ids', () => {
    const { chunks, usage } = decodeStream(
      geminiAdaptor,
      chatCall('gemini-2.5-flash', true),
      sse(
        { candidates: [{ content: { role: 'model', parts: [{ text: 'Weather needed.', thought: true }] } }], responseId: 'r7' },
        {
          candidates: [
            { content: { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Oslo' } } }] }, finishReason: 'STOP' },
          ],
          usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 6, thoughtsTokenCount: 12 },
          responseId: 'r7',
        },
      ),
    );
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', reasoning_content: 'Weather needed.' });
    expect(chunks[1].choices[0].delta.tool_calls).toEqual([
      { index: 0, id: 'call_r7_0', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    ]);
    expect(chunks[1].choices[0].finish_reason).toBe('tool_calls');
    expect(usage).toEqual({ promptTokens: 30, completionTokens: 18, cachedPromptTokens: 0, reasoningTokens: 12 });
    const whole = assembleChatResponse(chunks, chatCall('gemini-2.5-flash', true), usage!);
    expect(whole.choices[0].message.reasoning_content).toBe('Weather needed.');
  });

  it('reports an error event inside the stream as the failure', () => {
    const decoder = geminiAdaptor.decodeChatStream(chatCall('gemini-2.0-flash', true));
    decoder.push(sse({ candidates: [{ content: { parts: [{ text: 'Hel' }] } }] }));
    decoder.push(sse({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }));
    decoder.end();
    expect(decoder.failure()).toMatchObject({
      status: 503,
      message: 'The model is overloaded. Please try again later.',
      retryable: true,
      deadKey: false,
    });
    expect(decoder.usage()).toBeUndefined();
  });
});

describe('gemini adaptor: failures', () => {
  const google = (code: number, status: string, message: string, reason?: string) =>
    JSON.stringify({
      error: {
        code,
        message,
        status,
        ...(reason ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' }] } : {}),
      },
    });

  it('reads dead keys: invalid, expired, leaked, suspended', () => {
    expect(
      geminiAdaptor.failure(400, google(400, 'INVALID_ARGUMENT', 'API key expired. Please renew the API key.', 'API_KEY_INVALID')),
    ).toMatchObject({
      deadKey: true,
      retryable: true,
      code: 'API_KEY_INVALID',
    });
    expect(
      geminiAdaptor.failure(403, google(403, 'PERMISSION_DENIED', 'Your API key was reported as leaked. Please use another API key.')),
    ).toMatchObject({ deadKey: true });
    expect(
      geminiAdaptor.failure(
        403,
        google(403, 'PERMISSION_DENIED', "Permission denied: Consumer 'api_key:AIza' has been suspended.", 'CONSUMER_SUSPENDED'),
      ),
    ).toMatchObject({ deadKey: true });
    // the SDKs' array form
    expect(
      geminiAdaptor.failure(
        400,
        `[${google(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID')}]`,
      ).deadKey,
    ).toBe(true);
  });

  it('retries quota and server trouble, not a malformed request', () => {
    expect(geminiAdaptor.failure(429, google(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'))).toMatchObject({
      deadKey: false,
      retryable: true,
      type: 'RESOURCE_EXHAUSTED',
    });
    expect(geminiAdaptor.failure(503, google(503, 'UNAVAILABLE', 'The model is overloaded.'))).toMatchObject({
      deadKey: false,
      retryable: true,
    });
    expect(
      geminiAdaptor.failure(400, google(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "foo": Cannot find field.')),
    ).toMatchObject({
      deadKey: false,
      retryable: false,
      status: 400,
    });
    expect(geminiAdaptor.failure(400, google(400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.'))).toMatchObject(
      { deadKey: false, retryable: true },
    );
    const html = geminiAdaptor.failure(502, '<html><body>Bad Gateway</body></html>');
    expect(html).toMatchObject({ status: 502, retryable: true, deadKey: false });
    expect(html.message).toContain('Bad Gateway');
  });
});

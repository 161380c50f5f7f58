// The client protocols through every adaptor (inboundContract.ts), one
// description each, keyed by the codec's name in INBOUND_CODECS.
import { INBOUND_CODECS } from '../../../server/protocols/inbound';
import { usageOfAnthropic } from '../../../server/protocols/inbound/anthropicMessages';
import { usageOfResponses } from '../../../server/protocols/inbound/openaiResponses';
import { usageOfGemini } from '../../../server/protocols/upstream/gemini';
import type { ChatRequest, InboundProtocol } from '../../../server/protocols/types';
import { describeInbound, type ClientAnswer, type InboundDescription } from './inboundContract';

type Event = { type?: string; [field: string]: unknown };

/** Responses' SSE (`event: x\ndata: {...}` blocks) and Gemini's (`data: {...}` blocks, CRLF) as their events. */
const eventsOf = (text: string): Event[] =>
  text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map(
      (block) =>
        JSON.parse(
          block
            .split(/\r?\n/)
            .find((line) => line.startsWith('data: '))!
            .slice('data: '.length),
        ) as Event,
    );

/** A Response's output items as the client reads them. */
function readResponse(response: { output: Event[]; status: string; usage: Parameters<typeof usageOfResponses>[0] }): ClientAnswer {
  const messages = response.output.filter((item) => item.type === 'message');
  return {
    text: messages
      .flatMap((item) => item.content as Event[])
      .filter((part) => part.type === 'output_text')
      .map((part) => String(part.text))
      .join(''),
    toolCalls: response.output
      .filter((item) => item.type === 'function_call')
      .map((item) => ({ name: String(item.name), arguments: JSON.parse(String(item.arguments)) as unknown })),
    stopReason: response.status,
    usage: usageOfResponses(response.usage),
  };
}

type GeminiCandidate = { content?: { parts?: Event[] }; finishReason?: string };

/** Gemini's candidates (the first: one answer was asked) as the client reads them; a stream's events in order. */
function readGemini(answers: Array<{ candidates?: GeminiCandidate[]; usageMetadata?: Parameters<typeof usageOfGemini>[0] }>): ClientAnswer {
  const answer: ClientAnswer = { text: '', toolCalls: [], stopReason: '', usage: usageOfGemini(undefined) };
  for (const event of answers) {
    const candidate = event.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (typeof part.text === 'string' && !part.thought) answer.text += part.text;
      const call = part.functionCall as { name: string; args: unknown } | undefined;
      if (call) answer.toolCalls.push({ name: call.name, arguments: call.args });
    }
    if (candidate?.finishReason) answer.stopReason = candidate.finishReason;
    // Google's figures are cumulative: the last event's are the answer's
    if (event.usageMetadata) answer.usage = usageOfGemini(event.usageMetadata);
  }
  return answer;
}

const DESCRIPTIONS: { [protocol in InboundProtocol]: InboundDescription } = {
  // OpenAI chat is the relay's own form: the request goes on as it is, the answer out in OpenAI's shape
  openai: {
    codec: INBOUND_CODECS.openai,
    request: (turns) => ({
      model: turns.model,
      stream: turns.stream,
      max_tokens: 256,
      messages: [
        { role: 'system', content: turns.system },
        {
          role: 'user',
          content: [
            { type: 'text', text: turns.userText },
            { type: 'image_url', image_url: { url: `data:${turns.image.mediaType};base64,${turns.image.data}` } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: turns.call.id, type: 'function', function: { name: turns.tool.name, arguments: JSON.stringify(turns.call.arguments) } },
          ],
        },
        { role: 'tool', tool_call_id: turns.call.id, content: turns.result },
      ],
      tools: [
        { type: 'function', function: { name: turns.tool.name, description: turns.tool.description, parameters: turns.tool.parameters } },
      ],
    }),
    toChat: (body) => body as unknown as ChatRequest,
  },
  anthropic: {
    codec: INBOUND_CODECS.anthropic,
    request: (turns) => ({
      model: turns.model,
      stream: turns.stream,
      max_tokens: 256,
      system: turns.system,
      tools: [{ name: turns.tool.name, description: turns.tool.description, input_schema: turns.tool.parameters }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: turns.userText },
            { type: 'image', source: { type: 'base64', media_type: turns.image.mediaType, data: turns.image.data } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: `toolu_${turns.call.id}`, name: turns.tool.name, input: turns.call.arguments }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: `toolu_${turns.call.id}`, content: [{ type: 'text', text: turns.result }] }],
        },
      ],
    }),
    toChat: (body) => INBOUND_CODECS.anthropic.chatRequest(body),
    answers: {
      readJson(body): ClientAnswer {
        const message = JSON.parse(body) as { content: Event[]; stop_reason: string; usage: Parameters<typeof usageOfAnthropic>[0] };
        return {
          text: message.content
            .filter((block) => block.type === 'text')
            .map((block) => String(block.text))
            .join(''),
          toolCalls: message.content
            .filter((block) => block.type === 'tool_use')
            .map((block) => ({ name: String(block.name), arguments: block.input })),
          stopReason: message.stop_reason,
          usage: { cacheCreationTokens: 0, ...usageOfAnthropic(message.usage) },
        };
      },
      readStream(events): ClientAnswer {
        let text = '';
        const tools: Array<{ name: string; json: string }> = [];
        const blocks = new Map<number, 'text' | 'tool'>();
        let stopReason = '';
        let usage: Parameters<typeof usageOfAnthropic>[0] = {};
        for (const event of eventsOf(events)) {
          if (event.type === 'message_start') usage = { ...usage, ...(event.message as { usage: object }).usage };
          else if (event.type === 'content_block_start') {
            const block = event.content_block as Event;
            blocks.set(event.index as number, block.type === 'tool_use' ? 'tool' : 'text');
            if (block.type === 'tool_use') tools.push({ name: String(block.name), json: '' });
          } else if (event.type === 'content_block_delta') {
            const delta = event.delta as Event;
            if (delta.type === 'text_delta') text += String(delta.text);
            else if (delta.type === 'input_json_delta') tools[tools.length - 1].json += String(delta.partial_json);
          } else if (event.type === 'message_delta') {
            stopReason = String((event.delta as Event).stop_reason);
            usage = { ...usage, ...(event.usage as object) };
          }
        }
        return {
          text,
          toolCalls: tools.map((tool) => ({ name: tool.name, arguments: JSON.parse(tool.json || '{}') as unknown })),
          stopReason,
          usage: { cacheCreationTokens: 0, ...usageOfAnthropic(usage) },
        };
      },
      stopReasons: { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' },
    },
  },
  'openai-responses': {
    codec: INBOUND_CODECS['openai-responses'],
    request: (turns) => ({
      model: turns.model,
      instructions: turns.system,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: turns.userText },
            { type: 'input_image', image_url: `data:${turns.image.mediaType};base64,${turns.image.data}`, detail: 'auto' },
          ],
        },
        { type: 'function_call', call_id: turns.call.id, name: turns.tool.name, arguments: JSON.stringify(turns.call.arguments) },
        { type: 'function_call_output', call_id: turns.call.id, output: turns.result },
      ],
      tools: [
        { type: 'function', name: turns.tool.name, description: turns.tool.description, parameters: turns.tool.parameters, strict: false },
      ],
      max_output_tokens: 256,
      stream: turns.stream,
    }),
    // the body says the model and the stream itself
    toChat: (body) => INBOUND_CODECS['openai-responses'].chatRequest(body),
    answers: {
      readJson: (body) => readResponse(JSON.parse(body) as Parameters<typeof readResponse>[0]),
      readStream(events): ClientAnswer {
        let text = '';
        const calls = new Map<string, { name: string; json: string }>();
        let final: Parameters<typeof readResponse>[0] | undefined;
        for (const event of eventsOf(events)) {
          if (event.type === 'response.output_text.delta') text += String(event.delta);
          else if (event.type === 'response.output_item.added' && (event.item as Event).type === 'function_call')
            calls.set(String((event.item as Event).id), { name: String((event.item as Event).name), json: '' });
          else if (event.type === 'response.function_call_arguments.delta') calls.get(String(event.item_id))!.json += String(event.delta);
          else if (event.type === 'response.completed' || event.type === 'response.incomplete') final = event.response as typeof final;
        }
        if (!final) throw new Error('the stream did not end with response.completed or response.incomplete');
        return {
          text,
          toolCalls: [...calls.values()].map((call) => ({ name: call.name, arguments: JSON.parse(call.json || '{}') as unknown })),
          stopReason: final.status,
          usage: usageOfResponses(final.usage),
        };
      },
      stopReasons: { stop: 'completed', length: 'incomplete', tool_calls: 'completed' },
      // Responses' usage counts cached input, not what was written to the cache
      cacheWrites: false,
    },
  },
  // the body names neither the model nor the stream: the route reads both off the path
  gemini: {
    codec: INBOUND_CODECS.gemini,
    request: (turns) => ({
      systemInstruction: { parts: [{ text: turns.system }] },
      contents: [
        { role: 'user', parts: [{ text: turns.userText }, { inlineData: { mimeType: turns.image.mediaType, data: turns.image.data } }] },
        { role: 'model', parts: [{ functionCall: { name: turns.tool.name, args: turns.call.arguments } }] },
        { role: 'user', parts: [{ functionResponse: { name: turns.tool.name, response: { output: turns.result } } }] },
      ],
      tools: [
        {
          functionDeclarations: [
            { name: turns.tool.name, description: turns.tool.description, parametersJsonSchema: turns.tool.parameters },
          ],
        },
      ],
      generationConfig: { maxOutputTokens: 256 },
    }),
    toChat: (body, call) => INBOUND_CODECS.gemini.chatRequest(body, call),
    answers: {
      readJson: (body) => readGemini([JSON.parse(body) as Parameters<typeof readGemini>[0][number]]),
      readStream: (events) => readGemini(eventsOf(events) as Parameters<typeof readGemini>[0]),
      // Gemini ends an answer that calls functions with STOP too
      stopReasons: { stop: 'STOP', length: 'MAX_TOKENS', tool_calls: 'STOP' },
      // usageMetadata counts cached content, not what was written to the cache
      cacheWrites: false,
    },
  },
};

for (const [name, description] of Object.entries(DESCRIPTIONS)) describeInbound(name, description);

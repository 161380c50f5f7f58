// The client protocols through every adaptor (inboundContract.ts), one
// description each, keyed by the codec's name in INBOUND_CODECS. The Responses
// and Gemini client protocols join with one entry each.
import { INBOUND_CODECS } from '../../../server/protocols/inbound';
import { usageOfAnthropic } from '../../../server/protocols/inbound/anthropicMessages';
import type { ChatRequest, InboundProtocol } from '../../../server/protocols/types';
import { describeInbound, type ClientAnswer, type InboundDescription } from './inboundContract';

type Event = { type?: string; [field: string]: unknown };

/** Anthropic's SSE as its events (`event: x\ndata: {...}` blocks). */
const eventsOf = (text: string): Event[] =>
  text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => JSON.parse(block.split('\n').find((line) => line.startsWith('data: '))!.slice('data: '.length)) as Event);

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
        { role: 'user', content: [{ type: 'text', text: turns.userText }, { type: 'image_url', image_url: { url: `data:${turns.image.mediaType};base64,${turns.image.data}` } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: turns.call.id, type: 'function', function: { name: turns.tool.name, arguments: JSON.stringify(turns.call.arguments) } }] },
        { role: 'tool', tool_call_id: turns.call.id, content: turns.result },
      ],
      tools: [{ type: 'function', function: { name: turns.tool.name, description: turns.tool.description, parameters: turns.tool.parameters } }],
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
        { role: 'user', content: [{ type: 'text', text: turns.userText }, { type: 'image', source: { type: 'base64', media_type: turns.image.mediaType, data: turns.image.data } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${turns.call.id}`, name: turns.tool.name, input: turns.call.arguments }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turns.call.id}`, content: [{ type: 'text', text: turns.result }] }] },
      ],
    }),
    toChat: (body) => INBOUND_CODECS.anthropic.chatRequest(body),
    answers: {
      readJson(body): ClientAnswer {
        const message = JSON.parse(body) as { content: Event[]; stop_reason: string; usage: Parameters<typeof usageOfAnthropic>[0] };
        return {
          text: message.content.filter((block) => block.type === 'text').map((block) => String(block.text)).join(''),
          toolCalls: message.content.filter((block) => block.type === 'tool_use').map((block) => ({ name: String(block.name), arguments: block.input })),
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
};

for (const [name, description] of Object.entries(DESCRIPTIONS)) describeInbound(name, description);

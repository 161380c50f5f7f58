import { describe, expect, it } from 'vitest';
import { deeplAdaptor, targetLanguageOf } from '../../../server/protocols/upstream/deepl';
import { UPSTREAM_ADAPTORS } from '../../../server/protocols/upstream';
import { isUpstreamFailure, type ChannelConfig, type ChatRequest, type HttpTarget } from '../../../server/protocols/types';
import { callFor, describeAdaptor } from './contract';

describeAdaptor('deepl', deeplAdaptor);

const pro: ChannelConfig = { type: 38, key: 'c0ffee00-1111-2222-3333-444455556666', baseUrl: '', other: '' };
const encode = (request: Partial<ChatRequest>, model = 'deepl-en-us') =>
  JSON.parse(
    deeplAdaptor.encodeChat({ model, messages: [{ role: 'user', content: 'hallo' }], ...request }, callFor('chat', model, false, pro)),
  ) as Record<string, unknown>;

describe('deepl adaptor particulars', () => {
  it('is the registered adaptor for the deepl protocol', () => {
    expect(UPSTREAM_ADAPTORS.deepl).toBe(deeplAdaptor);
  });

  it('reads the target language from the model name, as one-api names it', () => {
    expect(['deepl-zh', 'deepl-en', 'deepl-en-gb', 'deepl-pt-br', 'deepl-zh-hans'].map(targetLanguageOf)).toEqual([
      'ZH',
      'EN',
      'EN-GB',
      'PT-BR',
      'ZH-HANS',
    ]);
    expect(targetLanguageOf('gpt-4o')).toBeUndefined();
    const refused = deeplAdaptor.target(pro, callFor('chat', 'deepl', false));
    expect(isUpstreamFailure(refused) && refused.status).toBe(400);
  });

  it('sends a free key to api-free.deepl.com and any other to api.deepl.com, unless the channel has a base URL', () => {
    expect((deeplAdaptor.target(pro, callFor('chat', 'deepl-zh', false)) as HttpTarget).url).toBe('https://api.deepl.com/v2/translate');
    expect((deeplAdaptor.target({ ...pro, key: `${pro.key}:fx` }, callFor('chat', 'deepl-zh', false)) as HttpTarget).url).toBe(
      'https://api-free.deepl.com/v2/translate',
    );
    const own = deeplAdaptor.target({ ...pro, baseUrl: 'http://127.0.0.1:9/' }, callFor('chat', 'deepl-zh', false)) as HttpTarget;
    expect(own.url).toBe('http://127.0.0.1:9/v2/translate');
    expect(own.headers.Authorization).toBe(`DeepL-Auth-Key ${pro.key}`);
  });

  it('translates the last user message, its text parts joined, and asks for the billed characters', () => {
    const body = encode({
      messages: [
        { role: 'user', content: 'first' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Guten ' },
            { type: 'text', text: 'Tag' },
          ],
        },
      ],
    });
    expect(body).toEqual({ text: ['Guten Tag'], target_lang: 'EN-US', show_billed_characters: true });
  });

  it('refuses a request without text, with tools, or with tool results', () => {
    expect(() => encode({ messages: [{ role: 'system', content: 'only this' }] })).toThrow(/no text/);
    expect(() => encode({ tools: [{ type: 'function', function: { name: 'f' } }] })).toThrow(/function tools/);
    expect(() => encode({ messages: [{ role: 'tool', content: 'x', tool_call_id: 'c' }] })).toThrow(/tool results/);
  });

  it('bills the characters in the translated text when DeepL does not say how many it billed', () => {
    const decoded = deeplAdaptor.decodeChat(
      JSON.stringify({ translations: [{ detected_source_language: 'EN', text: '你好' }] }),
      callFor('chat', 'deepl-zh', false, pro),
    );
    expect(!isUpstreamFailure(decoded) && decoded.usage).toEqual({ prompt_tokens: 2, completion_tokens: 0, total_tokens: 2 });
  });

  it('reads a wrong endpoint or key (403) as a dead key, a bad language (400) as the request’s fault', () => {
    expect(deeplAdaptor.failure(403, JSON.stringify({ message: 'Wrong endpoint. Use https://api.deepl.com' }))).toMatchObject({
      deadKey: true,
      status: 403,
    });
    expect(deeplAdaptor.failure(403, '')).toMatchObject({ deadKey: true, message: 'DeepL answered HTTP 403' });
    expect(
      deeplAdaptor.failure(400, JSON.stringify({ message: 'Bad request', detail: "Value for 'target_lang' not supported." })),
    ).toMatchObject({
      deadKey: false,
      retryable: false,
      message: "Bad request: Value for 'target_lang' not supported.",
    });
    expect(deeplAdaptor.failure(429, JSON.stringify({ message: 'Too many requests' }))).toMatchObject({ retryable: true });
  });
});

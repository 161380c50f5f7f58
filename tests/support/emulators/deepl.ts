// A loopback DeepL: POST /v2/translate with `Authorization: DeepL-Auth-Key`,
// JSON `{text: [...], target_lang, show_billed_characters}`. The
// "translation" is the text tagged with its target language; the billed
// characters are the source text's characters (code points), as DeepL bills
// them, reported only when asked. Refusals are `{message}`: 403 for a key
// DeepL does not accept, 456 for the account whose quota is spent, 400 for
// an unknown target language or an empty text.
import { createServer, type ServerResponse } from 'node:http';
import {
  listenOnLoopback,
  readRequestBody,
  type EmulatedChannel,
  type EmulatedRequest,
  type ProtocolEmulator,
  type ReportedUsage,
} from './types';

const GOOD_KEY = 'emulated-deepl-key-0000-000000000000:fx';
const SPENT_KEY = 'spent-deepl-key-0000-000000000000:fx';
const TARGETS = new Set(['ZH', 'ZH-HANS', 'EN', 'EN-US', 'EN-GB', 'JA', 'DE', 'FR']);

export const DEEPL_CHANNELS: EmulatedChannel[] = [
  { type: 38, key: GOOD_KEY, deadKey: SPENT_KEY, baseUrl: (emulator) => emulator.baseUrl, other: '', chatModel: 'deepl-zh' },
];

export async function startDeeplEmulator(): Promise<ProtocolEmulator> {
  const requests: EmulatedRequest[] = [];
  const reported: ReportedUsage[] = [];
  const answer = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  };

  const server = createServer((request, response) => {
    void (async () => {
      const { text, body } = await readRequestBody(request);
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, raw: text });
      if (request.method !== 'POST' || new URL(request.url ?? '/', 'http://127.0.0.1').pathname !== '/v2/translate')
        return answer(response, 404, { message: 'Not found' });
      const authorization = request.headers.authorization ?? '';
      if (authorization === `DeepL-Auth-Key ${SPENT_KEY}`) return answer(response, 456, { message: 'Quota Exceeded' });
      if (authorization !== `DeepL-Auth-Key ${GOOD_KEY}`) return answer(response, 403, { message: 'Forbidden' });
      const fields = (body ?? {}) as { text?: unknown; target_lang?: unknown; show_billed_characters?: unknown };
      const texts = Array.isArray(fields.text) ? fields.text.filter((item): item is string => typeof item === 'string') : [];
      if (texts.length === 0 || texts.every((item) => !item)) return answer(response, 400, { message: "Parameter 'text' not specified." });
      const targetLanguage = typeof fields.target_lang === 'string' ? fields.target_lang.toUpperCase() : '';
      if (!TARGETS.has(targetLanguage)) return answer(response, 400, { message: "Value for 'target_lang' not supported." });
      const billed = texts.map((item) => [...item].length);
      reported.push({ promptTokens: billed.reduce((total, value) => total + value, 0), completionTokens: 0, cachedPromptTokens: 0 });
      answer(response, 200, {
        translations: texts.map((item, index) => ({
          detected_source_language: 'EN',
          text: `[${targetLanguage}] ${item}`,
          ...(fields.show_billed_characters === true ? { billed_characters: billed[index] } : {}),
        })),
      });
    })().catch((error: unknown) => {
      if (!response.headersSent) answer(response, 500, { message: String(error) });
      else response.destroy();
    });
  });

  const listening = await listenOnLoopback(server);
  return { ...listening, requests, reported };
}

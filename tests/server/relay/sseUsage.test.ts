import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FOLD_AT, SseUsageWatcher } from '../../../server/protocols/inbound/openaiChat';

const chunk = (content: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const usageEvent =
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4}}}\n\n';

describe('SseUsageWatcher', () => {
  it('passes events through byte for byte and reads the upstream usage', () => {
    const watcher = new SseUsageWatcher(false);
    const stream = chunk('Hel') + chunk('lo') + usageEvent + 'data: [DONE]\n\n';
    expect(watcher.push(stream)).toBe(stream);
    expect(watcher.done).toBe(true);
    expect(watcher.reportedUsage()).toEqual({ promptTokens: 12, completionTokens: 3, cachedPromptTokens: 4 });
    expect(watcher.streamedText()).toBe('Hello');
  });

  it('strips the usage-only event when the client did not ask for usage', () => {
    const watcher = new SseUsageWatcher(true);
    const output = watcher.push(chunk('a') + usageEvent + 'data: [DONE]\n\n');
    expect(output).toBe(chunk('a') + 'data: [DONE]\n\n');
    expect(watcher.reportedUsage()?.promptTokens).toBe(12);
  });

  it('holds a partial event until it completes, and normalises CRLF', () => {
    const watcher = new SseUsageWatcher(false);
    const event = chunk('split');
    expect(watcher.push(event.slice(0, 20))).toBe('');
    expect(watcher.push(event.slice(20).replace('\n\n', '\r\n\r\n'))).toBe(event);
    expect(watcher.streamedText()).toBe('split');
  });

  it('counts what was streamed when the stream is cut short without usage', () => {
    const watcher = new SseUsageWatcher(false);
    watcher.push(chunk('one ') + chunk('two'));
    expect(watcher.done).toBe(false);
    expect(watcher.reportedUsage()).toBeUndefined();
    expect(watcher.streamedText()).toBe('one two');
  });

  it('holds a bounded amount of a long stream without usage, and still counts every word of it', () => {
    const watcher = new SseUsageWatcher(false);
    let expected = '';
    let mostHeld = 0;
    for (let index = 0; index < 6000; index += 1) {
      const word = `w${index} `;
      expected += word;
      // bytes in runs of whole events, and now and then the text path (a CRLF-framed chunk)
      if (index % 500 === 499) watcher.push(chunk(word).replace('\n\n', '\r\n\r\n'));
      else watcher.pushBytes(Buffer.from(chunk(word)));
      mostHeld = Math.max(mostHeld, watcher.heldBytes());
    }
    expect(mostHeld).toBeGreaterThan(0);
    expect(mostHeld).toBeLessThanOrEqual(FOLD_AT + chunk('w0000 ').length);
    expect(watcher.reportedUsage()).toBeUndefined();
    expect(watcher.streamedText()).toBe(expected);
  });

  it('keeps only the text of what it folded, not the chunks it read it from', () => {
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    // a long word in a padded event: the text is a tenth of the bytes
    const padding = 'x'.repeat(160);
    const event = (index: number) =>
      `data: {"id":"chatcmpl-${padding}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"word number ${String(index).padStart(6, '0')} "},"finish_reason":null}]}\n\n`;
    const heapAfterGc = () => {
      collect();
      return process.memoryUsage().heapUsed;
    };
    const before = heapAfterGc();
    const watchers: SseUsageWatcher[] = [];
    let streamed = 0;
    for (let stream = 0; stream < 100; stream += 1) {
      const watcher = new SseUsageWatcher(false);
      // 4 folds a stream: events arrive ten to a read, as from a socket
      for (let read = 0; read < 40; read += 1) {
        const bytes = Buffer.from(Array.from({ length: 10 }, (_, index) => event(read * 10 + index)).join(''));
        streamed += bytes.length;
        watcher.pushBytes(bytes);
      }
      watchers.push(watcher);
    }
    const kept = heapAfterGc() - before;
    // the streams came to about 10 MB; what the watchers keep is their text (0.4 MB as two-byte strings at the most) and what each still holds unread
    expect(streamed).toBeGreaterThan(9_000_000);
    expect(kept).toBeLessThan(streamed / 4);
    expect(watchers[99].streamedText()).toContain('word number 000399 ');
  });

  it('frames a trailing event the upstream left unterminated', () => {
    const watcher = new SseUsageWatcher(false);
    expect(watcher.push('data: [DONE]')).toBe('');
    expect(watcher.flush()).toBe('data: [DONE]\n\n');
    expect(watcher.done).toBe(true);
  });

  it('passes whole chunks of bytes on untouched, and still reads usage, [DONE] and the text', () => {
    const watcher = new SseUsageWatcher(true);
    const first = Buffer.from(chunk('Hel') + chunk('lo'));
    expect(watcher.pushBytes(first)).toBe(first);
    const partial = Buffer.from(chunk(' wor'));
    expect(watcher.pushBytes(partial.subarray(0, 10))).toHaveLength(0);
    expect(String(watcher.pushBytes(partial.subarray(10)))).toBe(chunk(' wor'));
    // the usual coalesced tail: plain events, the usage-only event, [DONE] in one chunk
    const tail = chunk('ld') + usageEvent + 'data: [DONE]\n\n';
    expect(String(watcher.pushBytes(Buffer.from(tail)))).toBe(chunk('ld') + 'data: [DONE]\n\n');
    expect(watcher.done).toBe(true);
    expect(watcher.reportedUsage()).toEqual({ promptTokens: 12, completionTokens: 3, cachedPromptTokens: 4 });
    expect(watcher.streamedText()).toBe('Hello world');
  });

  it('drops a usage-only event from the middle of a chunk and passes the rest on unchanged', () => {
    const watcher = new SseUsageWatcher(true);
    const out = watcher.pushBytes(Buffer.from(chunk('a') + chunk('b') + usageEvent + chunk('c') + 'data: [DONE]\n\n'));
    expect(String(out)).toBe(chunk('a') + chunk('b') + chunk('c') + 'data: [DONE]\n\n');
    expect(watcher.reportedUsage()?.completionTokens).toBe(3);
    expect(watcher.streamedText()).toBe('abc');
  });

  it('passes OpenAI\'s "usage":null chunks on as the same bytes, and reads the final usage', () => {
    const watcher = new SseUsageWatcher(true);
    const withNull = (content: string) => chunk(content).replace('"choices"', '"usage":null,"choices"');
    const plain = Buffer.from(withNull('x') + withNull('y'));
    expect(watcher.pushBytes(plain)).toBe(plain);
    expect(String(watcher.pushBytes(Buffer.from(withNull('z') + usageEvent + 'data: [DONE]\n\n')))).toBe(
      withNull('z') + 'data: [DONE]\n\n',
    );
    expect(watcher.reportedUsage()?.promptTokens).toBe(12);
    expect(watcher.streamedText()).toBe('xyz');
    // a malformed event that ends right after the key is read, not skipped (and does not throw)
    expect(String(new SseUsageWatcher(false).pushBytes(Buffer.from('data: {"usage":\n\n')))).toBe('data: {"usage":\n\n');
  });

  it('keeps a character split between two chunks whole, with CRLF framing too', () => {
    for (const framing of ['\n\n', '\r\n\r\n']) {
      const watcher = new SseUsageWatcher(false);
      const bytes = Buffer.from(chunk('héllo, 世界').replace('\n\n', framing));
      const cut = bytes.indexOf(Buffer.from('世')) + 1;
      const out = Buffer.concat(
        [watcher.pushBytes(bytes.subarray(0, cut)), watcher.pushBytes(bytes.subarray(cut))].map((part) => Buffer.from(part)),
      );
      expect(out.toString('utf8').replace(/\r/g, '')).toBe(chunk('héllo, 世界'));
      expect(watcher.streamedText()).toBe('héllo, 世界');
    }
  });
});

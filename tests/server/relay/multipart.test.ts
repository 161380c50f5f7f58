import { describe, expect, it } from 'vitest';
import { findMultipartField, multipartBoundary, replaceMultipartField } from '../../../server/relay/multipart';

const boundary = 'XyZ';
const body = Buffer.from(
  [
    '--XyZ',
    'Content-Disposition: form-data; name="file"; filename="model"',
    '',
    'Content-Disposition: form-data; name="model"\r\n\r\nnot this',
    '--XyZ',
    'Content-Disposition: form-data; name="model"',
    '',
    'whisper-1',
    '--XyZ--',
    '',
  ].join('\r\n'),
);

describe('multipart fields', () => {
  it('reads the boundary, quoted or not', () => {
    expect(multipartBoundary('multipart/form-data; boundary=XyZ')).toBe('XyZ');
    expect(multipartBoundary('multipart/form-data; boundary="a b"; charset=utf-8')).toBe('a b');
    expect(multipartBoundary('application/json')).toBeUndefined();
  });

  it('finds a text field past a file whose name and content look like it, and swaps only its value', () => {
    const field = findMultipartField(body, boundary, 'model')!;
    expect(field.value).toBe('whisper-1');
    const swapped = replaceMultipartField(body, field, 'whisper-large');
    expect(swapped.toString()).toBe(body.toString().replace('\r\nwhisper-1\r\n', '\r\nwhisper-large\r\n'));
    expect(findMultipartField(body, boundary, 'prompt')).toBeUndefined();
    expect(findMultipartField(Buffer.from('garbage'), boundary, 'model')).toBeUndefined();
  });
});

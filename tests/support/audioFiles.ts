// Audio files of a known length, written byte by byte for the transcription tests.

/** A PCM WAV of `seconds` at `rate` Hz, `channels`, 16-bit; `declared` overrides the data chunk's size field. */
export function wav(seconds: number, rate = 8000, channels = 1, declared?: number): Buffer {
  const data = Math.round(seconds * rate) * channels * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(declared ?? data, 40);
  return Buffer.concat([header, Buffer.alloc(data, 1)]);
}

/** A multipart form with `fields` and one file part named `file`. */
export function multipartForm(fields: Record<string, string>, file: Buffer, filename = 'clip.wav', type = 'audio/wav') {
  const boundary = '----switchboard-audio-boundary-9b3f';
  const parts = Object.entries(fields).map(([name, value]) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
  );
  const body = Buffer.concat([
    ...parts,
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

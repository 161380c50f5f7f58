// An upload's seconds, read from its container as a player would: each format
// is built here byte by byte with a known length, and each lie a header can
// tell about itself is tried (a data chunk longer than the file, a first MP3
// frame at a high bitrate before many at a low one, no Duration in a WebM).
import { describe, expect, it } from 'vitest';
import { audioDuration, FALLBACK_BYTES_PER_SECOND } from '../../../server/protocols/inbound/audioDuration';
import { wav } from '../../support/audioFiles';

/** MPEG-1 layer III frames at 44.1 kHz: `kbps` picks the bitrate index (each frame is 1152 samples). */
function mp3Frames(count: number, kbps: 32 | 128 | 320): Buffer {
  const index = { 32: 1, 128: 9, 320: 14 }[kbps];
  const length = Math.floor((144 * kbps * 1000) / 44100);
  const frame = Buffer.alloc(length, 0);
  frame[0] = 0xff;
  frame[1] = 0xfb;
  frame[2] = (index << 4) | (0 << 2);
  frame[3] = 0x44;
  return Buffer.concat(Array.from({ length: count }, () => frame));
}

function flac(totalSamples: number, rate: number): Buffer {
  const bytes = Buffer.alloc(8 + 34 + 200);
  bytes.write('fLaC', 0, 'latin1');
  bytes[4] = 0x80; // last metadata block, type 0 (STREAMINFO)
  bytes.writeUIntBE(34, 5, 3);
  const info = 8;
  bytes[info + 10] = (rate >> 12) & 0xff;
  bytes[info + 11] = (rate >> 4) & 0xff;
  bytes[info + 12] = ((rate & 0x0f) << 4) | (0 << 1);
  bytes[info + 13] = (15 << 4) | Math.floor(totalSamples / 2 ** 32);
  bytes.writeUInt32BE(totalSamples % 2 ** 32, info + 14);
  return bytes;
}

function oggPage(granule: number, packet: Buffer): Buffer {
  const header = Buffer.alloc(27 + 1);
  header.write('OggS', 0, 'latin1');
  header.writeUInt32LE(granule % 2 ** 32, 6);
  header.writeUInt32LE(Math.floor(granule / 2 ** 32), 10);
  header[26] = 1;
  header[27] = packet.length;
  return Buffer.concat([header, packet]);
}

function opus(seconds: number, preSkip = 312): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1;
  head[9] = 1;
  head.writeUInt16LE(preSkip, 10);
  head.writeUInt32LE(48000, 12);
  return Buffer.concat([
    oggPage(0, head),
    oggPage(0, Buffer.alloc(100, 2)),
    oggPage(Math.round(seconds * 48000) + preSkip, Buffer.alloc(100, 3)),
  ]);
}

function box(type: string, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

function mp4(seconds: number, moovLast: boolean): Buffer {
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(1000, 12);
  mvhd.writeUInt32BE(Math.round(seconds * 1000), 16);
  const moov = box('moov', box('mvhd', mvhd));
  const ftyp = box('ftyp', Buffer.from('M4A \0\0\0\0isomM4A ', 'latin1'));
  const mdat = box('mdat', Buffer.alloc(5000, 4));
  return moovLast ? Buffer.concat([ftyp, mdat, moov]) : Buffer.concat([ftyp, moov, mdat]);
}

/** An EBML element: a 1-4 byte id as given, then the size as an 8-byte varint (or unknown). */
function ebml(id: number, body: Buffer, unknownSize = false): Buffer {
  const idBytes = Buffer.from(id.toString(16).padStart(id > 0xffffff ? 8 : id > 0xffff ? 6 : id > 0xff ? 4 : 2, '0'), 'hex');
  const size = Buffer.alloc(8);
  if (unknownSize) size.fill(0xff, 0, 8).writeUInt8(0x01, 0);
  else size.writeBigUInt64BE(BigInt(body.length) | (1n << 56n));
  return Buffer.concat([idBytes, size, body]);
}

function webm(durationMs: number | undefined): Buffer {
  const duration = Buffer.alloc(8);
  duration.writeDoubleBE(durationMs ?? 0);
  const scale = Buffer.from([0x0f, 0x42, 0x40]);
  const info = ebml(0x1549a966, Buffer.concat([ebml(0x2ad7b1, scale), ...(durationMs === undefined ? [] : [ebml(0x4489, duration)])]));
  const cluster = ebml(0x1f43b675, Buffer.alloc(4000, 5));
  return Buffer.concat([ebml(0x1a45dfa3, Buffer.from('webm')), ebml(0x18538067, Buffer.concat([info, cluster]), true)]);
}

describe('audio duration from the container', () => {
  it('WAV: the data chunk over the byte rate; a size claimed beyond the file is cut to it, a streamed one runs to the end', () => {
    expect(audioDuration(wav(60))).toEqual({ seconds: 60, source: 'wav' });
    expect(audioDuration(wav(2.5, 24000, 2)).seconds).toBeCloseTo(2.5, 6);
    expect(audioDuration(wav(10, 8000, 1, 0xfffffff0)).seconds).toBeCloseTo(10, 6);
    expect(audioDuration(wav(10, 8000, 1, 0xffffffff)).seconds).toBeCloseTo(10, 6);
    // a byte rate claimed ten times too high would make ten minutes read as one: the samples' rate wins
    const lying = wav(600);
    lying.writeUInt32LE(160_000, 28);
    expect(audioDuration(lying).seconds).toBeCloseTo(600, 6);
  });

  it('MP3: every frame counted, past an ID3 tag; a first frame at 320 kbit/s does not shorten the 32 kbit/s frames after it', () => {
    const frames = mp3Frames(1000, 128);
    expect(audioDuration(frames).seconds).toBeCloseTo((1000 * 1152) / 44100, 6);
    const tag = Buffer.alloc(10 + 300);
    tag.write('ID3', 0, 'latin1');
    tag[9] = 300 & 0x7f;
    tag[8] = 300 >> 7;
    expect(audioDuration(Buffer.concat([tag, frames])).seconds).toBeCloseTo((1000 * 1152) / 44100, 6);
    const mixed = Buffer.concat([mp3Frames(1, 320), mp3Frames(2000, 32)]);
    expect(audioDuration(mixed).seconds).toBeCloseTo((2001 * 1152) / 44100, 6);
  });

  it('FLAC: total samples over the sample rate', () => {
    expect(audioDuration(flac(44100 * 90, 44100))).toEqual({ seconds: 90, source: 'flac' });
  });

  it('Ogg Opus: the last page granule at 48 kHz, less the pre-skip', () => {
    expect(audioDuration(opus(42))).toEqual({ seconds: 42, source: 'ogg' });
  });

  it('MP4/M4A: the movie header, whether it comes before or after the media data', () => {
    expect(audioDuration(mp4(75.5, false))).toEqual({ seconds: 75.5, source: 'mp4' });
    expect(audioDuration(mp4(75.5, true))).toEqual({ seconds: 75.5, source: 'mp4' });
  });

  it('WebM: the segment duration in its timestamp scale; a recording without one is measured by its bytes', () => {
    expect(audioDuration(webm(12_345))).toEqual({ seconds: 12.345, source: 'webm' });
    const live = webm(undefined);
    expect(audioDuration(live)).toEqual({ seconds: live.length / FALLBACK_BYTES_PER_SECOND, source: 'bytes' });
  });

  it('anything else, and headers cut short, by the bytes at the leanest speech rate', () => {
    const noise = Buffer.from(Array.from({ length: 50_000 }, (_, index) => (index * 7919) % 251));
    expect(audioDuration(noise)).toEqual({ seconds: 50_000 / FALLBACK_BYTES_PER_SECOND, source: 'bytes' });
    const cut = wav(60).subarray(0, 30);
    expect(audioDuration(cut).source).toBe('bytes');
    expect(audioDuration(Buffer.alloc(0)).seconds).toBe(0);
    expect(audioDuration(mp4(10, false).subarray(0, 40)).source).toBe('bytes');
  });
});

// How long an uploaded audio file plays, read from its container's header,
// for the transcription routes: whisper-1 is billed by the second, and the
// token-billed transcribers (gpt-4o-transcribe and its kin) bill about ten
// audio tokens a second, so the seconds decide what is held before the call.
// Read from the header: WAV (its data chunk and byte rate), FLAC (STREAMINFO),
// MP3 (a Xing/Info or VBRI frame count, else the first frame's bitrate),
// MP4/M4A (the movie header), Ogg Opus/Vorbis (the last page's granule) and
// WebM/Matroska (the segment's Duration). Anything else, or a header that says
// nothing usable, is measured by its bytes at the leanest rate speech is sent
// at (FALLBACK_BYTES_PER_SECOND), which can only make it longer than it is.

/** 5.6 kbit/s, below the leanest speech codecs a transcriber takes (Opus at 6 kbit/s): bytes at this rate are never shorter than the audio. */
export const FALLBACK_BYTES_PER_SECOND = 700;

export interface AudioDuration {
  seconds: number;
  /** The container read, or 'bytes' when the fallback measured it. */
  source: 'wav' | 'flac' | 'mp3' | 'mp4' | 'ogg' | 'webm' | 'bytes';
}

/** The audio's length in seconds (never negative, finite), from its header or else its bytes. */
export function audioDuration(bytes: Buffer): AudioDuration {
  const read = readHeader(bytes);
  if (read && Number.isFinite(read.seconds) && read.seconds >= 0) return read;
  return { seconds: bytes.length / FALLBACK_BYTES_PER_SECOND, source: 'bytes' };
}

function readHeader(bytes: Buffer): AudioDuration | undefined {
  if (bytes.length < 12) return undefined;
  const tag = bytes.toString('latin1', 0, 4);
  try {
    if (tag === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WAVE') return seconds('wav', wavSeconds(bytes));
    if (tag === 'fLaC') return seconds('flac', flacSeconds(bytes));
    if (tag === 'OggS') return seconds('ogg', oggSeconds(bytes));
    if (bytes.readUInt32BE(0) === 0x1a45dfa3) return seconds('webm', matroskaSeconds(bytes));
    if (bytes.toString('latin1', 4, 8) === 'ftyp') return seconds('mp4', mp4Seconds(bytes));
    return seconds('mp3', mp3Seconds(bytes));
  } catch {
    // a header cut short reads past the end: the bytes measure it instead
    return undefined;
  }
}

const seconds = (source: AudioDuration['source'], value: number | undefined): AudioDuration | undefined =>
  value === undefined ? undefined : { seconds: value, source };

// ---- WAV: RIFF chunks; seconds = the data chunk's bytes (as far as the file holds them) / bytes a second ----

function wavSeconds(bytes: Buffer): number | undefined {
  let offset = 12;
  let rate = 0;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('latin1', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= bytes.length) {
      const channels = bytes.readUInt16LE(body + 2);
      const sampleRate = bytes.readUInt32LE(body + 4);
      const byteRate = bytes.readUInt32LE(body + 8);
      const bits = bytes.readUInt16LE(body + 14);
      const format = bytes.readUInt16LE(body);
      // PCM's rate follows from its samples; a byte-rate field that claims more would shorten the audio
      const pcm = format === 1 || format === 3 || format === 0xfffe;
      rate =
        pcm && channels > 0 && bits > 0
          ? Math.min(byteRate || Infinity, sampleRate * channels * Math.ceil(bits / 8) || Infinity)
          : byteRate;
    }
    if (id === 'data') {
      if (!(rate > 0) || !Number.isFinite(rate)) return undefined;
      // a streamed WAV says 0 or 0xFFFFFFFF: what follows is the data; a larger claim than the file holds is cut to it
      const available = bytes.length - body;
      const data = size === 0 || size === 0xffffffff ? available : Math.min(size, available);
      return data / rate;
    }
    offset = body + size + (size % 2);
  }
  return undefined;
}

// ---- FLAC: STREAMINFO's total samples / sample rate ----

function flacSeconds(bytes: Buffer): number | undefined {
  // the first metadata block is STREAMINFO: 4 bytes of block header, then 10 bytes of block sizes before the rate
  if ((bytes[4] & 0x7f) !== 0) return undefined;
  const info = 8;
  const sampleRate = (bytes[info + 10] << 12) | (bytes[info + 11] << 4) | (bytes[info + 12] >> 4);
  const totalSamples = (bytes[info + 13] & 0x0f) * 2 ** 32 + bytes.readUInt32BE(info + 14);
  // 0 samples means "not known": the bytes decide
  return sampleRate > 0 && totalSamples > 0 ? totalSamples / sampleRate : undefined;
}

// ---- Ogg: the last page's granule position, in 48 kHz samples (Opus, less its pre-skip) or the Vorbis rate ----

function oggSeconds(bytes: Buffer): number | undefined {
  // the first page carries the codec's identification header
  const segments = bytes[26];
  const packet = 27 + segments;
  let rate: number;
  let preSkip = 0;
  if (bytes.toString('latin1', packet, packet + 8) === 'OpusHead') {
    rate = 48_000;
    preSkip = bytes.readUInt16LE(packet + 10);
  } else if (bytes[packet] === 1 && bytes.toString('latin1', packet + 1, packet + 7) === 'vorbis') {
    rate = bytes.readUInt32LE(packet + 12);
  } else return undefined;
  if (!(rate > 0)) return undefined;
  // the last page that says where it ends (-1 says a packet runs on)
  let at = bytes.lastIndexOf('OggS');
  while (at > 0) {
    if (at + 14 <= bytes.length) {
      const low = bytes.readUInt32LE(at + 6);
      const high = bytes.readUInt32LE(at + 10);
      if (!(low === 0xffffffff && high === 0xffffffff)) return Math.max(0, high * 2 ** 32 + low - preSkip) / rate;
    }
    at = bytes.lastIndexOf('OggS', at - 1);
  }
  return undefined;
}

// ---- MP4/M4A: the movie header's duration / its timescale ----

function mp4Seconds(bytes: Buffer): number | undefined {
  const moov = findBox(bytes, 0, bytes.length, 'moov');
  if (!moov) return undefined;
  const mvhd = findBox(bytes, moov.start, moov.end, 'mvhd');
  if (!mvhd) return undefined;
  const version = bytes[mvhd.start];
  if (version === 1) {
    const timescale = bytes.readUInt32BE(mvhd.start + 20);
    const duration = bytes.readUInt32BE(mvhd.start + 24) * 2 ** 32 + bytes.readUInt32BE(mvhd.start + 28);
    return timescale > 0 ? duration / timescale : undefined;
  }
  const timescale = bytes.readUInt32BE(mvhd.start + 12);
  const duration = bytes.readUInt32BE(mvhd.start + 16);
  return timescale > 0 && duration !== 0xffffffff ? duration / timescale : undefined;
}

/** The first box of `type` among the boxes from `from` to `to`: its contents' range. */
function findBox(bytes: Buffer, from: number, to: number, type: string): { start: number; end: number } | undefined {
  let offset = from;
  while (offset + 8 <= to) {
    let size = bytes.readUInt32BE(offset);
    let header = 8;
    if (size === 1) {
      size = bytes.readUInt32BE(offset + 8) * 2 ** 32 + bytes.readUInt32BE(offset + 12);
      header = 16;
    } else if (size === 0) size = to - offset;
    if (size < header) return undefined;
    if (bytes.toString('latin1', offset + 4, offset + 8) === type) return { start: offset + header, end: Math.min(to, offset + size) };
    offset += size;
  }
  return undefined;
}

// ---- WebM/Matroska: Segment > Info > Duration (a float, in TimestampScale nanoseconds) ----

const EBML_SEGMENT = 0x18538067;
const EBML_INFO = 0x1549a966;
const EBML_TIMESTAMP_SCALE = 0x2ad7b1;
const EBML_DURATION = 0x4489;

/** An EBML float element's value (4 or 8 bytes long); undefined at any other length. */
function ebmlFloat(bytes: Buffer, start: number, length: number): number | undefined {
  if (length === 4) return bytes.readFloatBE(start);
  return length === 8 ? bytes.readDoubleBE(start) : undefined;
}

function matroskaSeconds(bytes: Buffer): number | undefined {
  const top = ebmlChildren(bytes, 0, bytes.length);
  const segment = top.find((element) => element.id === EBML_SEGMENT);
  if (!segment) return undefined;
  const info = ebmlChildren(bytes, segment.start, segment.end).find((element) => element.id === EBML_INFO);
  if (!info) return undefined;
  let scale = 1_000_000;
  let duration: number | undefined;
  for (const element of ebmlChildren(bytes, info.start, info.end)) {
    const length = element.end - element.start;
    if (element.id === EBML_TIMESTAMP_SCALE && length > 0 && length <= 6) scale = bytes.readUIntBE(element.start, length);
    if (element.id === EBML_DURATION) duration = ebmlFloat(bytes, element.start, length);
  }
  // a recording still being written (a browser's MediaRecorder) has no Duration: the bytes decide
  return duration !== undefined && duration > 0 && scale > 0 ? (duration * scale) / 1e9 : undefined;
}

interface EbmlElement {
  id: number;
  start: number;
  end: number;
}

/** The elements from `from` to `to` (an element of unknown size runs to `to`); at most a few hundred, from the front. */
function ebmlChildren(bytes: Buffer, from: number, to: number): EbmlElement[] {
  const found: EbmlElement[] = [];
  let offset = from;
  while (offset < to && found.length < 512) {
    const id = ebmlVarint(bytes, offset, true);
    if (!id) break;
    const size = ebmlVarint(bytes, offset + id.length, false);
    if (!size) break;
    const start = offset + id.length + size.length;
    const end = size.unknown ? to : Math.min(to, start + size.value);
    found.push({ id: id.value, start, end });
    if (size.unknown) break;
    offset = end;
  }
  return found;
}

function ebmlVarint(bytes: Buffer, offset: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } | undefined {
  if (offset >= bytes.length) return undefined;
  const first = bytes[offset];
  let length = 1;
  while (length <= 8 && !(first & (0x80 >> (length - 1)))) length += 1;
  if (length > 8 || offset + length > bytes.length) return undefined;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let index = 1; index < length; index += 1) {
    value = value * 256 + bytes[offset + index];
    if (bytes[offset + index] !== 0xff) allOnes = false;
  }
  return { value, length, unknown: !keepMarker && allOnes };
}

// ---- MP3: past an ID3v2 tag, every frame counted (a Xing or VBRI count, or the first frame's bitrate, could understate it) ----

const MP3_BITRATES: Record<string, readonly number[]> = {
  // kbit/s by index, for MPEG-1 and MPEG-2/2.5, layers III, II, I
  '1-3': [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  '1-2': [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  '1-1': [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  '2-3': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  '2-2': [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  '2-1': [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
};
const MP3_SAMPLE_RATES: Record<number, readonly number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** One MPEG audio frame's header at `offset`: its length in bytes and its seconds; undefined where no valid header starts. */
function mp3Frame(bytes: Buffer, offset: number): { length: number; seconds: number } | undefined {
  if (offset + 4 > bytes.length || bytes[offset] !== 0xff || (bytes[offset + 1] & 0xe0) !== 0xe0) return undefined;
  const versionBits = (bytes[offset + 1] >> 3) & 0x03;
  const layerBits = (bytes[offset + 1] >> 1) & 0x03;
  const bitrateIndex = bytes[offset + 2] >> 4;
  const rateIndex = (bytes[offset + 2] >> 2) & 0x03;
  if (versionBits === 1 || layerBits === 0 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const layer = 4 - layerBits;
  const mpeg1 = versionBits === 3;
  const sampleRate = MP3_SAMPLE_RATES[versionBits][rateIndex];
  const bitrate = MP3_BITRATES[`${mpeg1 ? 1 : 2}-${layer}`][bitrateIndex] * 1000;
  const padding = (bytes[offset + 2] >> 1) & 0x01;
  let samples = 1152;
  if (layer === 1) samples = 384;
  else if (layer === 3 && !mpeg1) samples = 576;
  const length =
    layer === 1 ? (Math.floor((12 * bitrate) / sampleRate) + padding) * 4 : Math.floor(((samples / 8) * bitrate) / sampleRate) + padding;
  return { length, seconds: samples / sampleRate };
}

function mp3Seconds(bytes: Buffer): number | undefined {
  let offset = 0;
  if (bytes.toString('latin1', 0, 3) === 'ID3') {
    // a syncsafe size: seven bits a byte
    offset = 10 + ((bytes[6] & 0x7f) << 21) + ((bytes[7] & 0x7f) << 14) + ((bytes[8] & 0x7f) << 7) + (bytes[9] & 0x7f);
  }
  const start = offset;
  let total = 0;
  let frames = 0;
  let framed = 0;
  while (offset < bytes.length) {
    const frame = mp3Frame(bytes, offset);
    if (frame) {
      total += frame.seconds;
      frames += 1;
      framed += frame.length;
      offset += frame.length;
      continue;
    }
    // not a frame here: on to the next byte that could start one (a decoder resyncs the same way)
    const next = bytes.indexOf(0xff, offset + 1);
    if (next === -1) break;
    offset = next;
  }
  // stray sync patterns in something else are not an MP3: unless frames make up most of it, the bytes decide
  return frames >= 2 && framed * 2 >= bytes.length - start ? total : undefined;
}

// The grammar of hostile JSON the money fuzzers build bodies from
// (tests/server/relay/moneyFuzz.test.ts, realtimeFuzz.test.ts): text of every
// size and script, numbers written with thousands of digits, deep nesting,
// and objects whose `type` names a media kind but that carry text.
import fc from 'fast-check';

/** A number written with this many digits: JSON.parse reads it as Infinity (or 0), the wire carries every digit. */
export class HugeNumber {
  constructor(readonly digits: number) {}
}

/** JSON with every HugeNumber written out digit by digit (the form a hostile client sends). */
export function hostileJson(value: unknown): string {
  const marks: string[] = [];
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (!(item instanceof HugeNumber)) return item;
    marks.push('9'.repeat(item.digits));
    return `\u0000huge${marks.length - 1}\u0000`;
  });
  return text.replace(/"\\u0000huge(\d+)\\u0000"/g, (_match, index: string) => marks[Number(index)]);
}

export const MEDIA_TYPES = ['input_audio', 'image_url', 'input_image', 'file', 'input_file', 'image', 'document', 'audio', 'video'];

/** Text of every size a prompt field takes, up to a few kilobytes, in any script. */
export const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 400 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 500, maxLength: 4000 }) },
  { weight: 1, arbitrary: fc.nat({ max: 6000 }).map((length) => 'x'.repeat(length)) },
);

/** Any JSON a client can put anywhere: scalars, huge numbers, media-typed objects with text, nesting. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.integer({ min: 20, max: 3000 }).map((digits) => new HugeNumber(digits)),
    fc.record({ type: fc.constantFrom(...MEDIA_TYPES), text, description: text, extra: tie('value') }, { requiredKeys: ['type'] }),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 12 }), tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** An object of any hostile fields, or one whose `type` names a media kind and carries text (where a protocol takes only objects). */
export const hostileObject = fc.oneof(
  fc.record({ type: fc.constantFrom(...MEDIA_TYPES), text, description: text, extra: hostileValue }, { requiredKeys: ['type'] }),
  fc.record(
    { text, inlineData: fc.record({ mimeType: fc.constantFrom('text/plain', 'image/png', 'audio/wav'), data: text }), extra: hostileValue },
    { requiredKeys: [] },
  ),
  fc.dictionary(fc.string({ maxLength: 12 }), hostileValue, { maxKeys: 5 }),
);

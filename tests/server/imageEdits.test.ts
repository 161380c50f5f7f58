// Image edits and variations (multipart) relayed to the OpenAI emulator with
// the openai SDK as the client, on SQLite and PostgreSQL: the form reaches
// the vendor intact (every image, the mask and the fields, byte for byte; only
// a mapped model's name changes), on a Custom and an Azure channel; each call
// is billed like images/generations (per image by size, n images, at the
// model's ratio) with one consume log; a vendor failure, and every bad input
// (no image, a wrong type, too large, too many, n out of range), costs nothing
// and calls no vendor. The ledger's invariant (start - logged charges - held =
// balance, for the user and the key) is checked after each call.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_MODEL_RATIO } from '../../common/options';
import { imageQuota } from '../../server/billing/prices';
import { databaseTargets } from '../support/databases';
import { ledgerState } from '../support/ledgerState';
import { resetRelay, sharedDatabase, startRelayHarness, type RelayHarness } from './relay/harness';

const TOKEN_START = 10_000_000;
const GPT_IMAGE_RATIO = 5;

/** A PNG's signature and IHDR: enough bytes for the gateway to read its format and size, with `extra` bytes after. */
function png(width: number, height: number, extra = 64): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32BE(0x89504e47, 0);
  header.writeUInt32BE(0x0d0a1a0a, 4);
  header.writeUInt32BE(13, 8);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(width, 16);
  header.writeUInt32BE(height, 20);
  return Buffer.concat([header, Buffer.alloc(extra, 7)]);
}
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 3)]);

interface ApiError {
  status: number;
  error: { message: string; type: string; param: string | null; code: string | null };
}

const targets = await databaseTargets('image edits', { besideSqlite: 'postgres' });

for (const target of targets) {
  describe.runIf(target.available)(`image edits and variations on ${target.name}`, () => {
    let database: Awaited<ReturnType<typeof sharedDatabase>>;
    let harness: RelayHarness;
    let client: OpenAI;
    let userStart = 0;

    const logCount = async () => (await harness.app.ctx.db.selectFrom('logs').select('id').where('type', '=', 2).execute()).length;
    /** start - logged charges - held = balance, for root and the key, once the relay settled; what is logged. */
    const expectInvariant = async () => {
      await harness.settled();
      const state = await ledgerState(harness.app.ctx.db, 1, harness.tokenId);
      expect(state.quota + state.userHeld + state.logged).toBe(userStart);
      expect(state.remain + state.tokenHeld + state.logged).toBe(TOKEN_START);
      return state.logged;
    };
    /** The form the vendor received last, parsed. */
    const receivedForm = () => {
      const request = harness.emulator.requests.at(-1)!;
      return new Response(new Uint8Array(request.rawBody), {
        headers: { 'content-type': String(request.headers['content-type']) },
      }).formData();
    };
    const bytesOf = async (part: unknown) => Buffer.from(await (part as Blob).arrayBuffer());
    /** One call billed `charge` with one consume log. */
    const expectBilledOnce = async (call: () => Promise<unknown>, charge: number) => {
      const logged = await expectInvariant();
      const logs = await logCount();
      await call();
      expect((await expectInvariant()) - logged).toBe(charge);
      expect(await logCount()).toBe(logs + 1);
    };
    /** A refused form: OpenAI's error shape, nothing billed, no vendor called. */
    const refused = async (form: FormData, path = '/v1/images/edits'): Promise<ApiError> => {
      const requests = harness.emulator.requests.length;
      const logged = await expectInvariant();
      const response = await fetch(`${harness.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${harness.apiKey}` },
        body: form,
      });
      const body = (await response.json()) as ApiError;
      expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
      expect(body.error.type).toBe('invalid_request_error');
      expect(harness.emulator.requests.length).toBe(requests);
      expect(await expectInvariant()).toBe(logged);
      return { status: response.status, error: body.error };
    };
    const form = (fields: Record<string, string>, files: Array<[string, Buffer, string]> = []) => {
      const made = new FormData();
      for (const [name, bytes, type] of files) made.append(name, new Blob([bytes], { type }), `${name}.bin`);
      for (const [name, value] of Object.entries(fields)) made.append(name, value);
      return made;
    };

    beforeAll(async () => {
      database = await sharedDatabase(target);
      harness = await startRelayHarness(database.config);
      client = new OpenAI({ apiKey: harness.apiKey, baseURL: `${harness.baseUrl}/v1`, maxRetries: 0 });
      await harness.app.ctx.options.set('ModelRatio', JSON.stringify({ ...DEFAULT_MODEL_RATIO, 'gpt-image-1': GPT_IMAGE_RATIO }));
      const state = await ledgerState(harness.app.ctx.db, 1, harness.tokenId);
      userStart = state.quota + state.userHeld + state.logged;
    });
    beforeEach(() => resetRelay(harness));
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    it('relays a dall-e edit with its mask intact and bills n images at the size asked', async () => {
      await harness.addChannel({ name: 'emu', key: 'sk-good', models: 'dall-e' });
      const image = png(512, 512);
      const mask = png(512, 512, 32);
      await expectBilledOnce(
        async () => {
          const edited = await client.images.edit({
            image: await toFile(image, 'fox.png', { type: 'image/png' }),
            mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
            prompt: 'a red fox in the snow',
            n: 2,
            size: '512x512',
            response_format: 'url',
          });
          expect(edited.data).toHaveLength(2);
        },
        imageQuota(8, '512x512', 2),
      );
      const received = await receivedForm();
      expect(harness.emulator.requests.at(-1)!.path).toBe('/v1/images/edits');
      expect(await bytesOf(received.get('image'))).toEqual(image);
      expect(await bytesOf(received.get('mask'))).toEqual(mask);
      expect([received.get('prompt'), received.get('n'), received.get('size'), received.get('model')]).toEqual([
        'a red fox in the snow',
        '2',
        '512x512',
        null,
      ]);
    });

    it("sends gpt-image-1's several images under a mapped model, every other part as it came", async () => {
      await harness.addChannel({
        name: 'emu',
        key: 'sk-good',
        models: 'gpt-image-1',
        model_mapping: JSON.stringify({ 'gpt-image-1': 'gpt-image-1-2025' }),
      });
      const images = [png(300, 200), JPEG];
      await expectBilledOnce(
        async () => {
          const edited = await client.images.edit({
            model: 'gpt-image-1',
            image: [await toFile(images[0], 'a.png', { type: 'image/png' }), await toFile(images[1], 'b.jpg', { type: 'image/jpeg' })],
            prompt: 'put them in one picture',
            quality: 'low',
          });
          expect(edited.data).toHaveLength(1);
        },
        imageQuota(GPT_IMAGE_RATIO, undefined, 1),
      );
      const received = await receivedForm();
      expect(received.get('model')).toBe('gpt-image-1-2025');
      expect(received.get('quality')).toBe('low');
      const parts = received.getAll('image[]');
      expect(parts).toHaveLength(2);
      expect(await Promise.all(parts.map(bytesOf))).toEqual(images);
    });

    it('relays a variation, and an edit to an Azure deployment', async () => {
      await harness.addChannel({ name: 'emu', key: 'sk-good', models: 'dall-e' });
      const image = png(256, 256);
      await expectBilledOnce(
        async () => {
          const varied = await client.images.createVariation({
            image: await toFile(image, 'fox.png', { type: 'image/png' }),
            n: 3,
            size: '256x256',
          });
          expect(varied.data).toHaveLength(3);
        },
        imageQuota(8, '256x256', 3),
      );
      expect(harness.emulator.requests.at(-1)!.path).toBe('/v1/images/variations');
      expect(await bytesOf((await receivedForm()).get('image'))).toEqual(image);

      await resetRelay(harness);
      await harness.addChannel({ type: 3, name: 'azure', key: 'sk-good', other: '2025-04-01-preview', models: 'gpt-image-1' });
      await expectBilledOnce(
        async () =>
          client.images.edit({
            model: 'gpt-image-1',
            image: await toFile(image, 'fox.png', { type: 'image/png' }),
            prompt: 'at dusk',
            size: '1024x1024',
          }),
        imageQuota(GPT_IMAGE_RATIO, '1024x1024', 1),
      );
      const request = harness.emulator.requests.at(-1)!;
      expect([request.path, request.query, request.headers['api-key']]).toEqual([
        '/openai/deployments/gpt-image-1/images/edits',
        'api-version=2025-04-01-preview',
        'sk-good',
      ]);
      expect(await bytesOf((await receivedForm()).get('image'))).toEqual(image);
    });

    it('refuses bad input in OpenAI’s shape, holding nothing and calling no vendor', async () => {
      await harness.addChannel({ name: 'emu', key: 'sk-good', models: 'dall-e,gpt-image-1' });
      const square = png(64, 64);
      const cases: Array<[FormData, string, string, string?]> = [
        [form({ prompt: 'x' }), 'image', 'missing_required_parameter'],
        [form({ prompt: 'x' }, [['image', Buffer.from('plain text, not an image'), 'image/png']]), 'image', 'invalid_image_format'],
        [form({ prompt: 'x' }, [['image', JPEG, 'image/jpeg']]), 'image', 'invalid_image_format'],
        [form({ prompt: 'x' }, [['image', png(64, 64, 4 * 1024 * 1024), 'image/png']]), 'image', 'image_too_large'],
        [form({ prompt: 'x' }, [['image', png(64, 32), 'image/png']]), 'image', 'invalid_image'],
        [form({ prompt: 'x', n: '11' }, [['image', square, 'image/png']]), 'n', 'invalid_field_value'],
        [form({ prompt: 'x', n: '0' }, [['image', square, 'image/png']]), 'n', 'invalid_field_value'],
        [form({}, [['image', square, 'image/png']]), 'prompt', 'missing_required_parameter'],
        [
          form({ prompt: 'x' }, [
            ['image', square, 'image/png'],
            ['mask', JPEG, 'image/jpeg'],
          ]),
          'mask',
          'invalid_image_format',
        ],
        [form({ prompt: 'x', size: '640x480' }, [['image', square, 'image/png']]), 'size', 'invalid_field_value'],
        [form({ model: 'gpt-image-1', prompt: 'x' }, Array(17).fill(['image[]', square, 'image/png'])), 'image', 'too_many_images'],
        [
          form({}, [
            ['image', square, 'image/png'],
            ['image', square, 'image/png'],
          ]),
          'image',
          'too_many_images',
          '/v1/images/variations',
        ],
      ];
      for (const [body, param, code, path] of cases) {
        const answer = await refused(body, path);
        expect(answer.status, answer.error.message).toBe(400);
        expect(answer.error).toMatchObject({ param, code });
      }
      const notMultipart = await harness.post('/v1/images/edits', { prompt: 'x' });
      expect(notMultipart.status).toBe(400);
    });

    it('gives everything back when the vendor fails, with no consume log', async () => {
      await harness.addChannel({ name: 'down', key: 'sk-down', models: 'dall-e' });
      const logged = await expectInvariant();
      const logs = await logCount();
      const failed = await client.images
        .edit({ image: await toFile(png(64, 64), 'fox.png', { type: 'image/png' }), prompt: 'x', n: 4 })
        .catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
      expect(await expectInvariant()).toBe(logged);
      expect(await logCount()).toBe(logs);
    });
  });
}

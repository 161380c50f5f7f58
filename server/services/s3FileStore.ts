// The bytes of /v1/files in S3-compatible storage (FILES_S3_BUCKET), the other
// FileStore beside the database's. An upload streams into a multipart upload
// (@aws-sdk/lib-storage's Upload), holding at most a few 5 MiB parts in
// memory; a failed one (a limit crossed, a client gone) is aborted, so it
// leaves no object. Downloads stream GetObject's body. Objects are named
// `<prefix>files/<fileId>`. AWS's libraries load at the first call, so a
// gateway keeping its files in the database never loads them.
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { S3FileStoreSettings } from '../config';
import type { Database } from '../db/database';
import { databaseFileStore, FILE_CHUNK_BYTES, type FileStore } from './fileStore';

/** S3's smallest part; an upload holds at most PART_QUEUE of them in memory at once. */
const PART_BYTES = 5 * 1024 * 1024;
const PART_QUEUE = 2;

type Libraries = [typeof import('@aws-sdk/client-s3'), typeof import('@aws-sdk/lib-storage')];
let loading: Promise<Libraries> | undefined;

function loadLibraries(): Promise<Libraries> {
  loading ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** The object key of a file. */
export const s3KeyOf = (settings: Pick<S3FileStoreSettings, 'prefix'>, fileId: string) => `${settings.prefix}files/${fileId}`;

export function s3FileStore(settings: S3FileStoreSettings, log?: FastifyBaseLogger): FileStore {
  const Bucket = settings.bucket;
  let client: Promise<S3Client> | undefined;
  const s3 = () =>
    (client ??= loadLibraries().then(
      ([{ S3Client }]) =>
        new S3Client({
          region: settings.region,
          endpoint: settings.endpoint,
          forcePathStyle: settings.forcePathStyle,
          credentials:
            settings.accessKeyId && settings.secretAccessKey
              ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }
              : undefined,
          // checksums only where S3 demands them: several S3-compatible services refuse the SDK's default ones
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
    ));

  return {
    async put(fileId, source, onStored) {
      const [[, { Upload }], s3Client] = await Promise.all([loadLibraries(), s3()]);
      let bytes = 0;
      // the source's own failure (a Refusal, a broken body): what put rejects with, whatever the abort answered
      let failure: { error: unknown } | undefined;
      async function* counted(): AsyncGenerator<Buffer> {
        let reported = 0;
        try {
          for await (const piece of source) {
            bytes += piece.length;
            if (bytes - reported >= FILE_CHUNK_BYTES) await onStored?.((reported = bytes));
            yield piece;
          }
        } catch (error) {
          failure = { error };
          throw error;
        }
      }
      const upload = new Upload({
        client: s3Client,
        params: { Bucket, Key: s3KeyOf(settings, fileId), Body: Readable.from(counted()), ContentType: 'application/octet-stream' },
        partSize: PART_BYTES,
        queueSize: PART_QUEUE,
        leavePartsOnError: false,
      });
      try {
        await upload.done();
      } catch (error) {
        if (!failure) throw error;
        // the upload failed on its source's error; another one here is the abort's, leaving parts in the bucket
        if (error !== failure.error)
          log?.warn({ key: s3KeyOf(settings, fileId), reason: String(error) }, 'an S3 multipart upload could not be aborted');
        throw failure.error;
      }
      await onStored?.(bytes);
      return bytes;
    },
    get(fileId) {
      async function* body(): AsyncGenerator<Buffer> {
        const [[{ GetObjectCommand }], s3Client] = await Promise.all([loadLibraries(), s3()]);
        const answer = await s3Client.send(new GetObjectCommand({ Bucket, Key: s3KeyOf(settings, fileId) }));
        yield* answer.Body as AsyncIterable<Buffer>;
      }
      return Readable.from(body(), { objectMode: false });
    },
    async delete(fileId) {
      const [[{ DeleteObjectCommand }], s3Client] = await Promise.all([loadLibraries(), s3()]);
      await s3Client.send(new DeleteObjectCommand({ Bucket, Key: s3KeyOf(settings, fileId) }));
    },
    async close() {
      if (client) (await client).destroy();
    },
  };
}

/** The store of this gateway's files: S3 when FILES_S3_BUCKET is set, else the database. */
export function configuredFileStore(config: { filesS3?: S3FileStoreSettings }, db: Kysely<Database>, log?: FastifyBaseLogger): FileStore {
  return config.filesS3 ? s3FileStore(config.filesS3, log) : databaseFileStore(db);
}

const appStores = new WeakMap<Kysely<Database>, FileStore>();

/**
 * The app's one file store, the same for every caller with its database: the files routes, the sweep and user
 * deletion share one S3 client. The files routes close it with the app.
 */
export function appFileStore(config: { filesS3?: S3FileStoreSettings }, db: Kysely<Database>, log?: FastifyBaseLogger): FileStore {
  let store = appStores.get(db);
  if (!store) appStores.set(db, (store = configuredFileStore(config, db, log)));
  return store;
}

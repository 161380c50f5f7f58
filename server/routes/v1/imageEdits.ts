// POST /v1/images/edits and /v1/images/variations: OpenAI's multipart image
// uploads, as declarations into the relay pipeline (server/relay/pipeline.ts)
// beside transcriptions. The upload goes upstream byte for byte with its own
// boundary (every image, the mask and every field as they came); only the
// `model` value changes, when a channel maps the model. OpenAI, Azure OpenAI
// (edits only: it has no dall-e-2) and the OpenAI-compatible types take them.
// What the vendor would refuse is refused first, in OpenAI's error shape and
// before anything is held: no image, an image of a type or size the model
// does not take, more images than it takes, a prompt missing or too long, an
// `n` outside 1 to 10, a size without a price.
// Price: as images/generations (images.ts), floor(ratio x sizeRatio x 1000)
// per image delivered (at most n), held for n before the call, at the ratio
// of the model named (`dall-e` when none is, as for generations).
// Reference: https://platform.openai.com/docs/api-reference/images/createEdit,
// https://platform.openai.com/docs/api-reference/images/createVariation
import { openaiChat } from '../../protocols/inbound';
import type { Operation } from '../../protocols/types';
import { IMAGE_SIZE_RATIO, imageQuota } from '../../billing/prices';
import { relayError, type RelayError } from '../../relay/errors';
import {
  findMultipartField,
  findMultipartFiles,
  multipartBoundary,
  replaceMultipartField,
  type MultipartField,
} from '../../relay/multipart';
import type { RelayCall, RelayDeclaration, RelayRoute } from '../../relay/pipeline';
import { modelNameProblem } from '../../relay/requestFields';
import { answerImages } from './images';

/** As images/generations: priced and routed as `dall-e` (OpenAI makes dall-e-2 of a form without a model). */
const DEFAULT_MODEL = 'dall-e';
const MAX_IMAGES = 10;
const MIB = 1024 * 1024;

/** What a model takes: dall-e-2 one square PNG under 4 MB; the GPT image models up to 16 PNG, WEBP or JPEG images under 50 MB each. */
interface ModelRules {
  formats: ReadonlyArray<ImageFormat>;
  maxBytes: number;
  maxImages: number;
  square: boolean;
  maxPromptCharacters: number;
}

type ImageFormat = 'png' | 'jpeg' | 'webp';

const DALL_E_RULES: ModelRules = { formats: ['png'], maxBytes: 4 * MIB, maxImages: 1, square: true, maxPromptCharacters: 1000 };
const GPT_IMAGE_RULES: ModelRules = {
  formats: ['png', 'webp', 'jpeg'],
  maxBytes: 50 * MIB,
  maxImages: 16,
  square: false,
  maxPromptCharacters: 32_000,
};
/** A mask is a PNG under 4 MB, for every model. */
const MASK_MAX_BYTES = 4 * MIB;

const rulesOf = (model: string) =>
  /^(gpt-image|chatgpt-image)/.test(model.slice(model.lastIndexOf('/') + 1)) ? GPT_IMAGE_RULES : DALL_E_RULES;

/** The format an image's first bytes say it is (its Content-Type is the client's word, its bytes are not). */
function formatOf(bytes: Buffer): ImageFormat | undefined {
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** A PNG's width and height, from its IHDR chunk. */
const pngSize = (bytes: Buffer) => (bytes.length >= 24 ? { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) } : undefined);

const invalid = (param: string, message: string, code = 'invalid_value'): RelayError => ({ ...relayError(400, message, code), param });

const FORMAT_NAMES: Record<ImageFormat, string> = { png: "'image/png'", jpeg: "'image/jpeg'", webp: "'image/webp'" };

/** One uploaded image checked against the model's rules: its problem, or undefined. */
function imageProblem(param: string, image: Buffer, rules: Pick<ModelRules, 'formats' | 'maxBytes' | 'square'>): RelayError | undefined {
  const format = formatOf(image);
  if (!format || !rules.formats.includes(format))
    return invalid(
      param,
      `Invalid file '${param}': unsupported image format. Supported file formats are ${rules.formats.map((name) => FORMAT_NAMES[name]).join(', ')}.`,
      'invalid_image_format',
    );
  if (image.length >= rules.maxBytes)
    return invalid(param, `Invalid file '${param}': the image must be less than ${rules.maxBytes / MIB} MB.`, 'image_too_large');
  const size = format === 'png' ? pngSize(image) : undefined;
  if (rules.square && size && size.width !== size.height)
    return invalid(param, `Invalid file '${param}': the image must be square.`, 'invalid_image');
  return undefined;
}

interface ImageFormState {
  upload: Buffer;
  contentType: string;
  boundary: string;
  /** The form's model field, when it has one (absent: the default is priced and routed, the form stays without one). */
  modelField: MultipartField | undefined;
  size: string | undefined;
  count: number;
}

/** A text field's value, or undefined when the form has none (or an empty one). */
function textField(upload: Buffer, boundary: string, name: string): string | undefined {
  const value = findMultipartField(upload, boundary, name)?.value;
  return value === undefined || value === '' ? undefined : value;
}

/** The images, mask and prompt checked against the model's rules. */
function uploadProblem(upload: Buffer, boundary: string, model: string, variation: boolean): RelayError | undefined {
  const rules = rulesOf(model);
  // one image as `image`, several as `image[]` (the SDKs' array form) or `image` repeated
  const images = [...findMultipartFiles(upload, boundary, 'image'), ...findMultipartFiles(upload, boundary, 'image[]')];
  if (images.length === 0) return invalid('image', "Missing required parameter: 'image'.", 'missing_required_parameter');
  const maxImages = variation ? 1 : rules.maxImages;
  if (images.length > maxImages)
    return invalid(
      'image',
      `${model} takes at most ${maxImages} image${maxImages === 1 ? '' : 's'}, and ${images.length} were sent.`,
      'too_many_images',
    );
  for (const image of images) {
    const problem = imageProblem('image', image, variation ? DALL_E_RULES : rules);
    if (problem) return problem;
  }
  if (variation) return undefined;
  for (const mask of findMultipartFiles(upload, boundary, 'mask')) {
    const problem = imageProblem('mask', mask, { formats: ['png'], maxBytes: MASK_MAX_BYTES, square: false });
    if (problem) return problem;
  }
  const prompt = textField(upload, boundary, 'prompt');
  if (prompt === undefined) return invalid('prompt', "Missing required parameter: 'prompt'.", 'missing_required_parameter');
  if ([...prompt].length > rules.maxPromptCharacters)
    return invalid('prompt', `The prompt of ${model} may be at most ${rules.maxPromptCharacters} characters.`, 'string_above_max_length');
  return undefined;
}

/** An edit's or a variation's first step: the form read for its model, its images checked, its size and count. */
function readImageForm(call: RelayCall<ImageFormState>, variation: boolean): ImageFormState | RelayError {
  const contentType = call.input.headers['content-type'] ?? '';
  const boundary = multipartBoundary(contentType);
  const upload = call.input.body;
  if (!Buffer.isBuffer(upload) || !boundary) return relayError(400, 'the request body must be multipart/form-data with an image');
  const modelField = findMultipartField(upload, boundary, 'model');
  const model = modelField?.value.trim() || DEFAULT_MODEL;
  const badName = modelNameProblem(model);
  if (badName) return badName;
  const problem = uploadProblem(upload, boundary, model, variation);
  if (problem) return problem;
  const size = textField(upload, boundary, 'size');
  if (size !== undefined && !(size in IMAGE_SIZE_RATIO))
    return invalid('size', `size must be one of ${Object.keys(IMAGE_SIZE_RATIO).join(', ')}`, 'invalid_field_value');
  const n = textField(upload, boundary, 'n');
  const count = n === undefined ? 1 : Number(n);
  if (!/^\d+$/.test(n ?? '1') || count < 1 || count > MAX_IMAGES)
    return invalid('n', `n must be an integer from 1 to ${MAX_IMAGES}`, 'invalid_field_value');
  call.model = model;
  return { upload, contentType, boundary, modelField: modelField?.value.trim() ? modelField : undefined, size, count };
}

/** The form with a model field first: for a channel that maps the default model of a form that named none. */
function withModelField(upload: Buffer, boundary: string, model: string): Buffer {
  const first = upload.indexOf(`--${boundary}`);
  const part = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n`, 'utf8');
  return Buffer.concat([upload.subarray(0, first), part, upload.subarray(first)]);
}

/** The form a channel gets: as it came, but for the channel's name of the model. */
function formFor(state: ImageFormState, model: string, upstreamModel: string): Buffer {
  if (upstreamModel === model) return state.upload;
  return state.modelField
    ? replaceMultipartField(state.upload, state.modelField, upstreamModel)
    : withModelField(state.upload, state.boundary, upstreamModel);
}

function imageFormRoute(operation: Extract<Operation, 'image_edit' | 'image_variation'>, path: string): RelayRoute<ImageFormState> {
  return {
    operation,
    inbound: openaiChat,
    body: 'multipart',

    read: (call) => readImageForm(call, operation === 'image_variation'),

    price: (call) => imageQuota(call.admission.ratio, call.state.size, call.state.count),

    upstream(call) {
      const { state, model, input } = call;
      return {
        operation,
        query: input.query,
        requestId: call.admission.requestId,
        model,
        path,
        headers: { 'content-type': state.contentType, accept: input.headers.accept ?? 'application/json' },
        body: (upstreamModel) => formFor(state, model, upstreamModel),
        signal: call.signal,
      };
    },

    answer: answerImages,
  };
}

export const IMAGE_FORM_ROUTES: readonly RelayDeclaration[] = [
  { path: '/v1/images/edits', route: imageFormRoute('image_edit', '/v1/images/edits') },
  { path: '/v1/images/variations', route: imageFormRoute('image_variation', '/v1/images/variations') },
];

// JSON Schemas (a function's parameters, a response format's schema) as
// Gemini's Schema takes them: an OpenAPI 3.0 subset, where an unknown key
// makes Google refuse the whole request. Pure: no I/O.

// The keys of Gemini's Schema (an OpenAPI 3.0 subset); anything else (additionalProperties,
// $schema, strict, const, examples...) makes Google refuse the whole request.
const SCHEMA_KEYS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
// Google accepts only these formats; `uri`, `email` and the like are refused.
const SCHEMA_FORMATS: Record<string, ReadonlySet<string>> = {
  string: new Set(['enum', 'date-time']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
};

type JsonSchema = Record<string, unknown>;

/** The node with a local $ref replaced by its definition (the node's own keys kept over it); undefined when the ref does not resolve. */
function resolvedRef(node: JsonSchema, root: JsonSchema): JsonSchema | undefined {
  if (typeof node.$ref !== 'string') return node;
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(node.$ref);
  const definitions = match ? (root[match[1]] as Record<string, unknown> | undefined) : undefined;
  const resolved = match && definitions ? definitions[decodeURIComponent(match[2])] : undefined;
  if (!resolved) return undefined;
  const { $ref: _ref, ...rest } = node;
  return { ...(resolved as JsonSchema), ...rest };
}

/** Each of a list of schemas cleaned, those Gemini cannot take left out. */
const cleanSchemas = (options: unknown[], root: JsonSchema, depth: number): JsonSchema[] =>
  options.map((option) => cleanSchema(option, root, depth)).filter((option): option is JsonSchema => option !== undefined);

type FieldCleaner = (clean: JsonSchema, value: unknown, root: JsonSchema, depth: number) => void;

/** The keywords that hold schemas (or a type union), each cleaned into `clean` its own way; the other kept keywords are copied. */
const SCHEMA_FIELDS = new Map<string, FieldCleaner>([
  [
    'properties',
    (clean, value, root, depth) => {
      if (!value || typeof value !== 'object') return;
      const properties: Record<string, JsonSchema> = {};
      for (const [name, property] of Object.entries(value as Record<string, unknown>)) {
        const cleaned = cleanSchema(property, root, depth);
        if (cleaned) properties[name] = cleaned;
      }
      if (Object.keys(properties).length > 0) clean.properties = properties;
    },
  ],
  [
    'items',
    (clean, value, root, depth) => {
      const cleaned = cleanSchema(value, root, depth);
      if (cleaned) clean.items = cleaned;
    },
  ],
  [
    'anyOf',
    (clean, value, root, depth) => {
      if (!Array.isArray(value)) return;
      const options = cleanSchemas(value, root, depth);
      if (options.length > 0) clean.anyOf = options;
    },
  ],
  [
    'type',
    (clean, value) => {
      if (!Array.isArray(value)) {
        clean.type = value;
        return;
      }
      // ["string", "null"]: Gemini says the same with nullable
      const types = (value as unknown[]).filter((type) => type !== 'null');
      if (types.length < value.length) clean.nullable = true;
      if (types.length === 1) clean.type = types[0];
      else if (types.length > 1) clean.anyOf = types.map((type) => ({ type }));
    },
  ],
]);

/** Keeps only the required names the cleaned schema's properties hold (and no required list when none are left). */
function keepKnownRequired(clean: JsonSchema): void {
  if (Array.isArray(clean.required) && clean.properties) {
    const known = clean.properties as Record<string, unknown>;
    clean.required = (clean.required as unknown[]).filter((name) => typeof name === 'string' && name in known);
    if ((clean.required as unknown[]).length === 0) delete clean.required;
  } else {
    delete clean.required;
  }
}

/** A JSON Schema made acceptable to Gemini: unknown keys dropped, local $refs inlined, type unions read. */
export function cleanSchema(schema: unknown, root: JsonSchema, depth = 0): JsonSchema | undefined {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || depth > 24) return undefined;
  const node = resolvedRef(schema as JsonSchema, root);
  if (!node) return undefined;
  const clean: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (!SCHEMA_KEYS.has(key)) continue;
    const cleanField = SCHEMA_FIELDS.get(key);
    if (cleanField) cleanField(clean, value, root, depth + 1);
    else clean[key] = value;
  }
  if (node.const !== undefined && clean.enum === undefined && typeof node.const === 'string') clean.enum = [node.const];
  if (Array.isArray(node.oneOf) && clean.anyOf === undefined) {
    const options = cleanSchemas(node.oneOf, root, depth + 1);
    if (options.length > 0) clean.anyOf = options;
  }
  if (typeof clean.format === 'string' && !SCHEMA_FORMATS[String(clean.type)]?.has(clean.format)) delete clean.format;
  keepKnownRequired(clean);
  return clean;
}

/** A function's parameters for Gemini; undefined for a function that takes none (Google refuses an empty object). */
export function functionParameters(parameters: Record<string, unknown> | undefined): JsonSchema | undefined {
  if (!parameters) return undefined;
  const clean = cleanSchema(parameters, parameters);
  if (!clean) return undefined;
  if ((clean.type === 'object' || clean.type === undefined) && !clean.properties && !clean.anyOf) return undefined;
  return clean;
}

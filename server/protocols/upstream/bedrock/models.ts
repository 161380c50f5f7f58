// The Bedrock model id for a model name a client knows. Bedrock names models
// `<vendor>.<model>-v<n>:<m>` (and cross-region inference profiles
// `us.<vendor>...`); clients ask for Anthropic's names. A channel's model
// mapping wins (the relay applies it first); these are the defaults one-api's
// AWS Claude adaptor maps (relay/adaptor/aws/claude/main.go, llama3/main.go),
// with the Claude models Bedrock gained since. Any other name passes as it is.
// Reference: https://docs.aws.amazon.com/bedrock/latest/userguide/models-supported.html
export const BEDROCK_MODEL_IDS: Readonly<Record<string, string>> = {
  'claude-instant-1.2': 'anthropic.claude-instant-v1',
  'claude-2.0': 'anthropic.claude-v2',
  'claude-2.1': 'anthropic.claude-v2:1',
  'claude-3-haiku-20240307': 'anthropic.claude-3-haiku-20240307-v1:0',
  'claude-3-sonnet-20240229': 'anthropic.claude-3-sonnet-20240229-v1:0',
  'claude-3-opus-20240229': 'anthropic.claude-3-opus-20240229-v1:0',
  'claude-3-5-sonnet-20240620': 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'claude-3-5-sonnet-20241022': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'claude-3-5-sonnet-latest': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'claude-3-5-haiku-20241022': 'anthropic.claude-3-5-haiku-20241022-v1:0',
  'claude-3-5-haiku-latest': 'anthropic.claude-3-5-haiku-20241022-v1:0',
  'claude-3-7-sonnet-20250219': 'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'claude-3-7-sonnet-latest': 'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'claude-sonnet-4-20250514': 'anthropic.claude-sonnet-4-20250514-v1:0',
  'claude-opus-4-20250514': 'anthropic.claude-opus-4-20250514-v1:0',
  'llama3-8b-8192': 'meta.llama3-8b-instruct-v1:0',
  'llama3-70b-8192': 'meta.llama3-70b-instruct-v1:0',
};

/** The Bedrock model id to call for `model`. */
export const bedrockModelId = (model: string): string => BEDROCK_MODEL_IDS[model] ?? model;

/** True for an Anthropic model on Bedrock (a plain id or a cross-region profile): it takes `top_k` and prompt-cache points. */
export const isClaudeOnBedrock = (modelId: string): boolean => /(^|\.)anthropic\.claude/.test(modelId);

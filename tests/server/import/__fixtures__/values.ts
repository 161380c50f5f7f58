// What the tests know about the fixtures' rows: the users' old passwords and the rows' clock.

/** The passwords the fixture users had in the old gateway (their hashes are in the fixtures). */
export const FIXTURE_PASSWORDS = { root: 'old-root-password', alice: 'alice-password-1', bob: 'bob-password-12', carol: 'carol-password-1' } as const;

/** 2025-06-01T00:00:00Z: when the fixture rows were "made". */
export const FIXTURE_TIME = 1_748_736_000;

/** Alice's "chat app" key, as her clients send it. */
export const ALICE_KEY = `sk-${'AliceChatApp'.repeat(4)}`;

/** one-api's channel types (relay/channeltype/define.go, 1 to 51): its latest fixture holds a channel of each. */
export const ONE_API_CHANNEL_TYPES: Readonly<Record<number, string>> = {
  1: 'OpenAI',
  2: 'API2D',
  3: 'Azure',
  4: 'CloseAI',
  5: 'OpenAI-SB',
  6: 'OpenAI Max',
  7: 'OhMyGPT',
  8: 'Custom',
  9: 'AI.LS',
  10: 'AI Proxy',
  11: 'PaLM',
  12: 'API2GPT',
  13: 'AIGC2D',
  14: 'Anthropic',
  15: 'Baidu',
  16: 'Zhipu',
  17: 'Ali',
  18: 'Xunfei',
  19: '360',
  20: 'OpenRouter',
  21: 'AI Proxy library',
  22: 'FastGPT',
  23: 'Tencent',
  24: 'Gemini',
  25: 'Moonshot',
  26: 'Baichuan',
  27: 'MiniMax',
  28: 'Mistral',
  29: 'Groq',
  30: 'Ollama',
  31: '01.AI',
  32: 'StepFun',
  33: 'AWS Claude',
  34: 'Coze',
  35: 'Cohere',
  36: 'DeepSeek',
  37: 'Cloudflare',
  38: 'DeepL',
  39: 'Together AI',
  40: 'Doubao',
  41: 'Novita',
  42: 'Vertex AI',
  43: 'Proxy',
  44: 'SiliconFlow',
  45: 'xAI',
  46: 'Replicate',
  47: 'Baidu v2',
  48: 'Xunfei v2',
  49: 'Ali Bailian',
  50: 'OpenAI Compatible',
  51: 'Gemini OpenAI-compatible',
};

/**
 * new-api's channel types (QuantumNous/new-api constant/channel.go) and the
 * type each is here (`ours`, written from both projects' vendor names);
 * without `ours` for the vendors one-api never had. Its latest fixture holds a
 * channel of each.
 */
export const NEW_API_CHANNEL_TYPES: Readonly<Record<number, { name: string; ours?: number }>> = {
  1: { name: 'OpenAI', ours: 1 },
  2: { name: 'Midjourney' },
  3: { name: 'Azure', ours: 3 },
  4: { name: 'Ollama', ours: 30 },
  5: { name: 'MidjourneyPlus' },
  6: { name: 'OpenAIMax', ours: 6 },
  7: { name: 'OhMyGPT', ours: 7 },
  8: { name: 'Custom', ours: 8 },
  9: { name: 'AILS', ours: 9 },
  10: { name: 'AIProxy', ours: 10 },
  11: { name: 'PaLM', ours: 11 },
  12: { name: 'API2GPT', ours: 12 },
  13: { name: 'AIGC2D', ours: 13 },
  14: { name: 'Anthropic', ours: 14 },
  15: { name: 'Baidu', ours: 15 },
  16: { name: 'Zhipu', ours: 16 },
  17: { name: 'Ali', ours: 17 },
  18: { name: 'Xunfei', ours: 18 },
  19: { name: '360', ours: 19 },
  20: { name: 'OpenRouter', ours: 20 },
  21: { name: 'AIProxyLibrary', ours: 21 },
  22: { name: 'FastGPT', ours: 22 },
  23: { name: 'Tencent', ours: 23 },
  24: { name: 'Gemini', ours: 24 },
  25: { name: 'Moonshot', ours: 25 },
  26: { name: 'ZhipuV4', ours: 16 },
  27: { name: 'Perplexity' },
  31: { name: 'LingYiWanWu', ours: 31 },
  33: { name: 'AWS', ours: 33 },
  34: { name: 'Cohere', ours: 35 },
  35: { name: 'MiniMax', ours: 27 },
  36: { name: 'SunoAPI' },
  37: { name: 'Dify' },
  38: { name: 'Jina', ours: 52 },
  39: { name: 'Cloudflare', ours: 37 },
  40: { name: 'SiliconFlow', ours: 44 },
  41: { name: 'VertexAI', ours: 42 },
  42: { name: 'Mistral', ours: 28 },
  43: { name: 'DeepSeek', ours: 36 },
  44: { name: 'MokaAI' },
  45: { name: 'VolcEngine', ours: 40 },
  46: { name: 'BaiduV2', ours: 47 },
  47: { name: 'Xinference' },
  48: { name: 'xAI', ours: 45 },
  49: { name: 'Coze', ours: 34 },
  50: { name: 'Kling' },
  51: { name: 'Jimeng' },
  52: { name: 'Vidu' },
  53: { name: 'Submodel' },
  54: { name: 'DoubaoVideo' },
  55: { name: 'Sora' },
  56: { name: 'Replicate', ours: 46 },
  57: { name: 'Codex' },
  58: { name: 'KuaiziLizhen' },
  100: { name: 'BlockRun' },
  101: { name: 'BlockRunVideo' },
};

/** The channels of the types the fixture's named channels do not cover have ids from here on (this plus the type). */
export const EVERY_TYPE_CHANNEL_IDS = 1000;

// The token counts of one request, as the gateway bills them: what a vendor
// reports (decoded from its own shape by its adaptor or the client's codec),
// or what the gateway counted itself when it reports nothing.

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served from the vendor's prompt cache (a part of promptTokens), billed at the cached-prompt ratio. */
  cachedPromptTokens: number;
  /** Prompt tokens written to the vendor's prompt cache (a part of promptTokens; Anthropic bills them apart). */
  cacheCreationTokens?: number;
  /** Hidden reasoning tokens (a part of completionTokens): reported back, not billed apart. */
  reasoningTokens?: number;
}

// A model's price as `GET /api/pricing` gives it to a signed-in user: US$ per
// million tokens, the user's group ratio applied.
export interface ModelPrice {
  model: string;
  input: number;
  output: number;
  /** Cached input, where the catalog or the provider's price table has it (absent: billed at the default share). */
  cache_read?: number;
  /** Input written to the vendor's prompt cache, where the vendor bills it apart. */
  cache_write?: number;
  /** Where the model's price comes from: the operator's ModelRatio, or the maintained catalog. */
  source: 'option' | 'catalog';
}

/** One stored answer of the exact response cache (migration 0032), used when no Redis is configured. */
export interface ResponseCacheTable {
  /** SHA-256 (hex) of the scope and the request as sent upstream. */
  cache_key: string;
  /** The stored answer as JSON (server/relay/responseCacheStore.ts). */
  entry: string;
  /** The entry's size in bytes: the total cap evicts the oldest rows first. */
  size: number;
  /** Milliseconds. */
  created_at: number;
  /** Milliseconds: a row past it is a miss, and removed by the next store. */
  expires_at: number;
}

export interface ResponseCacheSchema {
  response_cache: ResponseCacheTable;
}

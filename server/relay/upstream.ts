// One undici connection pool per upstream origin, reused by every request.
import { Pool } from 'undici';

const pools = new Map<string, Pool>();

export function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 256, keepAliveTimeout: 30_000, headersTimeout: 300_000, bodyTimeout: 300_000 });
    pools.set(origin, pool);
  }
  return pool;
}

export async function closePools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}

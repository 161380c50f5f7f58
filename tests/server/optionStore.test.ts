// The option cache's own rules, with the table replaced by a controllable fake:
// a periodic reload that read the table before a local write must not undo it.
import type { Kysely } from 'kysely';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../server/db/database';

const table = new Map<string, string>();
let heldReads: Array<() => void> = [];

vi.mock('../../server/repositories/options', () => ({
  // a read takes its snapshot at once but answers only when released
  loadOptionRows: async () => {
    const snapshot = [...table].map(([key, value]) => ({ key, value }));
    await new Promise<void>((release) => heldReads.push(release));
    return snapshot;
  },
  saveOption: async (_db: unknown, key: string, value: string) => {
    table.set(key, value);
  },
}));

// the server project shares a module registry between files (isolate: false in vite.config.ts): another file may
// have loaded the option cache with the real repository already, so it is loaded afresh here, with the fake, and
// dropped again at the end so that no later file of this worker gets the fake
vi.resetModules();
const { OptionStore } = await import('../../server/services/optionStore');
afterAll(() => {
  vi.resetModules();
});
const releaseReads = () => {
  for (const release of heldReads.splice(0)) release();
};

describe('OptionStore', () => {
  beforeEach(() => {
    table.clear();
    heldReads = [];
  });

  it('keeps a local write that happened while a reload was reading', async () => {
    const store = new OptionStore({} as Kysely<Database>);
    table.set('SystemName', 'Old AI');
    const stale = store.reload(); // snapshot holds "Old AI"
    await store.set('SystemName', 'Fresh AI');
    releaseReads();
    await stale;
    expect(store.get('SystemName')).toBe('Fresh AI');
  });

  it('applies rows written elsewhere, and ignores invalid ones', async () => {
    const store = new OptionStore({} as Kysely<Database>);
    table.set('SystemName', 'Elsewhere AI');
    table.set('GroupRatio', '{"vip": "two"}');
    table.set('NotAnOption', 'x');
    const reload = store.reload();
    releaseReads();
    await reload;
    expect(store.get('SystemName')).toBe('Elsewhere AI');
    expect(store.json('GroupRatio')).toEqual({ default: 1, svip: 1, vip: 1 });
  });
});

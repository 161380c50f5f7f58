// `npm run import -- <source>` as the operator runs it: a real process on a
// SQLite target named by SQLITE_PATH. The dry run writes nothing and exits 0,
// --apply imports, a second import is refused (exit 1) without --merge; the
// printed reports carry no key of any kind.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../server/config';
import { fixturePath } from './__fixtures__/build';

const folder = mkdtempSync(join(tmpdir(), 'switchboard-import-cli-'));
const target = join(folder, 'switchboard.db');
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function runImportCommand(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'server/import/cli.ts'), ...args],
      { cwd: repoRoot, env: { ...process.env, SQLITE_PATH: target, SQL_DSN: '' }, timeout: 120_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const userCount = () => {
  const database = new SQLite(target, { readonly: true });
  try {
    return (database.prepare('select count(*) as count from users').get() as { count: number }).count;
  } finally {
    database.close();
  }
};

describe('npm run import', () => {
  it('dry run, import, then refuses a second import without --merge', async () => {
    const source = fixturePath('new-api-latest');
    const dryRun = await runImportCommand(source);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain('DRY RUN');
    expect(dryRun.stdout).toContain('looks like: new-api');
    expect(dryRun.stdout).toMatch(/channel type 2 \(Midjourney\) is not relayed yet \(#4 midjourney\)/);
    expect(userCount()).toBe(0);

    const applied = await runImportCommand(source, '--apply', '--with-logs');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('Switchboard import: IMPORT');
    expect(applied.stdout).toMatch(/target after\s+user quota\s+503,309,567\s+used\s+151,507\s+token balances\s+1,005,042/);
    expect(userCount()).toBe(4);

    const again = await runImportCommand(source, '--apply');
    expect(again.code).toBe(1);
    expect(again.stdout).toContain('REFUSED');
    expect(userCount()).toBe(4);

    for (const output of [dryRun, applied, again]) {
      for (const secret of [
        'AliceChatApp',
        'sk-good',
        'sk-ant-fixture',
        '0123456789abcdef',
        '11111111111111111111111111111111',
        'smtp-secret-fixture',
      ]) {
        expect(output.stdout + output.stderr).not.toContain(secret);
      }
    }
  });

  it('prints its usage for a missing source', async () => {
    const result = await runImportCommand();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: npm run import -- <source>');
  });
});

// The README and docs/ as a reader follows them: every relative link names a
// file that exists and, with a #fragment, a heading that file has (GitHub's
// anchors); and every environment variable the gateway reads (server/ and
// common/: `process.env.X`, `env.X`, and the names config.ts passes to its
// readers) is documented in one row of a table of docs/, and in no other; and no
// paragraph runs over 120 words nor any sentence over 50, so each can be held.
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = [
  join(ROOT, 'README.md'),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name)),
];

/** The markdown outside fenced code blocks. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(match[1].replace(/`/g, ''));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every source file under a folder. */
function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === '__fixtures__' ? [] : sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Counted words: runs of text holding a letter or a digit (an inline code span counts as one). */
const wordCount = (text: string) => text.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;

/**
 * The paragraphs of a markdown file as plain text: outside code blocks and comments, a paragraph ends at a blank
 * line, a heading or a table row, and each item of a list is one; code spans count as one word, links as their text.
 */
function paragraphsOf(file: string): string[] {
  const text = prose(readFileSync(file, 'utf8')).replace(/<!--[\s\S]*?-->/g, '');
  const paragraphs: string[] = [];
  let lines: string[] = [];
  const close = () => {
    if (lines.length > 0) paragraphs.push(lines.join(' '));
    lines = [];
  };
  for (const line of text.split('\n')) {
    if (/^\s*$/.test(line) || /^\s*\|/.test(line) || line.startsWith('#')) close();
    else if (/^\s*([-*+]|\d+\.)\s/.test(line)) {
      close();
      lines.push(line.replace(/^\s*([-*+]|\d+\.)\s/, ''));
    } else lines.push(line.trim());
  }
  close();
  return paragraphs.map((paragraph) => paragraph.replace(/`[^`]*`/g, 'code').replace(/\]\([^)]*\)/g, ']'));
}

describe('the README and docs/', () => {
  it('have only links that resolve: every file exists, every #fragment is a heading of its file', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of DOCS) {
      for (const match of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1];
        if (/^[a-z]+:/i.test(target)) continue;
        checked += 1;
        const [path, fragment] = target.split('#');
        const linked = path ? resolve(dirname(file), path) : file;
        const where = `${relative(ROOT, file)} -> ${target}`;
        if (!existsSync(linked)) broken.push(`${where}: no such file`);
        else if (fragment && linked.endsWith('.md') && !anchorsOf(linked).has(fragment)) broken.push(`${where}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(15);
  });

  it('link every page of docs/ from the README', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const file of DOCS.slice(1)) expect(readme, relative(ROOT, file)).toContain(`(docs/${relative(join(ROOT, 'docs'), file)})`);
  });

  it('document every environment variable the gateway reads, once, in a table of docs/', () => {
    const names = new Set<string>();
    for (const file of [...sources(join(ROOT, 'server')), ...sources(join(ROOT, 'common'))]) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\b(?:process\.env|env)\.([A-Z][A-Z0-9_]+)/g)) names.add(match[1]);
      for (const match of text.matchAll(/FromEnv\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(match[1]);
    }
    expect(names.size).toBeGreaterThan(30);
    // a row of a table names one or more variables in its first cell (configuration.md's table, and the tables of
    // operations.md beside what they configure: metrics, workers, webhooks)
    const rows = DOCS.flatMap((file) => readFileSync(file, 'utf8').split('\n')).filter((line) => line.startsWith('| `'));
    const documented = rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]));
    const missing = [...names].filter((name) => !documented.includes(name)).sort();
    const twice = documented.filter((name, index) => documented.indexOf(name) !== index);
    expect(missing, 'read by the gateway, in no row of a table').toEqual([]);
    expect(twice, 'in two rows').toEqual([]);
  });
  it('hold no paragraph over 120 words and no sentence over 50', () => {
    const long: string[] = [];
    for (const file of DOCS) {
      for (const paragraph of paragraphsOf(file)) {
        const where = `${relative(ROOT, file)}: "${paragraph.slice(0, 60)}..."`;
        if (wordCount(paragraph) > 120) long.push(`${where} is a paragraph of ${wordCount(paragraph)} words`);
        // a sentence ends at . ! or ? followed by a space and what starts a sentence
        for (const sentence of paragraph.split(/(?<=[.!?])\s+(?=[A-Z("*\u201c])/)) {
          if (wordCount(sentence) > 50) long.push(`${where} has a sentence of ${wordCount(sentence)} words: "${sentence.slice(0, 60)}..."`);
        }
      }
    }
    expect(long).toEqual([]);
  });
});

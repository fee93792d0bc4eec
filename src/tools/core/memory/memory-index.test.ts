import { mkdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempWorkspace, type TempWorkspace } from '../fs/test-support.js';
import { MemoryIndex, toFtsQuery } from './memory-index.js';

let t: TempWorkspace;
let dbFile: string;
let index: MemoryIndex;

async function put(rel: string, content: string) {
  await mkdir(path.dirname(path.join(t.ws, rel)), { recursive: true });
  await writeFile(path.join(t.ws, rel), content);
}

beforeEach(async () => {
  t = await makeTempWorkspace();
  dbFile = path.join(t.base, 'state', 'memory.sqlite');
  await mkdir(path.dirname(dbFile));
  index = new MemoryIndex(dbFile);
  await put('MEMORY.md', '# Team\nAlice owns the billing service.\n\n# Postgres\nPostgres runs on db1. Postgres backups run nightly; postgres upgrades need a ticket.\n');
  await put('memory/2026-01-05.md', '# Standup\nWe talked about the billing bug and postgres once.\n');
  await put('memory/projects/search.md', '# Search\nThe search service uses Elasticsearch.\n');
  await put('notes.md', 'postgres postgres postgres — not a memory file\n');
});
afterEach(async () => {
  index.close();
  await t.cleanup();
});

describe('toFtsQuery', () => {
  it.each([
    ['postgres backup', '"postgres" OR "backup"'],
    ['foo AND bar* NEAR("x")', '"foo" OR "and" OR "bar" OR "near" OR "x"'],
    ['Café café', '"café"'],
    ['  ?! ', undefined],
  ])('%j → %j', (q, fts) => expect(toFtsQuery(q)).toBe(fts));
});

describe('MemoryIndex', () => {
  it('ranks the chunk that is about the query first and ignores non-memory files', async () => {
    await index.sync(t.ws);
    const hits = await index.search(t.ws, 'postgres', 10);
    expect(hits.map((h) => [h.path, h.startLine, h.endLine])).toEqual([
      ['MEMORY.md', 4, 5],
      ['memory/2026-01-05.md', 1, 2],
    ]);
    expect(hits[0]!.heading).toBe('Postgres');
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('finds words anywhere in the memory tree', async () => {
    await index.sync(t.ws);
    expect((await index.search(t.ws, 'elasticsearch', 5)).map((h) => h.path)).toEqual(['memory/projects/search.md']);
    expect(await index.search(t.ws, 'kubernetes', 5)).toEqual([]);
  });

  it('reindexes only files whose size or mtime changed', async () => {
    expect((await index.sync(t.ws)).indexed.sort()).toEqual(['MEMORY.md', 'memory/2026-01-05.md', 'memory/projects/search.md']);
    expect(await index.sync(t.ws)).toMatchObject({ indexed: [], unchanged: 3, removed: [] });

    await put('memory/2026-01-05.md', '# Standup\nWe talked about kubernetes.\n');
    const future = new Date(Date.now() + 60_000);
    await utimes(path.join(t.ws, 'memory/2026-01-05.md'), future, future);
    expect(await index.sync(t.ws)).toMatchObject({ indexed: ['memory/2026-01-05.md'], unchanged: 2 });
    expect((await index.search(t.ws, 'kubernetes', 5)).map((h) => h.path)).toEqual(['memory/2026-01-05.md']);

    await rm(path.join(t.ws, 'memory/projects/search.md'));
    expect(await index.sync(t.ws)).toMatchObject({ indexed: [], removed: ['memory/projects/search.md'] });
    expect(await index.search(t.ws, 'elasticsearch', 5)).toEqual([]);
  });

  it('does not read a file whose size and mtime are unchanged (and keeps that across restarts)', async () => {
    const file = path.join(t.ws, 'memory/projects/search.md');
    // A whole-second mtime survives being set again exactly.
    const when = new Date('2026-01-01T00:00:00Z');
    await utimes(file, when, when);
    await index.sync(t.ws);
    index.close();
    const before = await stat(file);
    // Same length, same mtime: only a re-read would notice the new word.
    await writeFile(file, '# Search\nThe search service uses Meilisearchxx.\n'.slice(0, before.size).padEnd(before.size, 'x'));
    await utimes(file, when, when);
    expect((await stat(file)).size).toBe(before.size);

    index = new MemoryIndex(dbFile);
    expect(await index.sync(t.ws)).toMatchObject({ indexed: [], unchanged: 3 });
    expect((await index.search(t.ws, 'elasticsearch', 5)).length).toBe(1);
  });

  it('skips memory files that lead outside the workspace or to non-memory files', async () => {
    await writeFile(path.join(t.outside, 'secret.md'), 'topsecret password\n');
    await symlink(path.join(t.outside, 'secret.md'), path.join(t.ws, 'memory', 'leak.md'));
    await symlink('../notes.md', path.join(t.ws, 'memory', 'alias.md'));
    const report = await index.sync(t.ws);
    expect(report.skipped.map((s) => s.path).sort()).toEqual(['memory/alias.md', 'memory/leak.md']);
    expect(report.skipped.find((s) => s.path === 'memory/leak.md')?.reason).toMatch(/Symlink escapes/);
    expect(await index.search(t.ws, 'topsecret', 5)).toEqual([]);
  });

  it('never indexes files under a symlinked subdirectory leading out', async () => {
    await mkdir(path.join(t.outside, 'notes'));
    await writeFile(path.join(t.outside, 'notes', 'x.md'), 'exfiltrated words\n');
    await symlink(path.join(t.outside, 'notes'), path.join(t.ws, 'memory', 'linked'));
    const report = await index.sync(t.ws);
    expect(report.indexed).not.toContain('memory/linked/x.md');
    expect(await index.search(t.ws, 'exfiltrated', 5)).toEqual([]);
  });

  it('skips a memory directory that is a symlink out of the workspace', async () => {
    await rm(path.join(t.ws, 'memory'), { recursive: true });
    await writeFile(path.join(t.outside, 'x.md'), 'outside words\n');
    await symlink(t.outside, path.join(t.ws, 'memory'));
    const report = await index.sync(t.ws);
    expect(report.skipped).toEqual([expect.objectContaining({ path: 'memory' })]);
    expect(await index.search(t.ws, 'outside', 5)).toEqual([]);
  });

  it('keeps workspaces apart in one database', async () => {
    const other = path.join(t.base, 'ws2');
    await mkdir(path.join(other, 'memory'), { recursive: true });
    await writeFile(path.join(other, 'memory', 'a.md'), 'postgres in the other workspace\n');
    await index.sync(t.ws);
    await index.sync(other);
    expect((await index.search(other, 'postgres', 10)).map((h) => h.path)).toEqual(['memory/a.md']);
    expect((await index.search(t.ws, 'postgres', 10)).map((h) => h.path)).not.toContain('memory/a.md');
  });
});

import { chmod, link, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempWorkspace, run, textOf, type TempWorkspace } from './test-support.js';
import { writeTool } from './write.js';

let t: TempWorkspace;

beforeAll(async () => {
  t = await makeTempWorkspace();
  await writeFile(path.join(t.outside, 'secret.txt'), 'secret\n');
  await symlink(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'link-out'));
  await symlink(t.outside, path.join(t.ws, 'dir-out'));
  await link(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'hard'));
  await writeFile(path.join(t.ws, 'target.txt'), 'old\n');
  await symlink('target.txt', path.join(t.ws, 'link-in'));
  await execa('mkfifo', [path.join(t.ws, 'pipe')]);
  await mkdir(path.join(t.ws, 'dir'));
});
afterAll(() => t.cleanup());

describe('write', () => {
  it('creates a file and its parent directories', async () => {
    const r = await run(writeTool, { path: 'a/b/c.txt', content: 'héllo\n' }, t.ws);
    expect(textOf(r)).toBe('Successfully wrote 7 bytes to a/b/c.txt');
    expect(r.details).toMatchObject({ created: true });
    expect(await readFile(path.join(t.ws, 'a/b/c.txt'), 'utf8')).toBe('héllo\n');
  });

  it('replaces a file atomically, keeps its mode and leaves no temp file', async () => {
    await writeFile(path.join(t.ws, 'keep.sh'), 'old');
    await chmod(path.join(t.ws, 'keep.sh'), 0o750);
    const r = await run(writeTool, { path: 'keep.sh', content: 'new' }, t.ws);
    expect(r.details).toMatchObject({ created: false });
    expect(await readFile(path.join(t.ws, 'keep.sh'), 'utf8')).toBe('new');
    expect((await stat(path.join(t.ws, 'keep.sh'))).mode & 0o777).toBe(0o750);
    expect((await readdir(t.ws)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('writes the target of a symlink that stays inside the workspace', async () => {
    await run(writeTool, { path: 'link-in', content: 'via link\n' }, t.ws);
    expect(await readFile(path.join(t.ws, 'target.txt'), 'utf8')).toBe('via link\n');
  });

  it('creates the workspace on a first run', async () => {
    const fresh = path.join(t.base, 'fresh-ws');
    await run(writeTool, { path: 'MEMORY.md', content: '# memory\n' }, fresh);
    expect(await readFile(path.join(fresh, 'MEMORY.md'), 'utf8')).toBe('# memory\n');
  });

  it('serialises concurrent writes to one path', async () => {
    const contents = Array.from({ length: 8 }, (_, i) => `version ${i}\n`.repeat(1000));
    await Promise.all(contents.map((content) => run(writeTool, { path: 'race.txt', content }, t.ws)));
    expect(contents).toContain(await readFile(path.join(t.ws, 'race.txt'), 'utf8'));
    expect((await readdir(t.ws)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it.each([
    ['../outside/new.txt', /Path escapes the workspace/],
    ['/tmp/warden-write-escape.txt', /Path escapes the workspace/],
    ['link-out', /Symlink escapes the workspace/],
    ['dir-out/new.txt', /Symlink escapes the workspace/],
    ['hard', /hard link/],
    ['pipe', /FIFO/],
    ['dir', /is a directory/],
    ['.', /workspace itself/],
  ])('%s → refused, nothing outside changes', async (p, message) => {
    const r = await run(writeTool, { path: p, content: 'pwned\n' }, t.ws);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(message);
    expect(await readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect((await readdir(t.outside)).sort()).toEqual(['secret.txt']);
  });
});

import { link, mkdir, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempWorkspace, type TempWorkspace } from './test-support.js';
import { checkRegularFile, resolveWorkspacePath, type GuardErrorCode } from './workspace.js';
import { openVerifiedForRead, readVerified, unlinkInWorkspace, writeAtomic } from './workspace-io.js';

let t: TempWorkspace;
let server: net.Server;
/** Creating a device node needs CAP_MKNOD (root in most containers). */
let canMknod = false;

beforeAll(async () => {
  t = await makeTempWorkspace();
  await writeFile(path.join(t.ws, 'a.txt'), 'alpha\n');
  await mkdir(path.join(t.ws, 'sub'));
  await writeFile(path.join(t.ws, 'sub', 'b.txt'), 'beta\n');
  await writeFile(path.join(t.outside, 'secret.txt'), 'secret\n');
  await symlink('a.txt', path.join(t.ws, 'link-in'));
  await symlink('sub', path.join(t.ws, 'dirlink-in'));
  await symlink(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'link-out'));
  await symlink('../outside/secret.txt', path.join(t.ws, 'link-out-relative'));
  await symlink(t.outside, path.join(t.ws, 'dirlink-out'));
  await symlink('link-out', path.join(t.ws, 'chain-out'));
  await symlink(path.join(t.outside, 'missing.txt'), path.join(t.ws, 'dangling'));
  await link(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'hard'));
  await execa('mkfifo', [path.join(t.ws, 'fifo')]);
  await symlink('/dev/zero', path.join(t.ws, 'zero-link'));
  canMknod = (await execa('mknod', [path.join(t.ws, 'null-dev'), 'c', '1', '3'], { reject: false })).exitCode === 0;
  server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path.join(t.ws, 'sock'), resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.cleanup();
});

describe('resolveWorkspacePath', () => {
  const cases: Array<{ input: string | (() => string); rel?: string; code?: GuardErrorCode }> = [
    { input: 'a.txt', rel: 'a.txt' },
    { input: 'sub/b.txt', rel: 'sub/b.txt' },
    { input: './sub/../a.txt', rel: 'a.txt' },
    { input: '@a.txt', rel: 'a.txt' },
    { input: '.', rel: '.' },
    { input: () => path.join(t.ws, 'sub', 'b.txt'), rel: 'sub/b.txt' },
    { input: 'new/dir/c.txt', rel: 'new/dir/c.txt' },
    { input: 'link-in', rel: 'a.txt' },
    { input: 'dirlink-in/b.txt', rel: 'sub/b.txt' },
    { input: 'dirlink-in/new.txt', rel: 'sub/new.txt' },
    { input: '../outside/secret.txt', code: 'outside-workspace' },
    { input: 'sub/../../outside/secret.txt', code: 'outside-workspace' },
    { input: '..', code: 'outside-workspace' },
    { input: () => path.join(t.outside, 'secret.txt'), code: 'outside-workspace' },
    { input: '/etc/passwd', code: 'outside-workspace' },
    { input: '~/x.txt', code: 'outside-workspace' },
    { input: 'link-out', code: 'symlink-escape' },
    { input: 'link-out-relative', code: 'symlink-escape' },
    { input: 'chain-out', code: 'symlink-escape' },
    { input: 'dirlink-out/secret.txt', code: 'symlink-escape' },
    { input: 'dirlink-out/new.txt', code: 'symlink-escape' },
    { input: 'dangling', code: 'dangling-symlink' },
    { input: '', code: 'invalid-path' },
    { input: 'a\0.txt', code: 'invalid-path' },
    { input: 'a.txt/inner', code: 'invalid-path' },
  ];
  it.each(cases)('$input', async ({ input, rel, code }) => {
    const spelled = typeof input === 'function' ? input() : input;
    const r = await resolveWorkspacePath(t.ws, spelled);
    if (code) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.code).toBe(code);
    } else {
      expect(r).toMatchObject({ ok: true, rel });
    }
  });

  it('keeps a final symlink unresolved when asked (unlink removes the link, not its target)', async () => {
    const r = await resolveWorkspacePath(t.ws, 'link-out', { keepFinalLink: true });
    expect(r).toMatchObject({ ok: true, rel: 'link-out' });
    if (r.ok) expect(r.stat?.isSymbolicLink()).toBe(true);
    expect((await resolveWorkspacePath(t.ws, 'dirlink-out/secret.txt', { keepFinalLink: true })).ok).toBe(false);
  });

  it('names the home directory as outside (it is not the workspace)', () => {
    expect(os.homedir().startsWith(t.ws)).toBe(false);
  });

  it('refuses everything when the workspace does not exist', async () => {
    const r = await resolveWorkspacePath(path.join(t.base, 'nope'), 'a.txt');
    expect(r).toMatchObject({ ok: false, code: 'workspace-missing' });
  });
});

describe('opening files', () => {
  const refusals: Array<[string, GuardErrorCode]> = [
    ['hard', 'hardlink'],
    ['fifo', 'not-file'],
    ['sock', 'not-file'],
    ['sub', 'is-directory'],
    ['.', 'is-directory'],
    ['missing.txt', 'not-found'],
  ];
  it.each(refusals)('%s is refused as %s', async (input, code) => {
    const r = await resolveWorkspacePath(t.ws, input);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const opened = await openVerifiedForRead(r);
    expect(opened).toMatchObject({ ok: false, code });
  });

  it('refuses a character device inside the workspace', async (ctx) => {
    if (!canMknod) ctx.skip();
    const r = await resolveWorkspacePath(t.ws, 'null-dev');
    if (!r.ok) throw new Error(r.message);
    expect(await openVerifiedForRead(r)).toMatchObject({ ok: false, code: 'not-file', message: expect.stringMatching(/character device/) });
  });

  it('refuses a symlink to a device outside the workspace', async () => {
    expect(await resolveWorkspacePath(t.ws, 'zero-link')).toMatchObject({ ok: false, code: 'symlink-escape' });
  });

  it('reads a regular file and an in-workspace symlink to it', async () => {
    for (const input of ['a.txt', 'link-in']) {
      const r = await resolveWorkspacePath(t.ws, input);
      if (!r.ok) throw new Error(r.message);
      const read = await readVerified(r);
      expect(read.ok && read.data.toString()).toBe('alpha\n');
    }
  });

  it('checkRegularFile refuses a file with a second hard link even inside the workspace', async () => {
    await writeFile(path.join(t.ws, 'twin1'), 'x');
    await link(path.join(t.ws, 'twin1'), path.join(t.ws, 'twin2'));
    const r = await resolveWorkspacePath(t.ws, 'twin1');
    if (!r.ok || !r.stat) throw new Error('expected twin1');
    expect(checkRegularFile(r.stat, r.rel)?.code).toBe('hardlink');
  });

  it('refuses a file over the size cap', async () => {
    await writeFile(path.join(t.ws, 'big.txt'), 'x'.repeat(101));
    const r = await resolveWorkspacePath(t.ws, 'big.txt');
    if (!r.ok) throw new Error(r.message);
    expect(await readVerified(r, 100)).toMatchObject({ ok: false, code: 'too-large' });
    expect((await readVerified(r, 101)).ok).toBe(true);
  });
});

describe('swaps after the check', () => {
  it('a parent directory replaced by a symlink leading out is caught after open', async () => {
    await mkdir(path.join(t.ws, 'race1'));
    await writeFile(path.join(t.ws, 'race1', 'f.txt'), 'inside\n');
    await writeFile(path.join(t.outside, 'f.txt'), 'outside secret\n');
    const r = await resolveWorkspacePath(t.ws, 'race1/f.txt');
    if (!r.ok) throw new Error(r.message);
    await rename(path.join(t.ws, 'race1'), path.join(t.ws, 'race1-old'));
    await symlink(t.outside, path.join(t.ws, 'race1'));
    expect(await readVerified(r)).toMatchObject({ ok: false, code: 'path-mismatch' });
  });

  it('a final file replaced by a symlink is not followed (O_NOFOLLOW)', async () => {
    await writeFile(path.join(t.ws, 'race2.txt'), 'inside\n');
    const r = await resolveWorkspacePath(t.ws, 'race2.txt');
    if (!r.ok) throw new Error(r.message);
    await rename(path.join(t.ws, 'race2.txt'), path.join(t.ws, 'race2-old.txt'));
    await symlink(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'race2.txt'));
    expect(await readVerified(r)).toMatchObject({ ok: false, code: 'symlink-escape' });
  });

  it('a write whose parent became a symlink leaves nothing outside', async () => {
    await mkdir(path.join(t.ws, 'race3'));
    const r = await resolveWorkspacePath(t.ws, 'race3/new.txt');
    if (!r.ok) throw new Error(r.message);
    const outsideDir = path.join(t.base, 'outside3');
    await mkdir(outsideDir);
    await rename(path.join(t.ws, 'race3'), path.join(t.ws, 'race3-old'));
    await symlink(outsideDir, path.join(t.ws, 'race3'));
    expect(await writeAtomic(r, 'payload')).toMatchObject({ ok: false, code: 'path-mismatch' });
    expect(await readdir(outsideDir)).toEqual([]);
  });

  it('a write over a final segment that became a symlink replaces the link, not its target', async () => {
    await writeFile(path.join(t.ws, 'race4.txt'), 'inside\n');
    const r = await resolveWorkspacePath(t.ws, 'race4.txt');
    if (!r.ok) throw new Error(r.message);
    await writeFile(path.join(t.outside, 'target4.txt'), 'untouched\n');
    await rename(path.join(t.ws, 'race4.txt'), path.join(t.ws, 'race4-old.txt'));
    await symlink(path.join(t.outside, 'target4.txt'), path.join(t.ws, 'race4.txt'));
    await writeAtomic(r, 'new\n');
    expect(await readFile(path.join(t.outside, 'target4.txt'), 'utf8')).toBe('untouched\n');
  });
});

describe('unlinkInWorkspace', () => {
  it('removes a symlink leading out without touching its target', async () => {
    await symlink(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'to-delete'));
    const r = await resolveWorkspacePath(t.ws, 'to-delete', { keepFinalLink: true });
    if (!r.ok) throw new Error(r.message);
    expect((await unlinkInWorkspace(r)).ok).toBe(true);
    expect(await readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });
});

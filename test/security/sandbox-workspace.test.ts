import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultSandboxId, sandboxIdentity } from '../../src/exec/sandbox.js';
import { ensureSandboxWorkspace, handOverWorkspace } from '../../src/exec/sandbox-workspace.js';
import { editTool } from '../../src/tools/core/fs/edit.js';
import { run as runTool } from '../../src/tools/core/fs/test-support.js';
import { writeTool } from '../../src/tools/core/fs/write.js';
import { arena, canSandbox, isRoot } from './sandbox-harness.js';

/**
 * When Warden runs as root the workspace is handed to the sandbox uid, by a walk that runs as
 * root in a directory the agent controls. The walk must change nothing outside the workspace
 * whatever the agent planted there: links out, hard links, devices, other users' files,
 * Warden's own state, or a directory swapped for a symlink while it runs.
 */

const SANDBOX = { uid: defaultSandboxId(), gid: defaultSandboxId() };
const owner = (p: string) => {
  const st = lstatSync(p);
  return `${st.uid}:${st.gid}`;
};
const ROOT = '0:0';
const HANDED = `${SANDBOX.uid}:${SANDBOX.gid}`;

describe.skipIf(!isRoot)('handing the workspace to the sandbox uid', () => {
  let root: string;
  let ws: string;
  let outside: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'warden-handover-'));
    ws = path.join(root, 'ws');
    outside = path.join(root, 'outside');
    mkdirSync(ws);
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'secret'), 'secret');
    writeFileSync(path.join(outside, 'hard-target'), 'hard');
    mkdirSync(path.join(outside, 'dir'));
    writeFileSync(path.join(outside, 'dir', 'inner'), 'inner');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('changes the workspace, its directories and its files, and nothing an attacker planted to reach outside', async () => {
    writeFileSync(path.join(ws, 'file'), 'x');
    mkdirSync(path.join(ws, 'dir', 'nested'), { recursive: true });
    writeFileSync(path.join(ws, 'dir', 'nested', 'deep'), 'x');
    symlinkSync(path.join(outside, 'secret'), path.join(ws, 'link-out'));
    symlinkSync(path.join(outside, 'dir'), path.join(ws, 'dirlink-out'));
    linkSync(path.join(outside, 'hard-target'), path.join(ws, 'hard'));
    execFileSync('mkfifo', [path.join(ws, 'fifo')]);
    execFileSync('mknod', [path.join(ws, 'null-device'), 'c', '1', '3']);
    writeFileSync(path.join(ws, 'other-users'), 'x');
    chownSync(path.join(ws, 'other-users'), 1234, 1234);
    writeFileSync(path.join(ws, 'setuid'), '#!/bin/sh\n');
    chmodSync(path.join(ws, 'setuid'), 0o4755);
    mkdirSync(path.join(ws, 'data'));
    writeFileSync(path.join(ws, 'data', 'warden.sqlite'), 'db');

    const result = await handOverWorkspace(ws, SANDBOX, { skip: [path.join(ws, 'data')] });
    expect(result).toMatchObject({ ok: true });

    for (const p of ['', 'file', 'dir', 'dir/nested', 'dir/nested/deep', 'setuid']) expect([p, owner(path.join(ws, p))]).toEqual([p, HANDED]);
    // A handed-over file loses its setuid bit (the kernel clears it on chown).
    expect(statSync(path.join(ws, 'setuid')).mode & 0o4000).toBe(0);
    for (const p of ['link-out', 'dirlink-out', 'hard', 'fifo', 'null-device', 'data', 'data/warden.sqlite']) expect([p, owner(path.join(ws, p))]).toEqual([p, ROOT]);
    expect(owner(path.join(ws, 'other-users'))).toBe('1234:1234');
    for (const p of ['secret', 'hard-target', 'dir', 'dir/inner']) expect([p, owner(path.join(outside, p))]).toEqual([p, ROOT]);
  });

  it('never follows a directory swapped for a symlink while the walk runs', async () => {
    // A loop keeps replacing ws/a/b (a directory full of files) with a symlink to outside.
    const swapper = spawn('/bin/sh', [
      '-c',
      `cd ${ws} && while :; do rm -rf a; mkdir -p a/b; for i in 1 2 3 4 5 6 7 8; do : > a/b/f$i; done; rm -rf a/b; ln -s ${outside} a/b; done`,
    ]);
    try {
      for (let i = 0; i < 40; i++) {
        await handOverWorkspace(ws, SANDBOX);
        for (const p of ['', 'secret', 'hard-target', 'dir', 'dir/inner']) expect([p, owner(path.join(outside, p))]).toEqual([p, ROOT]);
      }
    } finally {
      swapper.kill('SIGKILL');
    }
  });

  it('hands over once per process, and not at all when the sandbox runs as Warden itself', async () => {
    writeFileSync(path.join(ws, 'file'), 'x');
    expect(await ensureSandboxWorkspace(ws, SANDBOX)).toMatchObject({ ok: true, changed: 2 });
    writeFileSync(path.join(ws, 'later'), 'x');
    expect(await ensureSandboxWorkspace(ws, SANDBOX)).toMatchObject({ ok: true, changed: 2 });
    expect(owner(path.join(ws, 'later'))).toBe(ROOT);
    // Removed and made again by root: handed over again.
    rmSync(ws, { recursive: true });
    mkdirSync(ws);
    expect(await ensureSandboxWorkspace(ws, SANDBOX)).toMatchObject({ ok: true, changed: 1 });
    expect(owner(ws)).toBe(HANDED);
    const other = path.join(root, 'own');
    mkdirSync(other);
    expect(await ensureSandboxWorkspace(other, { uid: 0, gid: 0 })).toEqual({ ok: true, changed: 0, skipped: 0 });
    expect(owner(other)).toBe(ROOT);
  });
});

describe.skipIf(!isRoot)("Warden's file tools keep a handed-over workspace the sandbox's", () => {
  let root: string;
  let ws: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'warden-fs-owner-'));
    ws = path.join(root, 'ws');
    mkdirSync(ws);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a new file and the directories made for it get the workspace owner', async () => {
    chownSync(ws, SANDBOX.uid, SANDBOX.gid);
    const result = await runTool(writeTool, { path: 'a/b/new.txt', content: 'x' }, ws);
    expect(result.isError).toBeFalsy();
    for (const p of ['a', 'a/b', 'a/b/new.txt']) expect([p, owner(path.join(ws, p))]).toEqual([p, HANDED]);
  });

  it('an overwritten or edited file keeps its own owner', async () => {
    chownSync(ws, SANDBOX.uid, SANDBOX.gid);
    writeFileSync(path.join(ws, 'theirs.txt'), 'old');
    chownSync(path.join(ws, 'theirs.txt'), SANDBOX.uid, SANDBOX.gid);
    writeFileSync(path.join(ws, 'roots.txt'), 'old');
    await runTool(writeTool, { path: 'theirs.txt', content: 'new' }, ws);
    await runTool(editTool, { path: 'roots.txt', oldText: 'old', newText: 'new' }, ws);
    expect(owner(path.join(ws, 'theirs.txt'))).toBe(HANDED);
    expect(owner(path.join(ws, 'roots.txt'))).toBe(ROOT);
    expect(readFileSync(path.join(ws, 'roots.txt'), 'utf8')).toBe('new');
  });

  it('a workspace Warden owns itself (the gateway host) is written as before', async () => {
    await runTool(writeTool, { path: 'd/new.txt', content: 'x' }, ws);
    expect(owner(path.join(ws, 'd'))).toBe(ROOT);
    expect(owner(path.join(ws, 'd', 'new.txt'))).toBe(ROOT);
  });

  it.skipIf(!canSandbox)('what the write tool made, a sandboxed command can change', async () => {
    const box = await arena(sandboxIdentity({}));
    try {
      await runTool(writeTool, { path: 'src/script.sh', content: 'echo one\n' }, box.workspace);
      const { exitCode } = await box.run('echo two >> src/script.sh && mkdir src/more && : > src/more/x && rm src/script.sh.bak 2>/dev/null; cat src/script.sh');
      expect(exitCode).toBe(0);
      expect(readFileSync(path.join(box.workspace, 'src', 'script.sh'), 'utf8')).toBe('echo one\ntwo\n');
    } finally {
      box.cleanup();
    }
  });
});

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

// Real `warden` processes sharing one data dir: `invoke` with --approve, and an `invoke` that
// waits until a second process resolves its approval with `warden approvals resolve`.
const WARDEN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const running: ResultPromise[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.kill('SIGKILL');
});

function workdir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-invoke-e2e-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), 'owners: { web: ["me"] }\ntools: { profile: coding, exec: { host: gateway } }\n');
  mkdirSync(path.join(dir, 'workspace'));
  return dir;
}

const warden = (dir: string, args: string[]) => {
  const p = execa(process.execPath, [WARDEN, ...args], { cwd: dir, reject: false, env: { WARDEN_LOG_LEVEL: 'silent', WARDEN_DATA_DIR: '' } });
  running.push(p);
  return p;
};

// Inline eval always needs a human under the default exec policy (strictInlineEval).
const NEEDS_APPROVAL = JSON.stringify({ command: 'python3 -c "print(41+1)"' });

describe('warden invoke with approvals, across processes', () => {
  it('--approve once runs the call; --approve deny does not', async () => {
    const dir = workdir();
    const once = await warden(dir, ['invoke', 'exec', '--sender', 'me', '--args', NEEDS_APPROVAL, '--approve', 'once', '--json']);
    expect(once.exitCode).toBe(0);
    const ran = JSON.parse(String(once.stdout)) as { status: string; content: Array<{ text: string }>; approval?: unknown };
    expect(ran.status).toBe('ok');
    expect(ran.content[0]!.text).toContain('42');

    const deny = await warden(dir, ['invoke', 'exec', '--sender', 'me', '--args', NEEDS_APPROVAL, '--approve', 'deny', '--json']);
    const denied = JSON.parse(String(deny.stdout)) as { status: string; content: Array<{ text: string }> };
    expect(denied.status).not.toBe('ok');
    expect(denied.content[0]!.text).not.toContain('42');

    const history = await warden(dir, ['approvals', 'history', '--json']);
    const outcomes = (JSON.parse(String(history.stdout)) as { history: Array<{ status: string; decidedBy: string }> }).history.map((h) => h.status);
    expect(outcomes.sort()).toEqual(['allow-once', 'deny']);
  });

  it('an invoke without --approve waits until another process resolves its approval', async () => {
    const dir = workdir();
    const waiting = warden(dir, ['invoke', 'exec', '--sender', 'me', '--args', NEEDS_APPROVAL, '--json']);
    const id = await new Promise<string>((resolve, reject) => {
      let err = '';
      waiting.stderr!.on('data', (chunk: Buffer) => {
        err += chunk.toString();
        const m = /approval (\w+) is pending/.exec(err);
        if (m) resolve(m[1]!);
      });
      void waiting.then((r) => reject(new Error(`invoke ended before asking: ${String(r.stderr)}`)));
    });
    const list = await warden(dir, ['approvals', 'list', '--json']);
    expect((JSON.parse(String(list.stdout)) as { pending: Array<{ id: string }> }).pending.map((p) => p.id)).toEqual([id]);

    const resolved = await warden(dir, ['approvals', 'resolve', id, 'allow-once']);
    expect(resolved.exitCode).toBe(0);
    const done = await waiting;
    expect(done.exitCode).toBe(0);
    const out = JSON.parse(String(done.stdout)) as { status: string; content: Array<{ text: string }> };
    expect(out.status).toBe('ok');
    expect(out.content[0]!.text).toContain('42');
  });
});

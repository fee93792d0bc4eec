// `warden start` as a real process meeting failures nothing in it handled: a plugin's promise
// that rejects in the background is logged, counted on /metrics, and Warden keeps serving; an
// exception thrown from a timer still ends the process (exit 1), after a fatal log line.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../free-port.js';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const running: ResultPromise[] = [];

afterEach(async () => {
  for (const child of running.splice(0)) {
    child.kill('SIGKILL');
    await child;
  }
});

/** A plugin doing what a careless one does, once Warden has started: `misfire` names the failure. */
function launch(misfire: 'reject' | 'throw', opsPort: number): ResultPromise {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-misfire-'));
  const plugin = path.join(dir, 'plugins', 'misfire');
  mkdirSync(plugin, { recursive: true });
  writeFileSync(path.join(plugin, 'warden.plugin.json'), JSON.stringify({ id: 'misfire' }));
  writeFileSync(
    path.join(plugin, 'index.mjs'),
    `export function register(api) {
  api.on('gateway_start', () => {
    setTimeout(() => {
      if (${JSON.stringify(misfire)} === 'reject') Promise.reject(new Error('misfire: a background call failed'));
      else throw new Error('misfire: thrown from a timer');
    }, 300);
  });
}
`,
  );
  writeFileSync(path.join(dir, 'warden.config.yaml'), `channels:\n  web:\n    port: 0\nops:\n  port: ${opsPort}\nplugins:\n  paths: [plugins]\n`);
  const child = execa('node', [BIN, 'start'], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_LOG_FORMAT: 'json', WARDEN_DATA_DIR: '' }, reject: false });
  running.push(child);
  return child;
}

function waitFor(child: ResultPromise, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child[stream]?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = pattern.exec(out);
      if (m) resolve(m[0]);
    });
    void child.then(
      (r) => reject(new Error(`exited ${r.exitCode} before ${stream} showed ${pattern}: ${r.stderr}`)),
      (err: unknown) => reject(err as Error),
    );
  });
}

const logLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { message?: string } });

describe('warden start meets a failure nothing handled', () => {
  it('logs an unhandled rejection at error level, counts it on /metrics, and keeps serving', async () => {
    const ops = await freePort();
    const child = launch('reject', ops);
    const [url] = await Promise.all([waitFor(child, 'stdout', /http:\/\/127\.0\.0\.1:\d+\//), waitFor(child, 'stderr', /unhandled promise rejection/)]);
    // Still serving, the web chat and the ops listener alike.
    expect((await fetch(url)).status).toBe(401);
    const scrape = await (await fetch(`http://127.0.0.1:${ops}/metrics`)).text();
    expect(scrape).toMatch(/^warden_unhandled_rejections_total 1$/m);

    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Warden stopped.');
    const logged = logLines(String(result.stderr)).find((l) => l.msg.includes('unhandled promise rejection'));
    expect(logged).toMatchObject({ level: 50, msg: 'unhandled promise rejection; Warden keeps running', err: { message: 'misfire: a background call failed' } });
  }, 30_000);

  it('still ends on an uncaught exception: a fatal log line, then exit 1', async () => {
    const result = await launch('throw', await freePort());
    expect(result.exitCode).toBe(1);
    expect(result.stdout).not.toContain('Warden stopped.');
    const logged = logLines(String(result.stderr)).find((l) => l.msg.includes('uncaught exception'));
    expect(logged).toMatchObject({ level: 60, msg: 'uncaught exception; Warden exits', err: { message: 'misfire: thrown from a timer' } });
  }, 30_000);
});

// `warden start` as a real process: an owner's turn asks the gateway tool to restart; Warden
// stops as on SIGTERM and runs again with the same arguments; a config edit afterwards is
// applied and printed; SIGTERM reaches the new process and everything exits cleanly.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const TOKEN = 'restart-test-web-token-0123456789';
let model: FakeModelServer;

function respond(r: FakeRequest): FakeReply {
  const last = r.body.messages.at(-1) as { role: string };
  if (last?.role === 'tool') return { kind: 'reply', text: 'Restarting now.' };
  const users = (r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user');
  if (JSON.stringify(users.at(-1)?.content ?? '').includes('restart please')) return { kind: 'reply', toolCalls: [{ name: 'gateway', args: { action: 'restart' } }] };
  return { kind: 'reply', text: 'ok' };
}

beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterAll(async () => {
  await model?.close();
});

describe('gateway restart', () => {
  it('stops gracefully, starts again with the same arguments, and still reloads and stops', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-restart-'));
    mkdirSync(path.join(dir, 'workspace'));
    const file = path.join(dir, 'warden.config.yaml');
    writeFileSync(
      file,
      [
        'models: { default: "openai/gpt-test", providers: { openai: { baseUrl: "${MODEL_URL}" } } }',
        'tools:',
        '  profile: coding',
        '  alsoAllow: [gateway]',
        'channels:',
        '  web: { port: 0, token: "${WEB_TOKEN}" }',
        'gateway: { reload: { debounceMs: 50 } }',
        '',
      ].join('\n'),
    );
    const child = execa('node', [BIN, 'start'], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_DATA_DIR: '', MODEL_URL: model.url, WEB_TOKEN: TOKEN, OPENAI_API_KEY: 'test' }, reject: false });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    const saw = (text: string, times = 1) => expect.poll(() => out.split(text).length - 1, { timeout: 20_000 }).toBeGreaterThanOrEqual(times);

    await saw('Warden is running');
    const base = /web chat at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)![1]!;
    const ws = new WebSocket(`${base.replace('http', 'ws')}ws?token=${TOKEN}`, { headers: { origin: base.replace(/\/$/, '') } });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'message', text: 'restart please' }));

    await saw('Restart requested by an owner; stopping');
    await saw('Warden stopped.');
    await saw('Starting again');
    await saw('Warden is running', 2);
    ws.close();

    // The new process watches the file like the first: an edit is applied and printed.
    writeFileSync(file, readFileSync(file, 'utf8').replace('alsoAllow: [gateway]', 'alsoAllow: [gateway]\n  deny: [web_fetch]'));
    await saw('Config reloaded (version 2): tools.deny');

    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(out.split('Warden stopped.').length - 1).toBe(2);
  }, 60_000);
});

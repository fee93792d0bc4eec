import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWebAdapter } from './adapter.js';
import { webFileStore } from './file-store.js';

const file = (name: string, bytes: number) => ({ name, mimeType: 'application/octet-stream', data: Buffer.alloc(bytes, 7) });
const tmp = () => mkdtempSync(path.join(tmpdir(), 'warden-web-files-'));

describe('the web chat file store', () => {
  it('keeps files on disk: a store opened again on the same dir serves them', () => {
    const dir = tmp();
    const id = webFileStore({ dir, maxFiles: 10, maxBytes: 1000 }).put(file('a.bin', 10), 'out');
    const again = webFileStore({ dir, maxFiles: 10, maxBytes: 1000 }).get(id);
    expect(again).toMatchObject({ name: 'a.bin', kind: 'out' });
    expect(again!.data).toEqual(Buffer.alloc(10, 7));
  });

  it.each([
    ['by count', { maxFiles: 2, maxBytes: 1000 }, [10, 10, 10], [false, true, true]],
    ['by bytes', { maxFiles: 10, maxBytes: 25 }, [10, 10, 10], [false, true, true]],
    ['one file over the byte cap is not kept', { maxFiles: 10, maxBytes: 5 }, [10], [false]],
    ['within both', { maxFiles: 3, maxBytes: 30 }, [10, 10, 10], [true, true, true]],
  ])('the oldest go first %s', (_case, limits, sizes, kept) => {
    for (const dir of [tmp(), undefined]) {
      const store = webFileStore({ dir, ...limits });
      const ids = sizes.map((n, i) => store.put(file(`${i}.bin`, n), 'out'));
      expect(ids.map((id) => store.get(id) !== undefined)).toEqual(kept);
      if (dir) expect(readdirSync(dir).length).toBe(kept.filter(Boolean).length * 2);
    }
  });

  it('the caps hold across a restart, and a torn or foreign entry is not served', () => {
    const dir = tmp();
    const first = webFileStore({ dir, maxFiles: 5, maxBytes: 1000 });
    const ids = [1, 2, 3].map((i) => first.put(file(`${i}.bin`, 10), 'upload'));
    writeFileSync(path.join(dir, `${'ab'.repeat(12)}.json`), '{"name":');
    writeFileSync(path.join(dir, 'notes.json'), '{}');
    const reopened = webFileStore({ dir, maxFiles: 2, maxBytes: 1000 });
    expect(ids.map((id) => reopened.get(id) !== undefined)).toEqual([false, true, true]);
    expect(reopened.get('ab'.repeat(12))).toBeUndefined();
    expect(reopened.get('../../etc/passwd')).toBeUndefined();
  });

  it("a reply's file link still works after the web chat restarts", async () => {
    const filesDir = tmp();
    const deps = { token: 'restart-token-0123456789abcdef', onApprovalClick: async () => ({ kind: 'not-found' as const }), filesDir };
    const frames: any[] = [];
    const first = createWebAdapter({ host: '127.0.0.1', port: 0, token: undefined }, deps);
    await first.start(async () => undefined);
    const { WebSocket } = await import('ws');
    const ws = new WebSocket(`${first.url!.replace('http', 'ws')}ws`, { headers: { authorization: `Bearer ${deps.token}` } });
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    await first.send({ provider: 'web', channelId: 'web' }, { text: '', files: [{ name: 'notes.txt', mimeType: 'text/plain', data: Buffer.from('kept') }] });
    while (!frames.some((f) => f.type === 'message')) await new Promise((r) => setTimeout(r, 10));
    const url = frames.find((f) => f.type === 'message').message.files[0].url;
    ws.close();
    await first.stop();
    const second = createWebAdapter({ host: '127.0.0.1', port: 0, token: undefined }, deps);
    await second.start(async () => undefined);
    try {
      const res = await fetch(new URL(url, second.url), { headers: { authorization: `Bearer ${deps.token}` } });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('kept');
    } finally {
      await second.stop();
    }
  });
});

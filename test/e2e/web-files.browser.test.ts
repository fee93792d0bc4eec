// Files in and out of the web chat in real Chromium: the page, the upload endpoint, the
// WebSocket, the gateway and the model fake are real. An image attached with the file picker
// and a text file dropped on the page reach the model as an image part and a path under
// inbox/ that the `read` tool reads; a pasted file is uploaded too; a refused upload says why.
// An uploaded HTML or SVG file, opened from its link, never runs as a document of the chat's
// origin; a reply's file link works after a restart.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { FAKE_PNG } from '../fakes/models/openai-media-fake.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

let browser: Browser;
let warden: RunningWarden;
let model: FakeModelServer;
let page: Page;
let workspace = '';
let responder: ((r: FakeRequest) => FakeReply | undefined) | undefined;

beforeAll(async () => {
  model = await startFakeOpenAI({ respond: (r) => responder?.(r) ?? { kind: 'reply', text: 'ok' } });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-webfiles-'));
  workspace = path.join(dir, 'workspace');
  mkdirSync(workspace);
  const parsed = parseConfig({
    dataDir: path.join(dir, 'data'),
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding' },
    channels: { web: { port: 0, streaming: false } },
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' } });
  if (!started.ok) throw started.error;
  warden = started.warden;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await (await browser.newContext({ acceptDownloads: true })).newPage();
  await page.goto(warden.webOpenUrl!);
  await page.locator('#status[data-state="open"]').waitFor();
});

afterAll(async () => {
  await browser?.close();
  await warden?.stop();
  await model?.close();
});

const userText = (body: any) => JSON.stringify(body.messages.filter((m: any) => m.role === 'user').at(-1));

/** Drops files on the page as a drag from the desktop does: a DataTransfer holding them. */
async function drop(files: Array<{ name: string; type: string; text: string }>) {
  const transfer = await page.evaluateHandle((list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([f.text], f.name, { type: f.type }));
    return dt;
  }, files);
  await page.dispatchEvent('#messages', 'dragover', { dataTransfer: transfer });
  await page.dispatchEvent('#messages', 'drop', { dataTransfer: transfer });
}

describe('files in from the web chat', () => {
  it('an image from the file picker and a dropped text file reach the model: an image part and a path the read tool reads', async () => {
    let seen = '';
    responder = (r) => {
      const last = (r.body.messages as any[]).at(-1);
      if (last.role === 'tool') return { kind: 'reply', text: `The file says ${JSON.stringify(last.content).includes('budget: 1200') ? 'budget: 1200' : 'nothing'}.` };
      seen = userText(r.body);
      const named = /saved as (inbox\/[^\s\]]+budget\.txt)/.exec(seen)?.[1] ?? 'missing';
      return { kind: 'reply', toolCalls: [{ name: 'read', args: { path: named } }] };
    };
    await page.locator('#file-input').setInputFiles({ name: 'chart.png', mimeType: 'image/png', buffer: FAKE_PNG });
    await drop([{ name: 'budget.txt', type: 'text/plain', text: 'budget: 1200\n' }]);
    await page.locator('#attachments .chip[data-file-id]').nth(1).waitFor();
    await page.locator('#input').fill('what do these say?');
    await page.keyboard.press('Enter');
    await page.locator('.msg.bot', { hasText: 'The file says budget: 1200.' }).waitFor({ timeout: 15_000 });
    expect(seen).toContain(`data:image/png;base64,${FAKE_PNG.toString('base64')}`);
    expect(seen).toMatch(/image chart\.png attached above; saved as inbox\/\d{8}-\d{6}-[0-9a-f]{4}-chart\.png/);
    expect(seen).toMatch(/file budget\.txt \(13 bytes, text\/plain\) saved as inbox\/\d{8}-\d{6}-[0-9a-f]{4}-budget\.txt/);
    const rel = /saved as (inbox\/[^\s\]]+budget\.txt)/.exec(seen)![1]!;
    expect(readFileSync(path.join(workspace, rel), 'utf8')).toBe('budget: 1200\n');
    // The person's own bubble shows the image it sent, served from the chat.
    const img = page.locator('.msg.user img[alt="chart.png"]');
    await img.waitFor();
    expect(await img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(1);
    expect(await page.locator('#attachments').isHidden()).toBe(true);
  });

  it('a pasted file is uploaded and sent with the message', async () => {
    let seen = '';
    responder = (r) => ((seen = userText(r.body)), { kind: 'reply', text: 'Got the paste.' });
    await page.locator('#input').focus();
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['pasted words'], 'clip.txt', { type: 'text/plain' }));
      document.getElementById('input')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    });
    await page.locator('#attachments .chip[data-file-id]').first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.msg.bot', { hasText: 'Got the paste.' }).waitFor({ timeout: 15_000 });
    expect(seen).toMatch(/file clip\.txt \(12 bytes, text\/plain\) saved as inbox\//);
  });

  it('a refused upload says why, and nothing is attached', async () => {
    await page.locator('#file-input').setInputFiles({ name: 'tool.exe', mimeType: 'application/x-msdownload', buffer: Buffer.from('MZ') });
    await page.locator('.msg.notice', { hasText: 'Not attached: tool.exe is application/x-msdownload; the web chat takes images, text, PDF, JSON and audio files.' }).waitFor();
    expect(await page.locator('#attachments .chip[data-file-id]').count()).toBe(0);
  });
});

describe('files the chat serves never run as its documents', () => {
  it.each([
    ['an uploaded HTML page', 'evil.html', 'text/html', '<script>window.opener && (window.opener.pwned = 1); document.title = "pwned"</script>'],
    ['an uploaded SVG', 'evil.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" onload="document.title=\'pwned\'"><script>document.title="pwned"</script></svg>'],
    ['HTML uploaded as a PNG', 'evil.png', 'image/png', '<script>document.title="pwned"</script>'],
  ])('%s is a download', async (_case, name, type, body) => {
    const uploaded = await page.evaluate(
      async ({ name, type, body }) => (await fetch(`/upload?name=${encodeURIComponent(name)}`, { method: 'POST', headers: { 'content-type': type }, body })).json(),
      { name, type, body },
    );
    const tab = await page.context().newPage();
    try {
      const downloading = tab.waitForEvent('download', { timeout: 5_000 });
      await tab.goto(new URL(`/files/${uploaded.id}`, warden.webUrl).href).catch(() => undefined);
      const download = await downloading;
      expect(download.suggestedFilename()).toBe(name);
      expect(await tab.title()).not.toBe('pwned');
      expect(await page.evaluate(() => (window as any).pwned)).toBeUndefined();
      // Even as an image on the chat's own page, it shows nothing and runs nothing.
      const rendered = await page.evaluate(async (id) => {
        const img = new Image();
        img.src = `/files/${id}`;
        await new Promise((r) => ((img.onload = r), (img.onerror = r)));
        return { width: img.naturalWidth, title: document.title };
      }, uploaded.id);
      expect(rendered).toEqual({ width: 0, title: 'Warden' });
    } finally {
      await tab.close();
    }
  });
});

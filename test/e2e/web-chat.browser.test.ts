// The web chat in real Chromium: the page, the WebSocket, the gateway, the approval service
// and SQLite are all real. The first Warden has no model (commands work without one); the
// second answers through the OpenAI SDK against a loopback fake and is restarted on its port.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type LoadedConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { DATABASE_FILE } from '../../src/store/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import { freePort } from '../free-port.js';
import { type FakeModelServer, type FakeRequest, lastUserText } from '../fakes/models/server.js';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

let browser: Browser;
let warden: RunningWarden;
let page: Page;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-webchat-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), tools: { profile: 'coding', exec: { host: 'gateway' } }, channels: { web: { port: 0 } } });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {} });
  if (!started.ok) throw started.error;
  warden = started.warden;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage();
  // The address `warden start` prints: the token once in the query, then a cookie.
  await page.goto(warden.webOpenUrl!);
  expect(page.url()).toBe(warden.webUrl);
  await page.locator('#status[data-state="open"]').waitFor();
});

afterAll(async () => {
  await browser?.close();
  await warden?.stop();
});

async function say(text: string) {
  await page.locator('#input').fill(text);
  await page.keyboard.press('Enter');
}

describe('web chat in Chromium without the token', () => {
  it('a tab without the token gets 401, no page script and no WebSocket', async () => {
    const stranger = await browser.newContext();
    try {
      const tab = await stranger.newPage();
      const sockets: string[] = [];
      tab.on('websocket', (ws) => sockets.push(ws.url()));
      const response = await tab.goto(warden.webUrl!);
      expect(response?.status()).toBe(401);
      expect(await tab.locator('#composer').count()).toBe(0);
      // A script of its own on the page's origin cannot open the socket or read the assets either.
      const probe = await tab.evaluate(async () => {
        const ws = await new Promise<string>((resolve) => {
          const socket = new WebSocket(`ws://${location.host}/ws`);
          socket.onopen = () => resolve('open');
          socket.onerror = () => resolve('refused');
        });
        const script = (await fetch('/app.js')).status;
        const health = (await fetch('/healthz')).status;
        const wrong = (await fetch('/?token=wrong')).status;
        return { ws, script, health, wrong };
      });
      expect(probe).toEqual({ ws: 'refused', script: 401, health: 401, wrong: 401 });
      expect(await stranger.cookies()).toEqual([]);
    } finally {
      await stranger.close();
    }
  });
});

describe('web chat in Chromium', () => {
  it('sends a message and shows the answer', async () => {
    await say('/tools');
    await expect.poll(() => page.locator('.msg.user').last().textContent()).toBe('/tools');
    await page.locator('.msg.bot', { hasText: 'Your tools here' }).waitFor();

    await say('hello there');
    await page.locator('.msg.bot', { hasText: 'No model is configured' }).waitFor();
  });

  it('/exec raises an approval card; a click on Allow once runs the command and shows its output', async () => {
    await say('/exec echo hello-from-exec');
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    expect(await card.locator('pre').textContent()).toBe('echo hello-from-exec');
    expect(await card.locator('button').allTextContents()).toContain('Allow once');

    await card.locator('button[data-decision="allow-once"]').click();
    const done = page.locator('section.card[data-status="allow-once"]');
    await done.waitFor();
    expect(await done.locator('.outcome').textContent()).toBe('Allowed once by you');
    expect(await done.locator('button').count()).toBe(0);
    await page.locator('.msg.bot pre', { hasText: 'hello-from-exec' }).waitFor();
  });

  it('Deny on a card runs nothing and says so', async () => {
    await say('/exec echo never-printed');
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    await card.locator('button[data-decision="deny"]').click();
    await page.locator('section.card[data-status="deny"]').waitFor();
    await expect.poll(() => page.locator('.msg.bot').last().textContent()).toMatch(/denied/i);
    expect(await page.locator('.msg.bot pre', { hasText: 'never-printed' }).count()).toBe(0);
  });

  it('/stop aborts a running command', async () => {
    await say('/exec sleep 30');
    const card = page.locator('section.card[data-status="pending"]');
    await card.waitFor();
    await card.locator('button[data-decision="allow-once"]').click();
    await page.locator('section.card[data-status="allow-once"]').nth(1).waitFor();
    await page.locator('#typing:not([hidden])').waitFor();
    await say('/stop');
    await page.locator('.msg.bot', { hasText: 'Stopped the running turn.' }).waitFor();
    await page.locator('#typing[hidden]').waitFor({ state: 'attached' });
    await page.locator('.msg.bot', { hasText: 'aborted' }).waitFor();
  });

  it('a reloaded page shows the conversation and the card in its final state', async () => {
    await page.reload();
    await page.locator('#status[data-state="open"]').waitFor();
    await page.locator('.msg.bot', { hasText: 'No model is configured' }).waitFor();
    expect(await page.locator('section.card .outcome').allTextContents()).toEqual(['Allowed once by you', 'Denied by you', 'Allowed once by you']);
    expect(await page.locator('section.card button').count()).toBe(0);
  });
});

/** The text of the last user message the model was sent. */
const allUserTexts = (r: FakeRequest): string[] =>
  (r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));

describe('web chat as people use it: restarts, a page that was offline, /new, the pending panel', () => {
  let model: FakeModelServer;
  let loaded: LoadedConfig;
  let dataDir: string;
  let live: RunningWarden | undefined;
  let context: BrowserContext;
  let tab: Page;

  const boot = async () => {
    const started = await startWarden(loaded, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    live = started.warden;
    return live;
  };
  const halt = async () => {
    await live?.stop();
    live = undefined;
  };
  const type = async (text: string) => {
    await tab.locator('#input').fill(text);
    await tab.keyboard.press('Enter');
  };
  const userTurns = () => model.requests.map(lastUserText);

  beforeAll(async () => {
    model = await startFakeOpenAI({ respond: (r) => ({ kind: 'reply', text: `You said: ${lastUserText(r)}` }) });
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-webchat-live-'));
    mkdirSync(path.join(dir, 'workspace'));
    dataDir = path.join(dir, 'data');
    const parsed = parseConfig({
      dataDir,
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'coding', exec: { host: 'gateway' } },
      channels: { web: { port: await freePort() } },
    });
    if (!parsed.ok) throw parsed.error;
    loaded = { ...parsed.value, baseDir: dir };
    const first = await boot();
    context = await browser.newContext();
    tab = await context.newPage();
    await tab.goto(first.webOpenUrl!);
    await tab.locator('#status[data-state="open"]').waitFor();
  });

  afterAll(async () => {
    await context?.close();
    await halt();
    await model?.close();
  });

  it('a message is a model turn; an unknown command is answered as unknown and never reaches the model', async () => {
    await type('hello from the page');
    await tab.locator('.msg.bot', { hasText: 'You said: hello from the page' }).waitFor();
    const asked = model.requests.length;

    await type('/statsu');
    await tab.locator('.msg.bot', { hasText: 'Unknown command /statsu (did you mean /status?)' }).waitFor();
    await type('/frobnicate now');
    await tab.locator('.msg.bot', { hasText: 'Unknown command /frobnicate.' }).waitFor();
    // A path is not a command: it goes to the model like any message.
    await type('/etc/hosts looks empty');
    await tab.locator('.msg.bot', { hasText: 'You said: /etc/hosts looks empty' }).waitFor();
    expect(userTurns().slice(asked)).toEqual(['/etc/hosts looks empty']);
  });

  it('pending cards wait in a panel, live: one decided from the panel, one by /approve', async () => {
    const panel = tab.locator('#pending');
    expect(await panel.isHidden()).toBe(true);

    await type('/exec echo panel-one');
    await panel.locator('.item').waitFor();
    expect(await tab.locator('#pending-count').textContent()).toBe('1');
    expect(await panel.locator('.item pre').textContent()).toBe('echo panel-one');
    expect(await panel.locator('.item .who').textContent()).toBe('Requested by you with /exec');
    await panel.locator('.item button[data-decision="allow-once"]').click();
    await panel.waitFor({ state: 'hidden' });
    await tab.locator('section.card[data-status="allow-once"]').waitFor();
    await tab.locator('.msg.bot pre', { hasText: 'panel-one' }).waitFor();

    await type('/exec echo panel-two');
    await panel.locator('.item').waitFor();
    const id = await panel.locator('.item').getAttribute('data-approval-id');
    await type(`/approve ${id} deny`);
    await panel.waitFor({ state: 'hidden' });
    await tab.locator(`section.card[data-approval-id="${id}"][data-status="deny"]`).waitFor();
  });

  it('after a server restart the page comes back by itself, and a reload shows the history from the store', async () => {
    await halt();
    await tab.locator('#status[data-state="closed"]').waitFor();
    await boot();
    await tab.locator('#status[data-state="open"]').waitFor({ timeout: 20_000 });
    await tab.reload();
    await tab.locator('#status[data-state="open"]').waitFor();
    await tab.locator('.msg.bot', { hasText: 'You said: hello from the page' }).waitFor();
    const users = await tab.locator('.msg.user').allTextContents();
    expect(users).toEqual(expect.arrayContaining(['hello from the page', '/etc/hosts looks empty']));
    // The cards come back from the approval ledger, in their final state.
    expect(await tab.locator('section.card .outcome').allTextContents()).toEqual(['Allowed once by you', 'Denied by you']);
    expect(await tab.locator('#session').textContent()).toBe('agent:main:web:direct:local');
  });

  it('messages typed while the server is down wait in the page, then go once, in order; one it refuses is marked unsent', async () => {
    await halt();
    await tab.locator('#status[data-state="closed"]').waitFor();
    const asked = model.requests.length;
    await type('typed while down, one');
    await type('x'.repeat(20_001));
    await type('typed while down, two');
    await expect.poll(() => tab.locator('.msg.user[data-state="queued"]').count()).toBe(3);
    expect(await tab.locator('#status').textContent()).toContain('3 waiting to send');
    // Still queued after the tab leaves the page: the queue is kept in the tab's session storage.
    await tab.goto('about:blank');

    await boot();
    await tab.goto(live!.webUrl!);
    await tab.locator('#status[data-state="open"]').waitFor({ timeout: 20_000 });
    await tab.locator('.msg.bot', { hasText: 'You said: typed while down, two' }).waitFor();
    const unsent = tab.locator('.msg.user[data-state="unsent"]');
    await unsent.waitFor();
    expect(await unsent.locator('.state').textContent()).toMatch(/^not sent: That message is 20,001 characters; the limit is 20,000\./);
    expect(await tab.locator('.msg.user[data-state="queued"], .msg.user[data-state="sending"]').count()).toBe(0);
    expect(userTurns().slice(asked)).toEqual(['typed while down, one', 'typed while down, two']);

    // Once: the transcript holds each message a single time, however the page reconnected.
    const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true });
    try {
      const rows = db.prepare("SELECT content FROM transcript_entries WHERE role = 'user' AND content LIKE '%typed while down%'").all() as Array<{ content: string }>;
      expect(rows).toHaveLength(2);
    } finally {
      db.close();
    }
    // Edit takes the refused text back to the composer.
    await unsent.locator('button[data-action="edit"]').click();
    expect((await tab.locator('#input').inputValue()).length).toBe(20_001);
    await tab.locator('#input').fill('');
    expect(await tab.locator('.msg.user[data-state="unsent"]').count()).toBe(0);
  });

  it('/new starts a fresh session: a new key, an empty page, the model without the old turns; the old transcript stays', async () => {
    await type('/new');
    const started = tab.locator('.msg.bot', { hasText: 'Started a new session: agent:main:web:direct:local:session:' });
    await started.waitFor();
    const key = /agent:main:web:direct:local:session:[a-z0-9]+/.exec((await started.textContent())!)![0];
    expect(await tab.locator('#session').textContent()).toBe(key);
    expect(await tab.locator('.msg.user').count()).toBe(0);

    await type('a fresh start');
    await tab.locator('.msg.bot', { hasText: 'You said: a fresh start' }).waitFor();
    const fresh = model.requests.at(-1)!;
    expect(allUserTexts(fresh)).toEqual(['a fresh start']);

    // The fresh session is the one a restart comes back to, and the old one is still stored.
    await halt();
    await boot();
    await tab.goto(live!.webUrl!);
    await tab.locator('#status[data-state="open"]').waitFor({ timeout: 20_000 });
    expect(await tab.locator('#session').textContent()).toBe(key);
    await tab.locator('.msg.user', { hasText: 'a fresh start' }).waitFor();
    expect(await tab.locator('.msg.user', { hasText: 'hello from the page' }).count()).toBe(0);
    const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true });
    try {
      const old = db.prepare("SELECT COUNT(*) FROM transcript_entries WHERE session_key = 'agent:main:web:direct:local'").pluck().get() as number;
      expect(old).toBeGreaterThan(0);
      const contexts = db.prepare("SELECT session_key, provider, chat, channel_id FROM session_contexts WHERE provider = 'web' ORDER BY created_at").all();
      expect(contexts).toEqual([
        { session_key: 'agent:main:web:direct:local', provider: 'web', chat: 'dm', channel_id: 'web' },
        { session_key: key, provider: 'web', chat: 'dm', channel_id: 'web' },
      ]);
    } finally {
      db.close();
    }
  });

  it('when the server comes back with another token, what waits is marked unsent, not lost', async () => {
    await halt();
    await tab.locator('#status[data-state="closed"]').waitFor();
    await type('typed before the token changed');
    await tab.locator('.msg.user[data-state="queued"]').waitFor();
    loaded = { ...loaded, config: { ...loaded.config, channels: { ...loaded.config.channels, web: { ...loaded.config.channels.web, token: 'a-different-token-0123456789abcdef' } } } };
    await boot();
    const unsent = tab.locator('.msg.user[data-state="unsent"]', { hasText: 'typed before the token changed' });
    await unsent.waitFor({ timeout: 20_000 });
    expect(await unsent.locator('.state').textContent()).toBe('not sent: the server no longer accepts this page’s token; open the address Warden printed');
    expect(await unsent.locator('button').allTextContents()).toEqual(['Send again', 'Edit']);
    expect(model.requests.some((r) => lastUserText(r).includes('typed before the token changed'))).toBe(false);
  });
});

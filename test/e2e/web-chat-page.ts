import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';

/** Debian's Chromium as the browser tests drive it: no sandbox (root), nothing fetched from the network. */
export const TEST_CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface WebChatRun {
  warden: RunningWarden;
  browser: Browser;
  page: Page;
}

/**
 * A real Warden with its web chat on an ephemeral port, an OpenAI-compatible fake model, and a
 * Chromium page connected to it. `config` holds what the test is about (approvals, tools); the
 * store, the model and the listener are the same for every browser test.
 */
export async function openWebChat(input: { dir: string; modelUrl: string; config?: Record<string, unknown> }): Promise<WebChatRun> {
  const parsed = parseConfig({
    dataDir: path.join(input.dir, 'data'),
    ...input.config,
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: input.modelUrl } } },
    channels: { web: { port: 0 } },
  });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: input.dir }, { env: { OPENAI_API_KEY: 'test' } });
  if (!started.ok) throw started.error;
  const warden = started.warden;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: TEST_CHROMIUM_ARGS });
  const page = await browser.newPage();
  await page.goto(warden.webOpenUrl!);
  await page.locator('#status[data-state="open"]').waitFor();
  return { warden, browser, page };
}

/** Types a message into the page and sends it as a person would. */
export async function sayIn(page: Page, text: string): Promise<void> {
  await page.locator('#input').fill(text);
  await page.keyboard.press('Enter');
}

import type { Page } from 'playwright-core';
import { locatorForRef, type BrowserSession } from '../../../browser/index.js';
import type { ToolResult } from '../../types.js';
import { errorResult, textResult } from '../fs/tool-result.js';
import { ACT_KINDS, type BrowserArgs } from './browser-schema.js';

export const BROWSER_LIMITS = {
  defaultMaxChars: 20_000,
  efficientMaxChars: 8_000,
  maxCharsCap: 80_000,
  defaultTimeoutMs: 10_000,
  maxTimeoutMs: 60_000,
  maxWaitMs: 30_000,
  maxScreenshotBytes: 5_000_000,
};

const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]!;

export const timeoutOf = (args: BrowserArgs) => Math.min(args.timeoutMs ?? BROWSER_LIMITS.defaultTimeoutMs, BROWSER_LIMITS.maxTimeoutMs);

/** One `act` kind on a tab. Elements are addressed by snapshot refs only, never by CSS selectors. */
export async function act(session: BrowserSession, page: Page, args: BrowserArgs): Promise<ToolResult> {
  const timeout = timeoutOf(args);
  const ok = (text: string) => textResult(text, { status: 'ok', kind: args.kind, ref: args.ref, targetId: session.tabId(page) });
  const target = () => {
    if (!args.ref) return { ok: false as const, error: `act ${args.kind} needs a ref from the last snapshot.` };
    return locatorForRef(page, session.refsOf(page), args.ref);
  };
  try {
    switch (args.kind) {
      case 'click': {
        const t = target();
        if (!t.ok) return errorResult(t.error, { status: 'error' });
        await t.locator.click({ timeout, clickCount: args.doubleClick ? 2 : 1 });
        return ok(`Clicked ${t.ref}.`);
      }
      case 'type': {
        const t = target();
        if (!t.ok) return errorResult(t.error, { status: 'error' });
        if (args.text === undefined) return errorResult('act type needs text.', { status: 'error' });
        await t.locator.fill(args.text, { timeout });
        if (args.submit) await t.locator.press('Enter', { timeout });
        return ok(`Typed ${args.text.length} character(s) into ${t.ref}${args.submit ? ' and pressed Enter' : ''}.`);
      }
      case 'press': {
        if (!args.key) return errorResult('act press needs a key, like Enter, Tab or Control+A.', { status: 'error' });
        if (args.ref) {
          const t = target();
          if (!t.ok) return errorResult(t.error, { status: 'error' });
          await t.locator.press(args.key, { timeout });
          return ok(`Pressed ${args.key} on ${t.ref}.`);
        }
        await page.keyboard.press(args.key);
        return ok(`Pressed ${args.key}.`);
      }
      case 'hover': {
        const t = target();
        if (!t.ok) return errorResult(t.error, { status: 'error' });
        await t.locator.hover({ timeout });
        return ok(`Hovered over ${t.ref}.`);
      }
      case 'select': {
        const t = target();
        if (!t.ok) return errorResult(t.error, { status: 'error' });
        if (!args.values || args.values.length === 0) return errorResult('act select needs values (option labels or values).', { status: 'error' });
        const chosen = await t.locator.selectOption(args.values.map((v) => ({ label: v })), { timeout }).catch(() => t.locator.selectOption(args.values!, { timeout }));
        return ok(`Selected ${chosen.join(', ')} in ${t.ref}.`);
      }
      case 'wait': {
        if (args.text !== undefined) {
          await page.getByText(args.text).first().waitFor({ state: 'visible', timeout: Math.min(timeout, BROWSER_LIMITS.maxWaitMs) });
          return ok(`The text "${args.text}" is on the page.`);
        }
        const ms = Math.min(args.timeMs ?? 1000, BROWSER_LIMITS.maxWaitMs);
        await page.waitForTimeout(ms);
        return ok(`Waited ${ms} ms.`);
      }
      default:
        return errorResult(`Unknown act kind "${String(args.kind)}": use ${ACT_KINDS.join(', ')}.`, { status: 'error' });
    }
  } catch (err) {
    return errorResult(`act ${args.kind} failed: ${firstLine(err)}. The page may have changed; take a new snapshot.`, { status: 'error', kind: args.kind, ref: args.ref });
  }
}


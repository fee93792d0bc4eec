import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BrowserManager } from '../../../browser/manager.js';
import { parseConfig, type WardenConfigInput } from '../../../config/index.js';
import type { ToolCallContext, ToolResult } from '../../types.js';
import { CORE_IMPLEMENTATIONS } from '../../../app/core-tools.js';
import { createBrowserTool } from './browser.js';
import { ACT_KINDS, BROWSER_ACTIONS, browserParameters } from './browser-schema.js';

const configOf = (input: WardenConfigInput) => {
  const r = parseConfig(input);
  if (!r.ok) throw r.error;
  return r.value.config;
};

// These calls never need Chromium: each one is refused or answered before a launch.
function toolWith(input: WardenConfigInput) {
  const manager = new BrowserManager({ config: configOf(input), dataDir: mkdtempSync(path.join(tmpdir(), 'warden-browser-unit-')) });
  const tool = createBrowserTool({ manager });
  const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;
  return { manager, call: (args: Parameters<typeof tool.execute>[0]) => tool.execute(args, ctx) as Promise<ToolResult> };
}
const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

describe('browser tool registration', () => {
  it('is offered when browser.enabled and Chromium is installed, not when disabled', () => {
    const entry = CORE_IMPLEMENTATIONS.browser!;
    expect(entry.availability(configOf({ browser: { enabled: false } }))).toEqual({ ok: false, why: 'browser.enabled is false' });
    expect(entry.availability(configOf({})).ok).toBe(true);
  });

  it('uses the reference names for actions and act kinds', () => {
    expect(browserParameters.properties.action.enum).toEqual(BROWSER_ACTIONS);
    expect(BROWSER_ACTIONS).toEqual(expect.arrayContaining(['status', 'start', 'stop', 'profiles', 'tabs', 'open', 'focus', 'close', 'snapshot', 'screenshot', 'navigate', 'act']));
    expect(ACT_KINDS).toEqual(expect.arrayContaining(['click', 'type', 'press', 'hover', 'select', 'wait']));
  });
});

describe('browser tool without a launch', () => {
  it.each([
    ['disabled', { browser: { enabled: false } }, { action: 'status' }, /browser\.enabled: false/],
    ['unknown profile', {}, { action: 'open', profile: 'other', url: 'http://93.184.215.14/' }, /Unknown browser profile "other"\. Known profiles: warden/],
    ['open without url', {}, { action: 'open' }, /open needs a url/],
    ['navigate without url', {}, { action: 'navigate' }, /navigate needs a url/],
    ['snapshot of a profile that is not running', {}, { action: 'snapshot' }, /not running/],
    ['act on a profile that is not running', {}, { action: 'act', kind: 'click', ref: 'e1' }, /not running/],
  ] as const)('%s is an error result', async (_name, config, args, message) => {
    const { call, manager } = toolWith(config as WardenConfigInput);
    const result = await call(args as Parameters<typeof call>[0]);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(await manager.running('warden')).toBeUndefined();
  });

  it('status and profiles describe every profile and the network policy without starting anything', async () => {
    const { call, manager } = toolWith({ browser: { profiles: { research: { headless: false } }, ssrfPolicy: { hostnameAllowlist: ['*.example.com'] } } });
    expect(textOf(await call({ action: 'status' }))).toBe(
      'warden (default): not running\nresearch: not running, windowed\nPrivate networks: blocked; only hosts *.example.com',
    );
    expect(textOf(await call({ action: 'profiles' }))).toBe('warden (default): stopped\nresearch: stopped');
    expect(textOf(await call({ action: 'stop' }))).toBe('Browser profile "warden" was not running.');
    expect(await manager.running('warden')).toBeUndefined();
  });
});

// MCP servers never hold Warden up and never outlive it: a server that never answers leaves the
// start and the turn's surface untouched (its tools a placeholder, unavailable with why), and a
// stdio server dies with Warden even when Warden is killed outright.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import type { McpManager } from '../../src/mcp/manager.js';
import { startMcp } from '../../src/mcp/start.js';
import type { TurnContext } from '../../src/policy/context.js';

const HOST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp/host.ts');
const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('MCP server lifecycle', () => {
  it('a server that never answers delays neither the start nor a turn\'s surface', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-mcp-slow-'));
    // A program that starts and never speaks MCP: connecting waits for its connect timeout, far
    // longer than this test runs even on a loaded machine. What shows that nothing waited for it
    // is its state, not a stopwatch: every step below ends while the server is still connecting.
    const parsed = parseConfig({ tools: { profile: 'coding' }, mcp: { servers: { slow: { command: 'sleep', args: ['600'], connectTimeoutSec: 300 } } }, dataDir: path.join(dir, 'data') });
    if (!parsed.ok) throw parsed.error;
    const { config } = parsed.value;
    const manager = startMcp(config, dir)!;
    managers.push(manager);
    const connecting = { tool: 'slow__*', why: 'MCP server slow is connecting; its tools are not known yet' };
    const executor = new GovernedToolExecutor(config, { config, baseDir: dir }, {});
    const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: false, spawnDepth: 0, model: 'openai/gpt-5' };
    // The core tools' modules load on first use: a config without MCP loads them first.
    const plain = parseConfig({ tools: { profile: 'coding' }, dataDir: path.join(dir, 'data') });
    if (!plain.ok) throw plain.error;
    await new GovernedToolExecutor(plain.value.config, { config: plain.value.config, baseDir: dir }, {}).surface(turn);
    expect(executor.report(turn).unavailable).toContainEqual(connecting);
    const surface = await executor.surface(turn);
    expect(surface.ok && surface.tools.map((t) => t.id)).toContain('read');
    expect(executor.report(turn).unavailable).toContainEqual(connecting);
  });

  it('a stdio server dies with Warden, even when Warden is killed with SIGKILL', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-mcp-orphan-'));
    const log = path.join(dir, 'mcp.log');
    const host = spawn(process.execPath, ['--import', 'tsx', HOST, log], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    host.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    const end = Date.now() + 20_000;
    while (!out.includes('\n') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(out.trim()).toBe('connected');
    const pid = Number(/started (\d+)/.exec(existsSync(log) ? readFileSync(log, 'utf8') : '')?.[1]);
    expect(alive(pid)).toBe(true);
    host.kill('SIGKILL');
    const gone = Date.now() + 5_000;
    while (alive(pid) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
  }, 30_000);
});

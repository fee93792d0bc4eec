import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import type { PluginsAnswer } from './plugins.js';

const SHIPPED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../plugins');
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/plugins/rules');

async function run(configYaml: string, args: string[] = ['--json']): Promise<{ code: number; out: string }> {
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-cli-plugins-'));
  writeFileSync(path.join(cwd, 'warden.config.yaml'), configYaml);
  let out = '';
  const code = await main(['plugins', ...args], { cwd, env: {}, stdout: (t) => (out += t), stderr: () => {} });
  return { code, out };
}

describe('warden plugins', () => {
  it('lists each plugin with status, tools, hooks, commands and diagnostics (--json)', async () => {
    const { code, out } = await run(
      `plugins:\n  paths: [${JSON.stringify(SHIPPED)}, ${JSON.stringify(FIXTURE)}]\n  deny: [fixture]\n  entries:\n    incidents: { config: { baseUrl: "http://127.0.0.1:9", token: t } }\n    exec-guard: { config: { rules: [{ pattern: prod, action: deny }] } }\n`,
    );
    expect(code).toBe(0);
    const answer = JSON.parse(out) as PluginsAnswer;
    expect(answer.plugins.map((p) => [p.id, p.status])).toEqual([
      ['exec-guard', 'loaded'],
      ['incidents', 'loaded'],
      ['fixture', 'disabled'],
    ]);
    expect(answer.plugins[0]).toMatchObject({ version: '1.0.0', origin: 'path', hooks: [{ name: 'before_tool_call', priority: 100, toolMatcher: ['exec', 'process'] }], diagnostics: [] });
    expect(answer.plugins[1]).toMatchObject({ declaredTools: ['incident_list', 'incident_create', 'incident_update'], tools: ['incident_list', 'incident_create', 'incident_update'], commands: ['incident'] });
    expect(answer.plugins[2]).toMatchObject({ why: 'disabled by plugins.deny' });
  });

  it('says why a plugin did not load, in words', async () => {
    const { code, out } = await run(`plugins:\n  paths: [${JSON.stringify(SHIPPED)}]\n  allow: [incidents]\n`, []);
    expect(code).toBe(0);
    expect(out).toContain('incidents@1.0.0  error (plugins.entries.incidents.config.baseUrl: is required; plugins.entries.incidents.config.token: is required)');
    expect(out).toContain('exec-guard@1.0.0  disabled (not in plugins.allow)');
  });
});

describe('warden invoke and warden tools with a plugin', () => {
  it('run the plugin tool through its hooks, and explain it', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'warden-cli-plugin-invoke-'));
    const dir = path.join(cwd, 'plugins', 'greeter');
    (await import('node:fs')).mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'warden.plugin.json'), JSON.stringify({ id: 'greeter', contracts: { tools: ['greet'] }, toolMetadata: { greet: { profiles: ['coding'] } } }));
    writeFileSync(
      path.join(dir, 'index.mjs'),
      `export function register(api) {
  api.registerTool((ctx) => ({ name: 'greet', description: 'greets', parameters: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }, execute: (_id, p) => ({ content: [{ type: 'text', text: 'hello ' + p.who + ' from ' + ctx.provider }] }) }));
  api.on('before_tool_call', (e) => (e.params.who === 'mallory' ? { block: true, blockReason: 'not mallory' } : undefined));
}`,
    );
    writeFileSync(path.join(cwd, 'warden.config.yaml'), 'plugins:\n  paths: [plugins]\ntools:\n  profile: coding\n');
    const cli = async (...args: string[]) => {
      let out = '';
      const code = await main(args, { cwd, env: {}, stdout: (t) => (out += t), stderr: () => {} });
      return { code, json: JSON.parse(out) as Record<string, any> };
    };
    expect(await cli('invoke', 'greet', '--json', '--provider', 'slack', '--args', '{"who":"ann"}')).toMatchObject({ code: 0, json: { status: 'ok', content: [{ text: 'hello ann from slack' }] } });
    expect(await cli('invoke', 'greet', '--json', '--args', '{"who":"mallory"}')).toMatchObject({ code: 5, json: { status: 'blocked', deniedReason: 'plugin-before-tool-call', content: [{ text: 'not mallory' }] } });
    expect(await cli('invoke', 'greet', '--json', '--args', '{}')).toMatchObject({ json: { status: 'error', content: [{ text: expect.stringContaining('Invalid arguments for greet') }] } });
    const tools = await cli('tools', '--json', '--explain', 'greet');
    expect(tools.json.explain).toMatchObject({ tool: 'greet', verdict: 'available' });
  });
});

describe('warden skills with a plugin', () => {
  it('lists the skills of a folder the plugin registered, in the lowest tier', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'warden-cli-plugin-skills-'));
    writeFileSync(path.join(cwd, 'warden.config.yaml'), `plugins:\n  paths: [${JSON.stringify(FIXTURE)}]\n  entries: { fixture: { enabled: true } }\n`);
    let out = '';
    expect(await main(['skills', '--json'], { cwd, env: {}, stdout: (t) => (out += t), stderr: () => {} })).toBe(0);
    expect((JSON.parse(out) as { eligible: Array<{ name: string; root: string; location: string }> }).eligible).toContainEqual({ name: 'fx-skill', root: 'extra', location: path.join(FIXTURE, 'skills', 'fx-skill', 'SKILL.md'), agentWritable: false });
  });
});

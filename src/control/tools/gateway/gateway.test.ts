import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../config/index.js';
import type { ToolCallContext, ToolResult } from '../../../tools/types.js';
import { createGatewayTool, redactSecrets, type GatewayArgs } from './gateway.js';

const config = (() => {
  const r = parseConfig({ channels: { discord: { token: 'discord-secret', guilds: { '1': { channels: { dev: { tools: { allow: ['*'] } } } } } } }, models: { default: 'openai/gpt-5' } });
  if (!r.ok) throw r.error;
  return r.value.config;
})();

const tool = createGatewayTool({
  config,
  status: () => ({ startedAt: Date.now() - 5000, adapters: [{ provider: 'discord', state: 'connected' }], activeSessions: 2 }),
  pendingApprovals: () => 1,
});
const call = (args: GatewayArgs, owner = true) => tool.execute(args, { turn: { senderIsOwner: owner } } as ToolCallContext) as Promise<ToolResult>;
const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

describe('the gateway tool', () => {
  it('refuses a non-owner', async () => {
    expect((await call({ action: 'status' }, false)).isError).toBe(true);
  });

  it('reports the running bot', async () => {
    const details = (await call({ action: 'status' })).details;
    expect(details).toMatchObject({ running: true, adapters: [{ provider: 'discord', state: 'connected' }], activeSessions: 2, pendingApprovals: 1, defaultModel: 'openai/gpt-5' });
  });

  it('shows the config with every secret redacted, whole or by path', async () => {
    const whole = textOf(await call({ action: 'config.get' }));
    expect(whole).not.toContain('discord-secret');
    expect(JSON.parse(textOf(await call({ action: 'config.get', path: 'channels.discord' })))).toMatchObject({ token: '[redacted]' });
    expect(JSON.parse(textOf(await call({ action: 'config.get', path: 'channels.discord.guilds.1.channels.dev.tools' })))).toEqual({ allow: ['*'] });
    expect(textOf(await call({ action: 'config.get', path: 'nope.x' }))).toBe('config.get: no key "nope.x"');
  });

  it('redacts the values of env maps and fetch headers, whatever their names', () => {
    expect(redactSecrets({ skills: { entries: { gh: { env: { GITHUB_PAT: 'ghp_x' } } } }, tools: { web: { fetch: { headers: { Authorization: 'Bearer y', 'X-Id': 'z' } } } } })).toEqual({
      skills: { entries: { gh: { env: { GITHUB_PAT: '[redacted]' } } } },
      tools: { web: { fetch: { headers: { Authorization: '[redacted]', 'X-Id': '[redacted]' } } } },
    });
  });

  it('describes the schema under a path, by its name and OpenClaw\'s', async () => {
    for (const action of ['config.schema', 'config.schema.lookup'] as const) {
      const r = await call({ action, path: 'tools.exec.security' });
      expect(r.details).toMatchObject({ type: 'string', enum: ['deny', 'allowlist', 'full'] });
    }
    expect((await call({ action: 'config.schema', path: 'tools.nope' })).isError).toBe(true);
  });

  it('says patch, reload and restart need a running Warden', async () => {
    for (const action of ['config.patch', 'reload', 'restart'] as const) expect(textOf(await call({ action, patch: { tools: { deny: ['exec'] } } }))).toContain('needs a running Warden');
  });

  it('redacts nested credentials by key name', () => {
    expect(redactSecrets({ a: { botToken: 'x', signingSecret: 'y', list: [{ apiKey: 'z', name: 'n' }] } })).toEqual({
      a: { botToken: '[redacted]', signingSecret: '[redacted]', list: [{ apiKey: '[redacted]', name: 'n' }] },
    });
  });
});

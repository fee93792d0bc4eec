import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import type { TurnContext } from '../policy/context.js';
import { effectiveExecConfig } from '../exec/check.js';
import { checkExec } from './exec-check.js';

const configOf = (raw: WardenConfigInput) => {
  const r = parseConfig(raw);
  if (!r.ok) throw r.error;
  return r.value.config;
};
const turn = (agentId: string): TurnContext => ({ agentId, provider: 'discord', chat: 'channel', senderIsOwner: false, spawnDepth: 0 });

const config = configOf({
  tools: { exec: { security: 'allowlist', ask: 'on-miss', allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*', trustRepoConfig: true }], timeoutSec: 600 } },
  agents: {
    list: [
      { id: 'main', default: true },
      { id: 'locked', tools: { exec: { security: 'deny' } } },
      { id: 'builder', tools: { exec: { allowlist: [{ pattern: '/usr/bin/make', trustRepoConfig: true }], timeoutSec: 3600, ask: 'off' } } },
    ],
  },
});

describe('per-agent tools.exec', () => {
  it('keys an agent sets override the global ones; allowlists add up', () => {
    expect(effectiveExecConfig(config, 'main')).toMatchObject({ security: 'allowlist', timeoutSec: 600 });
    expect(effectiveExecConfig(config, 'builder')).toMatchObject({ security: 'allowlist', ask: 'off', timeoutSec: 3600 });
    expect(effectiveExecConfig(config, 'builder').allowlist.map((e) => e.pattern)).toEqual(['/usr/bin/git', '/usr/bin/make']);
  });

  it.each([
    ['main', 'git status', 'allow'],
    ['main', 'make all', 'ask'],
    ['locked', 'git status', 'deny'],
    ['builder', 'make all', 'allow'],
    ['builder', 'rm -rf build', 'deny'],
  ])('%s: %s → %s', (agentId, command, decision) => {
    expect(checkExec(config, command, turn(agentId), { cwd: '/tmp', home: '/root' }).decision).toBe(decision);
  });

  it('refuses process-wide keys in an agent block', () => {
    const r = parseConfig({ agents: { list: [{ id: 'a', tools: { exec: { host: 'gateway' } } }] } });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.problems.map((p) => p.path)).toEqual(['agents.list[0].tools.exec.host']);
  });
});

describe('checkExec on the turn surface', () => {
  const scoped = configOf({
    tools: { exec: { host: 'gateway', allowlist: [{ pattern: '/usr/bin/ls' }] } },
    channels: { discord: { guilds: { '1': { channels: { general: { tools: { deny: ['exec'] } } } } } } },
  });
  const at = (channelName: string): TurnContext => ({ ...turn('main'), guildId: '1', channelName });

  it('denies where the policy removes exec, naming the deny key, as `warden tools` does', () => {
    const verdict = checkExec(scoped, 'ls', at('general'), { cwd: '/tmp', home: '/root' });
    expect(verdict).toMatchObject({ decision: 'deny', reason: 'exec is not on this surface (removed by channels.discord.guilds.1.channels.general.tools.deny)', rewritten: null, allowAlways: { offered: false } });
    expect(checkExec(scoped, 'ls', at('dev'), { cwd: '/tmp', home: '/root' }).decision).toBe('allow');
  });

  it('takes the surface the caller already resolved', () => {
    const surface = { tools: [], removed: [], unavailable: [{ tool: 'exec', why: 'bubblewrap is not installed' }] };
    expect(checkExec(scoped, 'ls', at('dev'), { cwd: '/tmp', home: '/root', surface }).reason).toBe('exec is not on this surface (unavailable: bubblewrap is not installed)');
  });
});

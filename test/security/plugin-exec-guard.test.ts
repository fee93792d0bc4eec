// Attack class: getting a command past exec-guard's before_tool_call rules — spelling it
// differently for the shell than for the pattern, building it at run time, or typing it into a
// running shell with `process` instead of `exec`. The shipped plugin is loaded from its folder
// with its rules from the config, and judged through the hook bus as the call chain runs it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HookToolContext } from '../../src/hooks/types.js';
import { createPluginRuntime, type PluginRuntime } from '../../src/plugins/runtime.js';
import { config } from '../../src/policy/testing.js';

const PLUGINS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../plugins');
let runtime: PluginRuntime;

beforeAll(async () => {
  runtime = createPluginRuntime(
    config({
      plugins: {
        paths: [PLUGINS],
        allow: ['exec-guard'],
        entries: { 'exec-guard': { config: { rules: [{ id: 'prod', pattern: '\\bssh\\b.*\\bprod', action: 'deny', channels: ['#general'] }] } } },
      },
    }),
    PLUGINS,
  );
  await runtime.load(5_000);
  expect(runtime.plugins.find((p) => p.id === 'exec-guard')?.status).toBe('loaded');
});

const ctx = (channelName: string, toolName: string): HookToolContext => ({ toolName, toolCallId: 't', conversation: { provider: 'discord', chat: 'channel', channelId: `C-${channelName}`, channelName } });

async function verdict(toolName: string, params: Record<string, unknown>, channel = 'general'): Promise<string> {
  const out = await runtime.hooks.runBeforeToolCall({ toolName, toolCallId: 't', params, agentId: 'main', sessionKey: 's', provider: 'discord' }, ctx(channel, toolName));
  if (out.kind !== 'continue') return out.kind;
  return out.approval ? 'approve' : 'run';
}

describe('exec: spelled for the shell, not for the pattern', () => {
  it.each([
    ['ssh deploy@prod-db', 'block'],
    ['SSH PROD-DB', 'block'],
    ['ss""h prod-db', 'block'],
    ["s'sh' pr''od-db", 'block'],
    ['s\\sh p\\rod-db', 'block'],
    ['/usr/bin/ssh   prod-db', 'block'],
    ['command ssh prod-db', 'block'],
    ['env -i ssh prod-db', 'block'],
    ['true && ssh prod-db', 'block'],
    ['h=prod; ssh $h-db', 'approve'],
    ['ssh $(echo prod)-db', 'block'],
    ['ssh $(echo pr)od-db', 'approve'],
    ['ssh `echo pr`od-db', 'approve'],
    ['ssh ${HOST}', 'approve'],
    ['echo c3NoIHByb2QtZGI= | base64 -d | sh', 'approve'],
    ["printf '\\x73sh prod' | sh", 'approve'],
    ['echo prod-db | xargs ssh', 'approve'],
    ['find . -name x -exec ssh {} \\;', 'approve'],
    ['python3 -c "import os; os.system(\'ssh prod\')"', 'block'],
    ['python3 -c "import os; os.system(chr(115)+\'sh\')"', 'approve'],
    ['bash <<EOF\nssh prod\nEOF', 'block'],
    ['. ./deploy.sh', 'approve'],
    ['ls -la', 'run'],
  ])('%j → %s', async (command, expected) => {
    expect(await verdict('exec', { command })).toBe(expected);
  });

  it('only where a rule applies: #dev is not guarded', async () => {
    expect(await verdict('exec', { command: 'ssh prod-db' }, 'dev')).toBe('run');
    expect(await verdict('exec', { command: 'ssh $(echo prod)' }, 'dev')).toBe('run');
  });
});

describe('process: the same command typed into a running shell', () => {
  it.each([
    [{ action: 'write', sessionId: 'j1', data: 'ssh prod-db\n' }, 'block'],
    [{ action: 'send-keys', sessionId: 'j1', literal: 'ssh prod-db', keys: ['enter'] }, 'block'],
    [{ action: 'paste', sessionId: 'j1', text: 'ssh prod-db' }, 'block'],
    [{ action: 'send-keys', sessionId: 'j1', hex: ['73', '73', '68'] }, 'approve'],
    [{ action: 'poll', sessionId: 'j1' }, 'run'],
  ])('%j → %s', async (params, expected) => {
    expect(await verdict('process', params)).toBe(expected);
  });
});

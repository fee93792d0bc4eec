import { describe, expect, it } from 'vitest';
import { config } from '../policy/testing.js';
import { parseArgs } from './args.js';
import { contextFromArgs } from './context.js';

const cfg = config({
  owners: { discord: ['42'] },
  models: { default: 'anthropic/claude-sonnet-4-5' },
  agents: { list: [{ id: 'main', default: true }, { id: 'coder', model: 'openai/gpt-5' }] },
  tools: { exec: { host: 'gateway' } },
});
const ctxOf = (argv: string) => contextFromArgs(parseArgs(['tools', ...argv.split(' ').filter(Boolean)]), cfg);

describe('contextFromArgs', () => {
  it('defaults: the default agent, web, a DM, depth 0, the configured model', () => {
    expect(ctxOf('')).toEqual({
      ok: true,
      binding: { agentId: 'main', matchedBy: 'default' },
      ctx: expect.objectContaining({ agentId: 'main', provider: 'web', chat: 'dm', spawnDepth: 0, model: 'anthropic/claude-sonnet-4-5', senderIsOwner: false, sandboxed: false }),
    });
  });

  it.each([
    ['--provider discord --guild 1 --channel-name #general', { chat: 'channel', guildId: '1', channelName: 'general' }],
    ['--provider discord --guild 1 --channel 5 --thread 9', { chat: 'thread', channelId: '5', threadId: '9' }],
    ['--provider discord --sender 42', { senderIsOwner: true }],
    ['--provider slack --sender 42', { senderIsOwner: false }],
    ['--agent coder', { agentId: 'coder', model: 'openai/gpt-5' }],
    ['--agent coder --model google/gemini-2.5-pro', { model: 'google/gemini-2.5-pro' }],
    ['--spawn-depth 2', { spawnDepth: 2 }],
  ])('%s', (argv, expected) => {
    const result = ctxOf(argv);
    expect(result.ok && result.ctx).toMatchObject(expected);
  });

  it.each([
    ['--agent qa', '--agent: unknown agent "qa"; known agents: main, coder'],
    ['--provider teams', '--provider: expected one of discord, slack, web, http, got "teams"'],
    ['--chat group', '--chat: expected one of dm, channel, thread, got "group"'],
    ['--chat thread', '--chat thread: give the parent channel with --channel or --channel-name'],
    ['--chat dm --guild 1', '--guild does not apply to --chat dm'],
    ['--chat channel --channel 1 --thread 2', '--thread applies to --chat thread, not --chat channel'],
    ['--model gpt-5', '--model: expected "provider/model", got "gpt-5"'],
    ['--spawn-depth two', '--spawn-depth: expected a whole number ≥ 0, got "two"'],
    ['--sender', '--sender needs a value'],
  ])('%s is refused', (argv, problem) => {
    const result = ctxOf(argv);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems).toContain(problem);
  });

  it('reports every problem at once', () => {
    const result = ctxOf('--agent qa --provider teams --spawn-depth x');
    expect(result.ok === false && result.problems).toHaveLength(3);
  });
});

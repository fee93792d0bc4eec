import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from './load.js';

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

function problemsOf(result: ReturnType<typeof loadConfig>): Array<{ path: string; message: string }> {
  if (result.ok) throw new Error('expected the config to be rejected');
  return result.error.problems;
}

describe('loading a config file', () => {
  it('uses defaults when the default file is absent', () => {
    const result = loadConfig({ cwd: dirWith({}), env: {} });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.file).toBeUndefined();
    expect(result.value.config.channels.web).toEqual({ host: '127.0.0.1', port: 3000, streaming: true });
    expect(result.value.config.agents.defaults.subagents.maxSpawnDepth).toBe(1);
    expect(result.value.config.sessions).toEqual({ maxQueued: 32, shutdownGraceSec: 10 });
  });

  it('reports a missing explicit file', () => {
    const problems = problemsOf(loadConfig({ cwd: dirWith({}), file: 'nope.yaml', env: {} }));
    expect(problems[0]!.message).toMatch(/config file not found/);
  });

  it.each([
    ['warden.config.yaml', 'tools:\n  profile: coding\n  deny: [browser]\n'],
    ['warden.json5', "{ tools: { profile: 'coding', deny: ['browser'], }, // comment\n}"],
    ['warden.json', '{"tools": {"profile": "coding", "deny": ["browser"]}}'],
  ])('reads %s by its extension', (name, text) => {
    const result = loadConfig({ cwd: dirWith({ [name]: text }), file: name, env: {} });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.config.tools).toMatchObject({ profile: 'coding', deny: ['browser'] });
  });

  it.each([
    ['warden.config.yaml', 'tools:\n  profile: [coding\n', /malformed YAML/],
    ['warden.json5', '{ tools: { profile: "coding" ', /malformed JSON5/],
    ['warden.toml', 'a = 1', /unsupported config extension/],
    ['warden.config.yaml', 'tools:\n  deny: [a]\n  deny: [b]\n', /malformed YAML/],
  ])('rejects malformed %s', (name, text, pattern) => {
    const problems = problemsOf(loadConfig({ cwd: dirWith({ [name]: text }), file: name, env: {} }));
    expect(problems[0]!.message).toMatch(pattern);
  });

  it('substitutes ${ENV} and ${ENV:-default}, environment over .env', () => {
    const cwd = dirWith({
      'warden.config.yaml': 'channels:\n  discord:\n    token: ${DISCORD_TOKEN}\n  web:\n    port: 3000\nmodels:\n  default: ${MODEL:-anthropic/claude-sonnet-4-5}\n',
      '.env': 'DISCORD_TOKEN=from-dotenv\n',
    });
    const fromDotenv = loadConfig({ cwd, env: {} });
    expect(fromDotenv.ok && fromDotenv.value.config.channels.discord?.token).toBe('from-dotenv');
    expect(fromDotenv.ok && fromDotenv.value.config.models.default).toBe('anthropic/claude-sonnet-4-5');
    const fromEnv = loadConfig({ cwd, env: { DISCORD_TOKEN: 'from-env' } });
    expect(fromEnv.ok && fromEnv.value.config.channels.discord?.token).toBe('from-env');
  });

  it('names the key of an unset variable', () => {
    const cwd = dirWith({ 'warden.config.yaml': 'channels:\n  slack:\n    botToken: ${SLACK_BOT_TOKEN}\n' });
    expect(problemsOf(loadConfig({ cwd, env: {} }))).toEqual([
      { path: 'channels.slack.botToken', message: 'environment variable SLACK_BOT_TOKEN is not set (referenced as ${SLACK_BOT_TOKEN})' },
    ]);
  });
});

describe('validating a config', () => {
  const reject = (raw: unknown) => {
    const result = parseConfig(raw);
    if (result.ok) throw new Error('expected rejection');
    return result.error.problems;
  };

  it('reports every problem with its key path at once', () => {
    const problems = reject({
      tools: { profil: 'coding', deny: 'exec' },
      agents: { list: [{ id: 'main', tools: { profile: 'codin' } }] },
      approvals: { target: 'everyone' },
    });
    const paths = problems.map((p) => p.path).sort();
    expect(paths).toEqual(['agents.list[0].tools.profile', 'approvals.target', 'tools.deny', 'tools.profil']);
  });

  it.each([
    [{ tools: { profil: 'coding' } }, 'tools.profil', 'did you mean "profile"?'],
    [{ tool: {} }, 'tool', 'did you mean "tools"?'],
    [{ channels: { discord: { guilds: { '1': { channels: { dev: { tool: {} } } } } } } }, 'channels.discord.guilds["1"].channels.dev.tool', 'did you mean "tools"?'],
    [{ agents: { list: [{ id: 'a', tools: { alsoalow: [] } }] } }, 'agents.list[0].tools.alsoalow', 'did you mean "alsoAllow"?'],
  ])('suggests the nearest key for an unknown one (%#)', (raw, path, hint) => {
    const problems = reject(raw);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe(path);
    expect(problems[0]!.message).toContain(hint);
  });

  it.each([['many'], [0], [1.5], [-2], [true]])('rejects channels.discord.shards %j with the key path and what it takes', (shards) => {
    expect(reject({ channels: { discord: { shards } } })).toEqual([{ path: 'channels.discord.shards', message: 'must be "auto", a whole number of shards (at least 1), or a list of shard ids with shardCount' }]);
  });

  it.each([
    [{ shards: [0, 1] }, [{ path: 'channels.discord.shardCount', message: 'required when shards lists shard ids' }]],
    [{ shards: [0, 2], shardCount: 2 }, [{ path: 'channels.discord.shards', message: 'shard ids must be below shardCount (2): 2' }]],
    [{ shards: [1, 1], shardCount: 2 }, [{ path: 'channels.discord.shards', message: 'lists a shard id twice' }]],
    [{ shards: 2, shardCount: 2 }, [{ path: 'channels.discord.shardCount', message: 'only with shards as a list of shard ids (shards: N already says the count)' }]],
    [{ shardCount: 0 }, [{ path: 'channels.discord.shardCount', message: 'must be a whole number of shards, at least 1' }]],
    [{ shards: [], shardCount: 2 }, [{ path: 'channels.discord.shards', message: 'must list at least one shard id' }]],
    [{ shards: [-1], shardCount: 2 }, [{ path: 'channels.discord.shards[0]', message: 'shard ids are whole numbers from 0' }]],
  ])('rejects the shard list %j with the key path', (discord, problems) => {
    for (const problem of problems) expect(reject({ channels: { discord } })).toContainEqual(problem);
  });

  it('accepts a list of this process\'s shard ids with shardCount', () => {
    const parsed = parseConfig({ channels: { discord: { shards: [1], shardCount: 2 } } });
    expect(parsed.ok && parsed.value.config.channels.discord).toMatchObject({ shards: [1], shardCount: 2 });
  });

  it.each([['auto'], [1], [4], [undefined]])('accepts channels.discord.shards %j', (shards) => {
    const parsed = parseConfig({ channels: { discord: { shards } } });
    expect(parsed.ok && parsed.value.config.channels.discord?.shards).toBe(parsed.ok ? shards : 'rejected');
  });

  it('gives no suggestion when nothing is close', () => {
    expect(reject({ tools: { zzzzzzzz: 1 } })[0]!.message).toBe('unknown key');
  });

  it('rejects an unknown profile with the valid ones', () => {
    expect(reject({ tools: { profile: 'admin' } })[0]!.message).toMatch(/unknown profile "admin"; expected one of minimal, coding, messaging, full/);
  });

  it.each([
    ['tools', { tools: { allow: ['read'], alsoAllow: ['exec'] } }, 'tools.alsoAllow'],
    ['an agent', { agents: { list: [{ id: 'a', tools: { allow: ['read'], alsoAllow: ['exec'] } }] } }, 'agents.list[0].tools.alsoAllow'],
    ['a channel', { channels: { slack: { channels: { '#dev': { tools: { allow: ['a'], alsoAllow: ['b'] } } } } } }, 'channels.slack.channels["#dev"].tools.alsoAllow'],
    ['byProvider', { tools: { byProvider: { openai: { allow: ['a'], alsoAllow: ['b'] } } } }, 'tools.byProvider.openai.alsoAllow'],
  ])('rejects allow together with alsoAllow in %s', (_scope, raw, path) => {
    const problems = reject(raw);
    expect(problems.map((p) => p.path)).toEqual([path]);
    expect(problems[0]!.message).toMatch(/allow and alsoAllow cannot both be set/);
  });

  it('accepts alsoAllow with an empty allow', () => {
    expect(parseConfig({ tools: { allow: [], alsoAllow: ['browser'] } }).ok).toBe(true);
  });

  it('rejects duplicate agent ids and two default agents', () => {
    const problems = reject({ agents: { list: [{ id: 'a', default: true }, { id: 'a', default: true }] } });
    expect(problems.map((p) => p.message)).toEqual(expect.arrayContaining(['duplicate agent id "a"', 'more than one agent has default: true']));
  });

  it('rejects a model id without a provider', () => {
    expect(reject({ models: { default: 'gpt-5' } })[0]!.path).toBe('models.default');
  });
});

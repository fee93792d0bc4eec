// One surface on every path: the same matrix of contexts goes through the running bot's path
// (the router, the executor and `/tools` report exactly as `warden start` wires them, and the
// real sessions_spawn tool for subagents) and through the CLI (`warden tools --json`,
// `warden exec-check --json` and `warden invoke`, run in-process through its entry), and both must answer the same
// tools, the same removals with the same labels, the same unavailable tools with the same why.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { SessionContextStore } from '../../src/turn/session-contexts.js';
import { AgentSessions } from '../../src/agent/sessions.js';
import { SubagentRunStore } from '../../src/agent/subagent-runs.js';
import { DbTranscriptStore } from '../../src/agent/transcript.js';
import type { TurnRequest } from '../../src/agent/types.js';
import { ApprovalService } from '../../src/approvals/service.js';
import { main } from '../../src/cli.js';
import { loadConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { routeMessage } from '../../src/gateway/router.js';
import { createToolPath } from '../../src/app/startup.js';
import type { InboundMessage } from '../../src/gateway/types.js';
import { isCommand } from '../../src/gateway/commands.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/index.js';

const OWNER = { discord: '900000000000000001', slack: 'UOWNER', web: 'local' } as const;
const SENDERS = [
  { name: 'owner', id: (p: Provider) => OWNER[p] },
  { name: 'non-owner', id: () => '555' },
  { name: 'toolsBySender entry', id: () => '998877' },
] as const;
type Provider = 'discord' | 'slack' | 'web';

/** Where a message can come from: provider, chat type and the scopes around it. */
interface Place {
  provider: Provider;
  chat: 'dm' | 'channel' | 'thread';
  guildId?: string;
  guildName?: string;
  channelId: string;
  channelName?: string;
  threadId?: string;
}
const channelPlaces: Array<Omit<Place, 'chat'>> = [
  { provider: 'discord', guildId: '111', channelId: '501', channelName: 'general' },
  { provider: 'discord', guildId: '111', channelId: '502', channelName: 'dev' },
  { provider: 'discord', guildId: '111', channelId: '503', channelName: 'random' },
  // A guild scoped by the slug of its name.
  { provider: 'discord', guildId: '999', guildName: 'Ops Team', channelId: '601', channelName: 'general' },
  { provider: 'slack', guildId: 'T1', channelId: 'C1', channelName: 'general' },
  { provider: 'slack', guildId: 'T1', channelId: 'C2', channelName: 'dev' },
  { provider: 'web', channelId: 'w1', channelName: 'general' },
];
const PLACES: Place[] = [
  ...(['discord', 'slack', 'web'] as const).map((provider): Place => ({ provider, chat: 'dm', channelId: provider === 'web' ? 'web' : 'D1' })),
  ...channelPlaces.map((p): Place => ({ ...p, chat: 'channel' })),
  ...channelPlaces.map((p): Place => ({ ...p, chat: 'thread', threadId: 't1' })),
];

const MODELS = {
  anthropic: { default: 'anthropic/claude-sonnet-4-5' },
  openai: { default: 'openai/gpt-5' },
  none: {},
  'no tool support': { default: 'local/llama3', providers: { local: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', supportsTools: false } } },
} as const;

function configFor(model: keyof typeof MODELS, sandbox: boolean, plugins: boolean) {
  return {
    owners: { discord: [OWNER.discord], slack: [OWNER.slack] },
    models: MODELS[model],
    agents: { defaults: { subagents: { maxSpawnDepth: 2 } } },
    tools: {
      profile: 'coding',
      alsoAllow: ['browser', ...(plugins ? ['plug_optional'] : [])],
      byProvider: { 'openai/gpt-5': { deny: ['image'] } },
      toolsBySender: { 'id:998877': { deny: ['exec', 'write'] } },
      exec: { host: sandbox ? 'sandbox' : 'gateway', allowlist: [{ pattern: '/usr/bin/ls' }] },
      sandbox: { tools: { deny: ['web_fetch'] } },
    },
    ...(plugins ? { plugins: { paths: ['plugins'] } } : {}),
    channels: {
      discord: {
        guilds: {
          '111': { tools: { deny: ['memory_search'] }, channels: { general: { tools: { deny: ['exec', 'process'] } }, dev: { tools: { allow: ['*'] } } } },
          'ops-team': { tools: { deny: ['pdf'] } },
        },
      },
      slack: { channels: { '#general': { tools: { deny: ['exec'] } }, '#dev': { tools: { allow: ['group:fs', 'exec', 'sessions_spawn', 'plug_tool'] } } } },
    },
  };
}

const CONFIGS = (Object.keys(MODELS) as Array<keyof typeof MODELS>).flatMap((model) =>
  [true, false].flatMap((sandbox) => [true, false].map((plugins) => ({ model, sandbox, plugins, name: `${model}, sandbox ${sandbox ? 'on' : 'off'}, plugins ${plugins ? 'present' : 'absent'}` }))),
);

// ── the two paths ───────────────────────────────────────────────────────────────────────────

interface Answer {
  tools: string[];
  removed: Array<{ tool: string; by: string }>;
  unavailable: Array<{ tool: string; why: string }>;
  error?: string;
}

let root: string;
let store: Store;
beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'warden-parity-'));
  const opened = await openWardenStore({ dataDir: path.join(root, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
});
afterAll(async () => {
  await store?.close();
});

function cliFlags(place: Place, senderId: string, depth: number): string[] {
  const flags = ['--provider', place.provider, '--chat', place.chat, '--channel', place.channelId, '--sender', senderId, '--spawn-depth', String(depth)];
  if (place.chat !== 'dm' && place.guildId) flags.push('--guild', place.guildId);
  if (place.chat !== 'dm' && place.guildName) flags.push('--guild-name', place.guildName);
  if (place.chat !== 'dm' && place.channelName) flags.push('--channel-name', place.channelName);
  if (place.threadId) flags.push('--thread', place.threadId);
  return flags;
}

async function cli(cwd: string, argv: string[]): Promise<{ code: number; json: any }> {
  let out = '';
  let err = '';
  const code = await main(argv, { cwd, env: {}, stdout: (t) => (out += t), stderr: (t) => (err += t) });
  if (code === 2) throw new Error(`warden ${argv.join(' ')} exited 2: ${err}`);
  return { code, json: JSON.parse(out) };
}

/** The running bot for one config: routing, executor, /tools report and sessions as `warden start` wires them. */
function liveBot(dir: string) {
  const loaded = loadConfig({ file: path.join(dir, 'warden.config.yaml'), cwd: dir, env: {} });
  if (!loaded.ok) throw loaded.error;
  const { config, baseDir } = loaded.value;
  const events = new EventBus();
  const approvals = new ApprovalService({ store, config, events });
  const runtime = { config, baseDir, store };
  const { executor, toolReport } = createToolPath(config, runtime, { store, approvals, events });
  // The turn loop itself is not under test: a child's turn request is where its context shows.
  const started: TurnRequest[] = [];
  const sessions = new AgentSessions({ config, transcripts: new DbTranscriptStore(store.db), runs: new SubagentRunStore(store.db), contexts: new SessionContextStore(store.db) });
  sessions.attach({ runTurn: async (request) => (started.push(request), { status: 'completed', reply: '', rounds: 0, usage: { inputTokens: 0, outputTokens: 0 } }) });
  Object.assign(runtime, { sessions });
  let spawnCount = 0;

  const answer = async (turn: TurnContext, sessionKey: string): Promise<Answer> => {
    const report = toolReport(turn);
    const surface = await executor.surface(turn, sessionKey);
    if (!surface.ok) return { tools: [], removed: report.removed, unavailable: report.unavailable, error: surface.message };
    // What the model is offered is exactly what the report lists as tools.
    expect(surface.tools.map((t) => t.id).sort()).toEqual([...report.tools].sort());
    return { tools: report.tools, removed: report.removed, unavailable: report.unavailable };
  };

  /** The child a turn's model would get by calling sessions_spawn, through the real tool and call chain; undefined when it cannot spawn. */
  const spawn = async (parent: TurnContext, sessionKey: string): Promise<{ turn: TurnContext; sessionKey: string } | undefined> => {
    const surface = await executor.surface(parent, sessionKey);
    if (!surface.ok || !surface.tools.some((t) => t.id === 'sessions_spawn')) return undefined;
    const before = started.length;
    const result = await executor.execute(
      { toolCallId: `spawn-${++spawnCount}`, tool: 'sessions_spawn', args: { task: `task ${spawnCount}` } },
      { sessionKey, turn: surface.turn ?? parent, signal: new AbortController().signal, surface: surface.tools.map((t) => t.id) },
    );
    const child = started[before];
    if (result.isError || !child) return undefined;
    return { turn: child.turn, sessionKey: child.sessionKey };
  };

  const route = (place: Place, senderId: string) => {
    const message: InboundMessage = {
      provider: place.provider,
      chatType: place.chat,
      guildId: place.chat === 'dm' ? undefined : place.guildId,
      guildName: place.chat === 'dm' ? undefined : place.guildName,
      channelId: place.channelId,
      channelName: place.chat === 'dm' ? undefined : place.channelName,
      threadId: place.threadId,
      senderId,
      text: '<@1> hello',
      mentionsBot: true,
      messageId: 'm',
      receivedAt: 0,
    };
    const decision = routeMessage(config, message, { isCommand });
    if (decision.kind !== 'route') throw new Error(`not routed: ${decision.reason}`);
    return decision.route;
  };
  return { route, answer, spawn, shutdown: () => approvals.shutdown() };
}

function writeConfig(c: (typeof CONFIGS)[number]): string {
  const dir = path.join(root, c.name.replace(/[^a-z0-9]+/gi, '-'));
  mkdirSync(path.join(dir, 'workspace'), { recursive: true });
  if (c.plugins) {
    mkdirSync(path.join(dir, 'plugins', 'deploy'), { recursive: true });
    writeFileSync(
      path.join(dir, 'plugins', 'deploy', 'warden.plugin.json'),
      JSON.stringify({ id: 'deploy', contracts: { tools: ['plug_tool', 'plug_optional'], hooks: [] }, toolMetadata: { plug_tool: { profiles: ['coding'] }, plug_optional: { optional: true } } }),
    );
  }
  writeFileSync(path.join(dir, 'warden.config.yaml'), stringify(configFor(c.model, c.sandbox, c.plugins)));
  return dir;
}

// ── the matrix ──────────────────────────────────────────────────────────────────────────────

describe.each(CONFIGS)('$name', (c) => {
  it('the live path and the CLI answer the same surface, labels and exec verdict in every context', async () => {
    const dir = writeConfig(c);
    const bot = liveBot(dir);
    let compared = 0;
    let children = 0;
    const invokedAt = new Set<Place>();
    try {
      for (const place of PLACES) {
        for (const sender of SENDERS) {
          const senderId = sender.id(place.provider);
          const route = bot.route(place, senderId);
          let turn: { turn: TurnContext; sessionKey: string } | undefined = { turn: route.context, sessionKey: route.sessionKey };
          for (let depth = 0; depth <= 2 && turn; depth++) {
            const what = `${place.provider} ${place.chat} ${place.guildId ?? ''}#${place.channelName ?? place.channelId}, ${sender.name}, depth ${depth}`;
            const live = await bot.answer(turn.turn, turn.sessionKey);
            const flags = cliFlags(place, senderId, depth);
            const tools = await cli(dir, ['tools', '--json', ...flags]);
            if (live.error) {
              expect(tools, what).toEqual({ code: 3, json: { error: live.error } });
            } else {
              expect(tools.code, what).toBe(0);
              expect({ tools: tools.json.tools, removed: tools.json.removed, unavailable: tools.json.unavailable }, what).toEqual(live);
            }

            const check = await cli(dir, ['exec-check', '--json', ...flags, '--', 'ls']);
            if (live.error) expect(check, what).toEqual({ code: 3, json: { error: live.error } });
            else if (live.tools.includes('exec')) expect(check, what).toMatchObject({ code: 0, json: { decision: 'allow' } });
            else {
              const removed = live.removed.find((r) => r.tool === 'exec');
              const why = removed ? `removed by ${removed.by}` : `unavailable: ${live.unavailable.find((u) => u.tool === 'exec')!.why}`;
              expect(check, what).toMatchObject({ code: 5, json: { decision: 'deny', reason: `exec is not on this surface (${why})` } });
            }
            // `warden invoke` refuses at the surface gate with the same label (only where exec is gone: nothing runs;
            // once per place in a quarter of the configs, as each call opens the store).
            if (c.plugins && !c.sandbox && depth === 0 && !live.error && !live.tools.includes('exec') && !invokedAt.has(place)) {
              invokedAt.add(place);
              const invoked = await cli(dir, ['invoke', 'exec', '--json', ...flags, '--args', '{"command":"ls"}']);
              const removed = live.removed.find((r) => r.tool === 'exec');
              const why = removed ? `removed by ${removed.by}` : `unavailable: ${live.unavailable.find((u) => u.tool === 'exec')!.why}`;
              expect(invoked.code, what).toBe(5);
              expect(invoked.json, what).toMatchObject({ status: 'blocked', deniedReason: 'not-on-surface', content: [{ text: expect.stringContaining(`(${why})`) }] });
            }
            if (c.model === 'no tool support') expect(live.tools, what).toEqual([]);
            compared++;
            // The next depth is the child this turn would really spawn (its ceiling computed by the tool).
            turn = depth < 2 ? await bot.spawn(turn.turn, turn.sessionKey) : undefined;
            if (turn) children++;
          }
        }
      }
    } finally {
      bot.shutdown();
    }
    expect(compared).toBeGreaterThanOrEqual(PLACES.length * SENDERS.length);
    // With a model that can call tools, subagents at depth 1 and 2 are reached in most places.
    if (c.model === 'anthropic' || c.model === 'openai') expect(children).toBeGreaterThan(PLACES.length * SENDERS.length);
    else expect(children).toBe(0);
    if (c.plugins && !c.sandbox) expect(invokedAt.size).toBeGreaterThan(0);
  }, 120_000);
});

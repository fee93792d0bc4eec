// Attack class: a non-owner learns that the owner-only control tools exist. The README promises
// they are never visible to anyone but an owner; a member probes every output they can reach —
// chat commands through the real router (typed and native), `warden tools`/`warden invoke` run
// for them with --sender, the model's tool calls in their turn (direct, through tool_call,
// tool_describe and tool_search), and the warnings and errors any of these print — under
// configs that name those tools (`tools.alsoAllow: [gateway]`, the README's own recipe, and
// more). Nothing names or counts an owner-only tool: where a reply must echo what was typed,
// it is the reply a name that names nothing gets. An owner still sees everything (the control
// rows), so the tests can fail. The owner-only list is read from the tool catalog.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { main } from '../../src/cli.js';
import { parseConfig, type WardenConfigInput } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { reservedCommandNames } from '../../src/gateway/command-text.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { createToolPath } from '../../src/app/startup.js';
import type { GovernedToolExecutor } from '../../src/app/tool-executor.js';
import type { ChatAdapter, InboundMessage, OutboundMessage } from '../../src/gateway/types.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { skillCommandSpecs } from '../../src/skills/commands.js';
import { testSkill } from '../../src/skills/testing.js';
import { CORE_TOOLS } from '../../src/policy/catalog.js';
import { TOOL_ALIASES } from '../../src/policy/tool-names.js';

const GUILD = '111';
const OWNER = '900';
const MEMBER = '555';
/** A word that names no tool and no command, to compare every answer with. */
const NOTHING = 'qzxv';

/** Every owner-only tool id, and every alias of one, from the catalog. */
const OWNER_ONLY = CORE_TOOLS.filter((t) => t.ownerOnly).map((t) => t.id);
const OWNER_NAMES = [...OWNER_ONLY, ...Object.entries(TOOL_ALIASES).filter(([, id]) => OWNER_ONLY.includes(id)).map(([alias]) => alias)];
const NAMES_RE = new RegExp(`(?<![\\w-])(?:${OWNER_NAMES.join('|')})(?![\\w-])`, 'i');
/** "3 owner-only tools", "owner-only", "reserved for owners", "restricted to owners": a count or a trace. */
const COUNT_RE = /owner-only|\d+\s+owner|reserved for owners|restricted to owners/i;

it('the catalog has owner-only tools to hide (the table is not empty)', () => {
  expect(OWNER_ONLY.length).toBeGreaterThanOrEqual(3);
});

/** Configs that name owner-only tools in every place an allowlist can. */
const CONFIGS: Array<[label: string, tools: WardenConfigInput['tools'], extra?: WardenConfigInput]> = [
  ["the README's recipe: alsoAllow gateway", { profile: 'coding', alsoAllow: ['gateway'] }],
  ['alsoAllow nodes', { profile: 'coding', alsoAllow: ['nodes'] }],
  ['alsoAllow every owner-only tool and alias', { profile: 'messaging', alsoAllow: OWNER_NAMES }],
  ['an allowlist with an owner-only tool beside others', { allow: ['read', 'gateway', 'cron'] }],
  ['an allowlist of owner-only tools only (the empty-allowlist guard)', { allow: ['gateway', 'nodes'] }],
  ['a glob that matches them', { allow: ['read', 'gate*', 'no*'] }],
  ['every tool', { profile: 'full' }],
  ['an agent allowlist naming cron', undefined, { agents: { list: [{ id: 'main', tools: { allow: ['read', 'automations'] } }] } }],
  ['a sender policy naming gateway', { profile: 'coding', toolsBySender: { [`id:${MEMBER}`]: { alsoAllow: ['gateway'] } } }],
];

class RecordingAdapter implements ChatAdapter {
  readonly provider = 'discord' as const;
  readonly sent: string[] = [];
  private onMessage: ((m: InboundMessage) => Promise<void>) | undefined;
  approvals = { provider: 'discord', show: async () => {}, update: async () => {} };
  async start(onMessage: (m: InboundMessage) => Promise<void>) {
    this.onMessage = onMessage;
  }
  async send(_target: unknown, message: OutboundMessage) {
    this.sent.push(message.text);
  }
  typing() {
    return () => {};
  }
  async stop() {}
  async say(senderId: string, text: string, native = false): Promise<string> {
    const from = this.sent.length;
    await this.onMessage!({
      provider: 'discord',
      chatType: 'channel',
      guildId: GUILD,
      channelId: '502',
      channelName: 'dev',
      senderId,
      text,
      mentionsBot: true,
      messageId: String(Math.random()),
      receivedAt: Date.now(),
      ...(native ? { invocationId: `i-${Math.random()}` } : {}),
    });
    for (const until = Date.now() + 20_000; this.sent.length <= from && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5));
    return this.sent.slice(from).join('\n---\n');
  }
}

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface World {
  dir: string;
  executor: GovernedToolExecutor;
  adapter: RecordingAdapter;
}

/** A deployment as `warden start` wires it, with skills that dispatch to owner-only tools. */
async function world(tools: WardenConfigInput['tools'], extra: WardenConfigInput = {}): Promise<World> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-owner-disclosure-'));
  mkdirSync(path.join(dir, 'workspace'));
  const raw: WardenConfigInput = {
    owners: { discord: [OWNER] },
    ...(tools ? { tools: { ...tools, toolSearch: true, exec: { host: 'gateway' } } } : { tools: { toolSearch: true, exec: { host: 'gateway' } } }),
    channels: { discord: { token: 't', guilds: { [GUILD]: {} } } },
    dataDir: path.join(dir, 'data'),
    ...extra,
  };
  writeFileSync(path.join(dir, 'warden.config.yaml'), JSON.stringify(raw));
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  const config = parsed.value.config;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config, events });
  const { executor, toolReport } = createToolPath(config, { config, baseDir: dir, store: opened.store }, { store: opened.store, approvals, events });
  const specs = skillCommandSpecs(
    [
      testSkill('gw', { description: 'Control the bot', commandDispatch: { kind: 'tool', tool: 'gateway', argMode: 'raw' } }),
      testSkill('jobs', { description: 'Scheduled jobs', commandDispatch: { kind: 'tool', tool: 'automations', argMode: 'raw' } }),
      testSkill('ghost', { description: 'Nothing', commandDispatch: { kind: 'tool', tool: NOTHING, argMode: 'raw' } }),
    ],
    reservedCommandNames(),
  );
  const adapter = new RecordingAdapter();
  const gateway = new Gateway({
    config,
    adapters: [adapter],
    agent: undefined,
    tools: executor,
    toolReport,
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
    skillCommands: { current: () => ({ agentId: 'main', specs, warnings: [], fingerprint: 'x' }) },
  });
  await gateway.start();
  cleanups.push(
    () => gateway.stop(),
    () => approvals.shutdown(),
    () => opened.store.close(),
  );
  return { dir, executor, adapter };
}

/** The same text with the probed owner-only name put in place of the word that names nothing. */
const asProbe = (text: string, name: string) => sameIds(text.replaceAll(NOTHING, name));
/** Approval ids differ from call to call, whatever the call. */
const sameIds = (text: string) => text.replace(/Approval [0-9a-f]{6,}/g, 'Approval <id>');

/** Commands a member types; `{}` is where a probe puts a name (an owner-only one, or one naming nothing). */
const PROBES = [
  '/{} list',
  '/{}',
  '/warden {} list',
  '/skill {}',
  '/tools --explain {}',
  '/exec {} status',
];
const PLAIN = ['/tools', '/tools --explain', '/help', '/status', '/skills', '/approvals', '/gw config.get', '/jobs list', '/skill gw x', '/cro', '/node', '/gatewa'];

describe.each(CONFIGS)('with %s', (_label, tools, extra) => {
  let w: World;
  it('a member’s chat commands never name or count an owner-only tool; an owner’s do', { timeout: 120_000 }, async () => {
    w = await world(tools, extra);
    for (const text of PLAIN) {
      for (const native of [false, true]) {
        const reply = await w.adapter.say(MEMBER, text, native);
        expect(reply, `${text} native=${native}`).not.toMatch(NAMES_RE);
        expect(reply, text).not.toMatch(COUNT_RE);
      }
    }
    for (const probe of PROBES) {
      const control = await w.adapter.say(MEMBER, probe.replace('{}', NOTHING));
      for (const name of OWNER_NAMES) {
        const text = probe.replace('{}', name);
        const reply = await w.adapter.say(MEMBER, text);
        expect(sameIds(reply), text).toBe(asProbe(control, name));
        expect(reply, text).not.toMatch(COUNT_RE);
      }
    }
    // The control: an owner is told (where the config offers them at all).
    const owner = await w.adapter.say(OWNER, '/tools');
    expect(owner).toMatch(NAMES_RE);
    expect(await w.adapter.say(OWNER, '/help')).toMatch(/\/cron/);
  });

  const member: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', guildId: GUILD, channelId: '502', channelName: 'dev', senderId: MEMBER, senderIsOwner: false, spawnDepth: 0, model: 'openai/gpt-5' };

  /** A call the model makes in the member's turn, through the executor `warden start` uses. */
  async function call(tool: string, args: Record<string, unknown>) {
    const surface = await w.executor.surface(member);
    const ids = surface.ok ? surface.tools.map((t) => t.id) : [];
    const result = await w.executor.execute({ toolCallId: 'c1', tool, args }, { sessionKey: 'agent:main:discord:channel:502', turn: member, signal: new AbortController().signal, surface: ids });
    return JSON.stringify({ content: result.content, isError: result.isError === true });
  }

  it('the model’s calls in a member’s turn: an owner-only name gets what a name naming nothing gets', async () => {
    const surface = await w.executor.surface(member);
    if (surface.ok) expect(surface.tools.map((t) => t.id).join(' ')).not.toMatch(NAMES_RE);
    else expect(surface.message).not.toMatch(NAMES_RE);
    const spellings = [(n: string) => n, (n: string) => n.toUpperCase(), (n: string) => ` ${n} `];
    for (const base of OWNER_NAMES) {
      for (const spell of spellings) {
        const name = spell(base);
        // What a name naming nothing, spelled alike, gets; its normalised form becomes the probe's.
        const like = (text: string) => asProbe(text.replaceAll(spell(NOTHING), name), base);
        const args = { action: 'config.get' };
        const direct = await call(name, args);
        expect(direct, name).toBe(like(await call(spell(NOTHING), args)));
        expect(direct).not.toMatch(COUNT_RE);
        if (!surface.ok || !surface.tools.some((t) => t.id === 'tool_call')) continue;
        expect(await call('tool_call', { id: name, args }), name).toBe(like(await call('tool_call', { id: spell(NOTHING), args })));
        expect(await call('tool_describe', { id: name }), name).toBe(like(await call('tool_describe', { id: spell(NOTHING) })));
      }
    }
    if (surface.ok && surface.tools.some((t) => t.id === 'tool_search')) {
      for (const query of ['gateway config patch restart', 'cron schedule automations job', 'nodes host pairing', 'owner control']) {
        const found = await call('tool_search', { query });
        expect(found, query).not.toMatch(NAMES_RE);
      }
    }
  });

  /** `warden <command>` in process, as the operator runs it for the member's context. */
  async function cli(argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await main([...argv, '--config', path.join(w.dir, 'warden.config.yaml')], { cwd: w.dir, env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return JSON.stringify({ code, stdout, stderr });
  }
  const asMember = ['--provider', 'discord', '--guild', GUILD, '--channel', '502', '--channel-name', 'dev', '--sender', MEMBER];

  it('warden tools and warden invoke with --sender <member>: nothing named, an --explain or a call like for nothing', { timeout: 60_000 }, async () => {
    for (const json of [[], ['--json']]) {
      const report = await cli(['tools', ...asMember, ...json]);
      expect(report).not.toMatch(NAMES_RE);
      expect(report).not.toMatch(COUNT_RE);
      const control = await cli(['tools', ...asMember, '--explain', NOTHING, ...json]);
      for (const name of OWNER_NAMES) expect(await cli(['tools', ...asMember, '--explain', name, ...json]), name).toBe(asProbe(control, name));
    }
    const nothing = await cli(['invoke', NOTHING, '--args', '{}', ...asMember]);
    for (const name of OWNER_NAMES) expect(await cli(['invoke', name, '--args', '{}', ...asMember]), name).toBe(asProbe(nothing, name));
    // The control: for the owner, warden tools --explain explains.
    expect(await cli(['tools', ...asMember.slice(0, -1), OWNER, '--explain', 'gateway'])).toMatch(/owner-only/);
  });
});

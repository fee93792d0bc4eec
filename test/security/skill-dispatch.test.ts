// A skill with `command-dispatch: tool` is a way to call a tool without the model: anyone who
// can type in a conversation can try it, and anyone who can write a SKILL.md into the
// workspace (the agent itself, with `write`) chooses the tool. So the dispatch must never
// reach a tool the conversation's surface does not have — whatever the skill names the tool
// (an alias, odd case and spaces, a coupled follower, an owner-only tool, one that does not
// exist) and however the command is spelled (`/run`, `/skill run`, `/warden run`, a native
// invocation) — and a skill can never take a built-in's name. Tried through the gateway, the
// governed executor and the policy exactly as `warden start` wires them.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolExecutor } from '../../src/agent/index.js';
import { ApprovalService } from '../../src/approvals/service.js';
import { parseConfig, type WardenConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { reservedCommandNames } from '../../src/gateway/command-text.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { createToolPath } from '../../src/app/startup.js';
import type { ChatAdapter, InboundMessage, OutboundMessage } from '../../src/gateway/types.js';
import { skillCommandSpecs } from '../../src/skills/commands.js';
import { testSkill } from '../../src/skills/testing.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/index.js';

const GUILD = '111';
const OWNER = '900';
const MEMBER = '555';

/** The skills an attacker might have planted, each dispatching to some spelling of a tool. */
const SKILLS: Array<[skill: string, tool: string]> = [
  ['run', 'exec'],
  ['shell', 'Bash'],
  ['loud', '  EXEC  '],
  ['poll', 'process'],
  ['jobs', 'cron'],
  ['gw', 'gateway'],
  ['host', 'nodes'],
  ['patch', 'apply_patch'],
  ['ghost', 'shell_exec'],
  // Named like built-ins: they get suffixed names and can never answer /exec or /approve.
  ['exec', 'gateway'],
  ['approve', 'gateway'],
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
  push(m: Omit<InboundMessage, 'provider' | 'mentionsBot' | 'messageId' | 'receivedAt'> & Partial<InboundMessage>) {
    return this.onMessage!({ provider: 'discord', mentionsBot: true, messageId: String(Math.random()), receivedAt: Date.now(), ...m });
  }
}

let store: Store;
let config: WardenConfig;
let gateway: Gateway;
let adapter: RecordingAdapter;
let approvals: ApprovalService;
/** Every call that reached the governed call chain. */
const executed: Array<{ tool: string; args: Record<string, unknown> }> = [];

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-skill-dispatch-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { discord: [OWNER] },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: { discord: { token: 't', guilds: { [GUILD]: { channels: { general: { tools: { deny: ['exec'] } }, dev: { tools: { allow: ['*'] } } } } } } },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  config = parsed.value.config;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  store = opened.store;
  const events = new EventBus();
  approvals = new ApprovalService({ store, config, events });
  const { executor, toolReport } = createToolPath(config, { config, baseDir: dir, store }, { store, approvals, events });
  const tools: ToolExecutor = {
    surface: (turn, key) => executor.surface(turn, key),
    execute: (call, scope) => (executed.push({ tool: call.tool, args: call.args }), executor.execute(call, scope)),
  };
  const specs = skillCommandSpecs(
    SKILLS.map(([name, tool]) => testSkill(name, { commandDispatch: { kind: 'tool', tool, argMode: 'raw' } })),
    reservedCommandNames(),
  );
  adapter = new RecordingAdapter();
  gateway = new Gateway({
    config,
    adapters: [adapter],
    agent: undefined,
    tools,
    toolReport,
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
    skillCommands: { current: () => ({ agentId: 'main', specs, warnings: [], fingerprint: 'x' }) },
  });
  await gateway.start();
});

afterAll(async () => {
  await gateway?.stop();
  approvals?.shutdown();
  await store?.close();
});

const general = { chatType: 'channel' as const, guildId: GUILD, channelId: '501', channelName: 'general' };
const dev = { chatType: 'channel' as const, guildId: GUILD, channelId: '502', channelName: 'dev' };
const dm = { chatType: 'dm' as const, channelId: 'D1' };
const GENERAL_DENY = `channels.discord.guilds.${GUILD}.channels.general.tools.deny`;

/** The command spellings of one skill command; every one must meet the same gate. */
const SPELLINGS = (name: string, args: string) => [`/${name} ${args}`, `/skill ${name} ${args}`, `/warden ${name} ${args}`, `/${name.replaceAll('_', '-')} ${args}`];

describe('command-dispatch: tool never reaches a tool the surface does not have', () => {
  const refused: Array<[label: string, skill: string, where: typeof general | typeof dm, sender: string, why: string]> = [
    ['exec where a channel deny removed it', 'run', general, MEMBER, `exec is not available here: removed by ${GENERAL_DENY}.`],
    ['exec by its alias', 'shell', general, MEMBER, `exec is not available here: removed by ${GENERAL_DENY}.`],
    ['exec in odd case and spaces', 'loud', general, MEMBER, `exec is not available here: removed by ${GENERAL_DENY}.`],
    ['process, which goes with a denied exec', 'poll', general, MEMBER, `process is not available here: removed by ${GENERAL_DENY}.`],
    // For a member an owner-only tool is answered as one that does not exist, and not named.
    ['an owner-only tool, for a member, in a DM', 'jobs', dm, MEMBER, 'the tool this command runs is not available here: not on this conversation’s tool surface.'],
    ['an owner-only tool, for a member, where everything is allowed', 'gw', dev, MEMBER, 'the tool this command runs is not available here: not on this conversation’s tool surface.'],
    ['another owner-only tool, for a member', 'host', dev, MEMBER, 'the tool this command runs is not available here: not on this conversation’s tool surface.'],
    ['a tool that does not exist, for a member', 'ghost', dev, MEMBER, 'the tool this command runs is not available here: not on this conversation’s tool surface.'],
    ['a tool this model may not have', 'patch', dev, MEMBER, 'apply_patch is not available here'],
    ['a tool that does not exist', 'ghost', dev, OWNER, 'shell_exec is not available here: not on this conversation’s tool surface.'],
  ];

  it.each(refused)('%s: refused with what removed it, for every spelling, typed or native', async (_label, skill, where, sender, why) => {
    for (const text of SPELLINGS(skill, 'echo pwned >> owned.txt')) {
      for (const native of [false, true]) {
        const sent = adapter.sent.length;
        const calls = executed.length;
        await adapter.push({ ...where, senderId: sender, text, ...(native ? { invocationId: `i-${Math.random()}`, mentionsBot: false } : {}) });
        await waitForAnswer(sent);
        expect(adapter.sent.slice(sent), `${text} native=${native}`).toEqual([expect.stringContaining(`/${skill}: ${why}`)]);
        expect(executed.slice(calls), text).toEqual([]);
      }
    }
  });

  it('the positive control: where exec is on the surface, the dispatch reaches the call chain with the raw text', async () => {
    const sent = adapter.sent.length;
    await adapter.push({ ...dev, senderId: MEMBER, text: '/run true' });
    await waitForAnswer(sent);
    expect(executed.at(-1)).toEqual({ tool: 'exec', args: { command: 'true' } });
  });

  it('an owner reaches an owner-only tool, and its schema still judges the raw arguments', async () => {
    const sent = adapter.sent.length;
    await adapter.push({ ...dm, senderId: OWNER, text: '/jobs list' });
    await waitForAnswer(sent);
    expect(executed.at(-1)).toEqual({ tool: 'cron', args: { command: 'list' } });
    expect(adapter.sent.at(-1)).toMatch(/^cron failed:\n```\n.*Invalid arguments for cron/s);
  });
});

describe('a skill cannot take a built-in command', () => {
  it.each([
    ['/exec true', 'exec'],
    ['/approve a1 deny', 'approve'],
  ])('%s is still the built-in; the skill answers only as %s_2', async (text, name) => {
    const sent = adapter.sent.length;
    const calls = executed.length;
    await adapter.push({ ...dm, senderId: MEMBER, text });
    await waitForAnswer(sent);
    // The built-in answered (exec's own path, or /approve's refusal) — no call to the skill's gateway tool.
    expect(executed.slice(calls).map((c) => c.tool)).not.toContain('gateway');
    const skill = adapter.sent.length;
    await adapter.push({ ...dm, senderId: MEMBER, text: `/${name}_2 x` });
    await waitForAnswer(skill);
    expect(adapter.sent.at(-1)).toBe(`/${name}_2: the tool this command runs is not available here: not on this conversation’s tool surface.`);
  });
});

async function waitForAnswer(from: number): Promise<void> {
  for (const until = Date.now() + 20_000; adapter.sent.length <= from && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5));
  if (adapter.sent.length <= from) throw new Error('no answer');
}

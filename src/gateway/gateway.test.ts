import { describe, expect, it, vi } from 'vitest';
import type { AgentRuntime } from '../agent/index.js';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { skillCommandSpecs } from '../skills/commands.js';
import { tempDir, testSkill, writeSkill } from '../skills/testing.js';
import { NEW_ELSEWHERE_TEXT, type ToolReport } from './commands.js';
import { reservedCommandNames } from './command-text.js';
import { BUSY_TEXT, Gateway, isTransientStartError, SHUTDOWN_TEXT, SUBAGENTS_DONE_TEXT, type GatewayOptions } from './gateway.js';
import { HeldAgent } from './held-agent-testing.js';
import type { ChatAdapter, InboundMessage, OutboundMessage, ReplyTarget } from './types.js';

/** An in-process chat platform: the test pushes messages in and reads what was sent back. */
class RecordingAdapter implements ChatAdapter {
  constructor(readonly provider: 'web' | 'discord' = 'web') {}
  readonly sent: Array<{ target: ReplyTarget; message: OutboundMessage }> = [];
  typingCount = 0;
  stopped = false;
  private onMessage: ((m: InboundMessage) => Promise<void>) | undefined;
  approvals = { provider: 'web', show: async () => {}, update: async () => {} };
  async start(onMessage: (m: InboundMessage) => Promise<void>) {
    this.onMessage = onMessage;
  }
  async send(target: ReplyTarget, message: OutboundMessage) {
    this.sent.push({ target, message });
  }
  typing() {
    this.typingCount++;
    return () => {};
  }
  async stop() {
    this.stopped = true;
  }
  push(text: string, over: Partial<InboundMessage> = {}) {
    return this.onMessage!({
      provider: 'web',
      chatType: 'dm',
      channelId: 'web',
      senderId: 'local',
      text,
      mentionsBot: false,
      messageId: String(Math.random()),
      receivedAt: Date.now(),
      ...over,
    });
  }
  texts() {
    return this.sent.map((s) => s.message.text);
  }
}

const report: ToolReport = { tools: ['read'], removed: [], unavailable: [], warnings: [] };

function setup(raw: WardenConfigInput = {}, over: Partial<GatewayOptions> = {}) {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  const adapter = new RecordingAdapter();
  const gateway = new Gateway({
    config: parsed.value.config,
    adapters: [adapter],
    agent: undefined,
    tools: undefined,
    toolReport: () => report,
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
    ...over,
  });
  return { adapter, gateway };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('Gateway with no model', () => {
  it('answers a plain message with how to add a model, and still runs commands', async () => {
    const { adapter, gateway } = setup();
    await gateway.start();
    await adapter.push('hello');
    await gateway.stop();
    expect(adapter.texts()[0]).toMatch(/No model is configured/);

    const second = setup();
    await second.gateway.start();
    await second.adapter.push('/tools');
    await second.adapter.push('/status');
    await second.gateway.stop();
    expect(second.adapter.texts()[0]).toBe('Your tools here (1): read');
    expect(second.adapter.texts()[1]).toContain('Session: agent:main:web:direct:local');
    expect(second.adapter.stopped).toBe(true);
  });
});

describe('Gateway with a model', () => {
  const withModel: WardenConfigInput = { models: { default: 'anthropic/claude-sonnet-4-5' } };

  it('runs turns in order, one at a time per session, with the turn context', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent });
    await gateway.start();
    await adapter.push('one');
    await adapter.push('two');
    await tick();
    expect(agent.requests.map((r) => r.input.text)).toEqual(['one']);
    expect(agent.requests[0]!.turn).toMatchObject({ provider: 'web', senderIsOwner: true, model: 'anthropic/claude-sonnet-4-5' });
    agent.releaseNext();
    await tick();
    agent.releaseNext();
    await tick();
    expect(adapter.texts()).toEqual(['echo: one', 'echo: two']);
    await gateway.stop();
  });

  it('shows the typing indicator only for turns that outlast typingDelayMs', async () => {
    const agent = new HeldAgent();
    // Waits on what happened, not on a clock: the delay is long enough that a loaded machine
    // still answers the quick turn before it, and the slow turn is held until typing shows.
    const { adapter, gateway } = setup(withModel, { agent, typingDelayMs: 1_000 });
    await gateway.start();
    await adapter.push('quick');
    agent.releaseNext();
    await vi.waitFor(() => expect(adapter.texts()).toEqual(['echo: quick']), { timeout: 10_000, interval: 5 });
    expect(adapter.typingCount).toBe(0);
    await adapter.push('slow');
    await vi.waitFor(() => expect(adapter.typingCount).toBe(1), { timeout: 10_000, interval: 20 });
    agent.releaseNext();
    await tick();
    expect(adapter.texts()).toEqual(['echo: quick', 'echo: slow']);
    await gateway.stop();
  });

  it('a full session queue gets a busy reply; nothing else is lost', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent, maxPending: 1 });
    await gateway.start();
    await adapter.push('a');
    await adapter.push('b');
    await adapter.push('c');
    expect(adapter.texts()).toEqual([BUSY_TEXT(1)]);
    agent.releaseNext();
    await tick();
    agent.releaseNext();
    await tick();
    expect(adapter.texts()).toEqual([BUSY_TEXT(1), 'echo: a', 'echo: b']);
    await gateway.stop();
  });

  it('/stop aborts the running turn without waiting behind it', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent });
    await gateway.start();
    await adapter.push('long job');
    await tick();
    await adapter.push('/stop');
    await tick();
    expect(agent.requests[0]!.signal.aborted).toBe(true);
    expect(adapter.texts()).toEqual(['Stopped the running turn.']);
    await gateway.stop();
  });

  it('DMs of two users run in two sessions', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent });
    await gateway.start();
    await adapter.push('from alice', { senderId: 'alice' });
    await adapter.push('from bob', { senderId: 'bob' });
    await tick();
    expect(agent.requests.map((r) => r.sessionKey)).toEqual(['agent:main:web:direct:alice', 'agent:main:web:direct:bob']);
    agent.releaseNext();
    agent.releaseNext();
    await gateway.stop();
  });

  it('a finished subagent starts a parent turn that answers in the parent conversation', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent });
    await gateway.start();
    gateway.announce('agent:main:web:direct:nobody');
    await tick();
    expect(agent.requests).toHaveLength(0);

    await adapter.push('spawn a helper');
    await tick();
    agent.releaseNext();
    await tick();
    gateway.announce('agent:main:web:direct:local');
    await tick();
    expect(agent.requests[1]).toMatchObject({ sessionKey: 'agent:main:web:direct:local', input: { text: SUBAGENTS_DONE_TEXT, origin: 'session' } });
    agent.releaseNext();
    await tick();
    expect(adapter.texts()).toEqual(['echo: spawn a helper', `echo: ${SUBAGENTS_DONE_TEXT}`]);
    await gateway.stop();
  });

  it('the parent turn a subagent result starts acts for whoever spawned it, not the latest sender', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup({ ...withModel, owners: { discord: ['owner'] } }, { agent });
    await gateway.start();
    const inChannel = { provider: 'web' as const, chatType: 'channel' as const, channelId: 'c1', channelName: 'dev', mentionsBot: true };
    // bob asks (his turn spawns a subagent), then the owner speaks last in the same channel.
    await adapter.push('spawn a helper', { ...inChannel, senderId: 'bob' });
    await tick();
    agent.releaseNext();
    await adapter.push('anything new?', { ...inChannel, senderId: 'local' });
    await tick();
    agent.releaseNext();
    await tick();
    expect(agent.requests[1]!.turn.senderIsOwner).toBe(true);
    gateway.announce('agent:main:web:channel:c1', { id: 'bob', owner: false });
    gateway.announce('agent:main:web:channel:c1');
    await tick();
    expect(agent.requests[2]!.turn).toMatchObject({ senderId: 'bob', senderIsOwner: false, channelName: 'dev' });
    agent.releaseNext();
    await tick();
    // Without a requester (not known after a restart) the turn runs as nobody's: never an owner.
    expect(agent.requests[3]!.turn).toMatchObject({ senderId: undefined, senderIsOwner: false });
    agent.releaseNext();
    await tick();
    await gateway.stop();
  });

  it('shutdown lets running turns finish within the grace period', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent, shutdownGraceMs: 5_000 });
    await gateway.start();
    await adapter.push('finish me');
    await tick();
    const stopping = gateway.stop();
    await adapter.push('too late');
    agent.releaseNext();
    await stopping;
    expect(adapter.texts()).toEqual([SHUTDOWN_TEXT, 'echo: finish me']);
    expect(adapter.stopped).toBe(true);
  });

  it('shutdown aborts turns that outlive the grace period and tells waiting senders', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent, shutdownGraceMs: 20 });
    await gateway.start();
    await adapter.push('stuck');
    await adapter.push('waiting');
    await tick();
    await gateway.stop();
    expect(agent.requests[0]!.signal.aborted).toBe(true);
    expect(agent.requests).toHaveLength(1);
    expect(adapter.texts()).toEqual([SHUTDOWN_TEXT]);
  });
});

describe('Gateway follow-up turns of decided approvals', () => {
  const withModel: WardenConfigInput = { models: { default: 'anthropic/claude-sonnet-4-5' }, sessions: { maxQueued: 1 } };

  it('every turn it runs may defer its approvals, so an undecided card never holds the conversation', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent });
    await gateway.start();
    await adapter.push('one');
    await tick();
    expect(agent.requests[0]!.deferApprovals).toBe(true);
    agent.releaseNext();
    await gateway.stop();
  });

  it('queues behind the conversation, even when it is full, runs its repair first, and answers in the conversation', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent });
    await gateway.start();
    await adapter.push('one');
    await adapter.push('two');
    await tick();
    const order: string[] = [];
    const context = { agentId: 'main', provider: 'web', chat: 'dm' as const, channelId: 'web', senderId: 'local', senderIsOwner: true, model: 'anthropic/claude-sonnet-4-5', spawnDepth: 0 };
    const queued = gateway.followUp({
      sessionKey: 'agent:main:web:direct:local',
      agentId: 'main',
      context,
      replyTo: { provider: 'web', channelId: 'web' },
      text: '[Approval a1] Allowed once by web:local. …',
      before: () => void order.push('repair'),
    });
    expect(queued).toBe(true);
    agent.releaseNext();
    await tick();
    agent.releaseNext();
    await tick();
    expect(order).toEqual(['repair']);
    const follow = agent.requests[2]!;
    // Warden's own words: not prefixed with a sender's name, not wrapped as another user's.
    expect(follow.input).toEqual({ text: '[Approval a1] Allowed once by web:local. …', origin: 'user' });
    expect(follow.deferApprovals).toBe(true);
    agent.releaseNext();
    await tick();
    expect(adapter.texts().at(-1)).toBe('echo: [Approval a1] Allowed once by web:local. …');
    await gateway.stop();
    expect(gateway.followUp({ sessionKey: 'k', agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text: 'late' })).toBe(false);
  });
});

describe('Gateway scheduled turns', () => {
  const withModel: WardenConfigInput = { models: { default: 'anthropic/claude-sonnet-4-5' } };
  const route = (text: string) => ({
    agentId: 'main',
    sessionKey: 'agent:main:web:direct:local',
    context: { agentId: 'main', provider: 'web', chat: 'dm' as const, channelId: 'web', senderId: 'cron:j1', senderIsOwner: false, spawnDepth: 0, model: 'anthropic/claude-sonnet-4-5' },
    replyTo: { provider: 'web' as const, channelId: 'web' },
    text,
  });

  it('runs behind the session queue, posts the answer and reports how it ended', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent });
    await gateway.start();
    await adapter.push('first');
    const outcome = gateway.runScheduled(route('job text'));
    await tick();
    expect(agent.requests.map((r) => r.input.text)).toEqual(['first']);
    agent.releaseNext();
    await tick();
    agent.releaseNext();
    expect(await outcome).toEqual({ ok: true, detail: 'echo: job text' });
    expect(adapter.texts()).toEqual(['echo: first', 'echo: job text']);
    expect(agent.requests[1]!.turn).toMatchObject({ senderId: 'cron:j1', senderIsOwner: false });
    await gateway.stop();
  });

  it('reports a shutdown instead of hanging', async () => {
    const { gateway } = setup(withModel, { agent: new HeldAgent() });
    await gateway.start();
    await gateway.stop();
    expect(await gateway.runScheduled(route('late'))).toEqual({ ok: false, error: 'Warden is shutting down' });
  });
});

describe('Gateway start when a platform is unreachable', () => {
  const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' });

  it('retries an unreachable platform with backoff and then serves it', async () => {
    const { adapter, gateway } = setup({}, { adapterRetryBaseMs: 5 });
    const realStart = adapter.start.bind(adapter);
    let failures = 2;
    let stops = 0;
    adapter.start = async (onMessage) => {
      if (failures-- > 0) throw refused();
      return realStart(onMessage);
    };
    adapter.stop = async () => void stops++;
    await gateway.start();
    expect(gateway.adapterStates()).toEqual([{ provider: 'web', state: 'retrying' }]);
    await expect.poll(() => gateway.adapterStates()[0]!.state, { timeout: 2000 }).toBe('running');
    await adapter.push('/help');
    expect(adapter.texts()[0]).toContain('/tools');
    expect(stops).toBe(2);
    await gateway.stop();
  });

  it('fails the start at once for an error that waiting will not fix', async () => {
    const { adapter, gateway } = setup();
    adapter.start = async () => {
      throw Object.assign(new Error('An invalid token was provided.'), { code: 'TokenInvalid' });
    };
    await expect(gateway.start()).rejects.toThrow('An invalid token was provided.');
  });

  it('stops retrying on shutdown', async () => {
    const { adapter, gateway } = setup({}, { adapterRetryBaseMs: 50 });
    let tries = 0;
    adapter.start = async () => {
      tries++;
      throw refused();
    };
    await gateway.start();
    await gateway.stop();
    await new Promise((r) => setTimeout(r, 150));
    expect(tries).toBe(1);
  });

  it.each([
    [refused(), true],
    [Object.assign(new Error('fetch failed'), { cause: { code: 'ENOTFOUND' } }), true],
    [Object.assign(new Error('Bad Gateway'), { status: 502 }), true],
    [Object.assign(new Error('invalid_auth'), { status: 401 }), false],
    [new Error('listen EADDRINUSE: address already in use'), false],
  ])('classifies %s as transient=%s', (err, transient) => {
    expect(isTransientStartError(err)).toBe(transient);
  });
});

describe('Gateway across a config reload', () => {
  it('a running turn keeps its config; a queued one starts under the new one', async () => {
    const first = parseConfig({ models: { default: 'anthropic/claude-sonnet-4-5' }, owners: { discord: ['1'] } });
    const second = parseConfig({ models: { default: 'openai/gpt-5' }, owners: { discord: ['1', '2'] } });
    if (!first.ok || !second.ok) throw new Error('config');
    const oldAgent = new HeldAgent();
    const newAgent = new HeldAgent();
    const { adapter, gateway } = setup({ models: { default: 'anthropic/claude-sonnet-4-5' } }, { agent: oldAgent, config: first.value.config });
    await gateway.start();
    await adapter.push('one', { provider: 'web', senderId: '2' });
    await adapter.push('two', { provider: 'web', senderId: '2' });
    await tick();
    expect(oldAgent.requests).toHaveLength(1);

    gateway.reconfigure({ config: second.value.config, agent: newAgent });
    expect(gateway.config).toBe(second.value.config);
    oldAgent.releaseNext();
    await tick();
    // The second message was routed under the old config and starts under the new one.
    expect(newAgent.requests).toHaveLength(1);
    expect(newAgent.requests[0]!.turn.model).toBe('openai/gpt-5');
    expect(oldAgent.requests[0]!.turn.model).toBe('anthropic/claude-sonnet-4-5');
    newAgent.releaseNext();
    await tick();
    await gateway.stop();
    expect(adapter.texts()).toEqual(['echo: one', 'echo: two']);
  });
});

describe('Gateway commands that are not built in', () => {
  const withModel: WardenConfigInput = { models: { default: 'anthropic/claude-sonnet-4-5' } };
  const dir = tempDir();
  const notesFile = writeSkill(dir, 'release-notes', 'description: Write release notes', '# Release notes\n\nGroup the changes.\n');
  const skills = skillCommandSpecs(
    [testSkill('release-notes', { location: notesFile }), testSkill('run', { commandDispatch: { kind: 'tool', tool: 'exec', argMode: 'raw' } })],
    reservedCommandNames(),
  );
  const skillCommands = { current: () => ({ agentId: 'main', specs: skills, warnings: [], fingerprint: 'x' }) };

  it('a skill command is a model turn with the skill\'s instructions and the typed request', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent, skillCommands });
    await gateway.start();
    await adapter.push('/release-notes v1.2');
    await tick();
    const text = agent.requests[0]!.input.text;
    expect(text).toContain('- release-notes (SKILL.md: ');
    expect(text).toContain('Group the changes.');
    expect(text.endsWith('\n\nUser request:\n/release-notes v1.2')).toBe(true);
    agent.releaseNext();
    await tick();
    await gateway.stop();
  });

  it('a tool-dispatch skill command runs its tool like /exec, never the model', async () => {
    const agent = new HeldAgent();
    const calls: unknown[] = [];
    const tools = {
      surface: () => ({ ok: true as const, tools: [{ id: 'exec', description: '', parameters: { type: 'object', additionalProperties: false } }] }),
      execute: async (call: unknown) => (calls.push(call), { content: [{ type: 'text' as const, text: 'done' }] }),
    };
    const { adapter, gateway } = setup(withModel, { agent, skillCommands, tools, toolReport: () => ({ ...report, tools: ['exec'] }) });
    await gateway.start();
    await adapter.push('/run pwd');
    await tick();
    await gateway.stop();
    expect(agent.requests).toHaveLength(0);
    expect(calls).toEqual([{ toolCallId: expect.stringMatching(/^cmd-/), tool: 'exec', args: { command: 'pwd' } }]);
    expect(adapter.texts()).toEqual(['```\ndone\n```']);
  });

  it('an unknown command is answered at once, with a did-you-mean, and never reaches the model', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = setup(withModel, { agent, skillCommands });
    await gateway.start();
    await adapter.push('/release-note v1');
    await adapter.push('/frobnicate');
    await gateway.stop();
    expect(agent.requests).toHaveLength(0);
    expect(adapter.texts()).toEqual([
      'Unknown command /release-note (did you mean /release_notes?). /help lists the commands; nothing was sent to the model.',
      'Unknown command /frobnicate. /help lists the commands; nothing was sent to the model.',
    ]);
  });

  it('where a mention is required, skill commands pass like built-ins, unknown ones are left alone, native ones always answer', async () => {
    const guild = { channels: { discord: { token: 't', guilds: { g1: { channels: { general: {} } } } } } };
    const parsed = parseConfig(guild);
    if (!parsed.ok) throw parsed.error;
    const adapter = new RecordingAdapter('discord');
    const gateway = new Gateway({
      config: parsed.value.config,
      adapters: [adapter],
      agent: undefined,
      tools: undefined,
      toolReport: () => report,
      approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
      skillCommands,
    });
    await gateway.start();
    const inChannel = { provider: 'discord' as const, chatType: 'channel' as const, guildId: 'g1', channelId: 'c1', channelName: 'general', senderId: 'u1' };
    await adapter.push('/frobnicate', inChannel);
    await adapter.push('/release-notes v1', inChannel);
    await adapter.push('/frobnicate', { ...inChannel, invocationId: 'i1' });
    await tick();
    await gateway.stop();
    expect(adapter.texts()).toEqual([
      expect.stringMatching(/^\/release_notes runs the release-notes skill, which needs a model/),
      'Unknown command /frobnicate. /help lists the commands; nothing was sent to the model.',
    ]);
  });

  it('/help lists the skill commands', async () => {
    const { adapter, gateway } = setup({}, { skillCommands });
    await gateway.start();
    await adapter.push('/help');
    await gateway.stop();
    const help = adapter.texts()[0]!;
    expect(help).toContain('/release_notes [input] — about release-notes');
    expect(help).toContain('/run [input] — about run (runs exec)');
    expect(help).toContain('/skill <name> [input] — run a skill by name');
  });

  it('/new where the platform keeps no sessions of its own says so', async () => {
    const { adapter, gateway } = setup();
    await gateway.start();
    await adapter.push('/new');
    await gateway.stop();
    expect(adapter.texts()).toEqual([NEW_ELSEWHERE_TEXT]);
  });

  it('/new switches the web chat to a fresh session and records it at once', async () => {
    const recorded: string[] = [];
    const sessionContexts = { record: (key: string) => void recorded.push(key) };
    const { adapter, gateway } = setup({}, { sessionContexts });
    let current: string | undefined;
    Object.assign(adapter, { newSession: async () => (current = 'fresh1') });
    await gateway.start();
    await adapter.push('/new');
    await adapter.push('/status', { sessionId: current });
    await gateway.stop();
    expect(adapter.texts()[0]).toBe('Started a new session: agent:main:web:direct:local:session:fresh1. The previous one, agent:main:web:direct:local, keeps its transcript.');
    expect(adapter.texts()[1]).toContain('Session: agent:main:web:direct:local:session:fresh1');
    expect(recorded).toEqual(['agent:main:web:direct:local', 'agent:main:web:direct:local:session:fresh1', 'agent:main:web:direct:local:session:fresh1']);
  });
});

/**
 * A platform whose sends wait until the test lets each one finish, logging when each starts and
 * ends; its stream surface logs its posts, and counts how often one was asked for.
 */
class SlowPlatform extends RecordingAdapter {
  readonly log: string[] = [];
  surfaces = 0;
  private readonly waiting: Array<() => void> = [];
  override async send(target: ReplyTarget, message: OutboundMessage) {
    this.log.push(`send ${message.text}`);
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    await super.send(target, message);
    this.log.push(`sent ${message.text}`);
  }
  streamTo() {
    this.surfaces++;
    return {
      limit: 2000,
      minIntervalMs: 0,
      post: async (text: string) => {
        this.log.push(`stream post ${text}`);
        return 'm1';
      },
      edit: async () => {},
    };
  }
  /** Lets the oldest waiting send finish; resolves once it has been recorded. */
  async deliverNext() {
    await vi.waitFor(() => expect(this.waiting.length).toBeGreaterThan(0), { timeout: 5_000, interval: 2 });
    const before = this.sent.length;
    this.waiting.shift()!();
    await vi.waitFor(() => expect(this.sent.length).toBe(before + 1), { timeout: 5_000, interval: 2 });
  }
}

/** Answers at once, logging each turn's start where the platform logs its sends; `stream` turns write as they go. */
function instantAgent(log: string[], stream: (text: string) => boolean = () => false): AgentRuntime {
  return {
    runTurn: async (request) => {
      log.push(`turn ${request.input.text}`);
      if (stream(request.input.text)) request.onTextDelta?.(`live ${request.input.text}`);
      return { status: 'completed', reply: `echo: ${request.input.text}`, rounds: 1, usage: { inputTokens: 0, outputTokens: 0 } };
    },
  };
}

describe("Gateway delivering a conversation's replies", () => {
  const withModel: WardenConfigInput = { models: { default: 'anthropic/claude-sonnet-4-5' } };

  function slowSetup(over: Partial<GatewayOptions> = {}, stream?: (text: string) => boolean, raw: WardenConfigInput = withModel) {
    const parsed = parseConfig(raw);
    if (!parsed.ok) throw parsed.error;
    const adapter = new SlowPlatform();
    const gateway = new Gateway({
      config: parsed.value.config,
      adapters: [adapter],
      agent: instantAgent(adapter.log, stream),
      tools: undefined,
      toolReport: () => report,
      approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
      ...over,
    });
    return { adapter, gateway };
  }

  it("the next turn runs while the previous reply is still going out; the replies reach the platform one at a time, in order", async () => {
    const { adapter, gateway } = slowSetup();
    await gateway.start();
    await adapter.push('one');
    await adapter.push('two');
    await adapter.push('three');
    // Every turn has run; only the first reply has been handed to the platform.
    await vi.waitFor(() => expect(adapter.log).toEqual(['turn one', 'send echo: one', 'turn two', 'turn three']), { timeout: 5_000, interval: 2 });
    await adapter.deliverNext();
    await adapter.deliverNext();
    await adapter.deliverNext();
    expect(adapter.log.filter((l) => !l.startsWith('turn'))).toEqual(['send echo: one', 'sent echo: one', 'send echo: two', 'sent echo: two', 'send echo: three', 'sent echo: three']);
    expect(adapter.texts()).toEqual(['echo: one', 'echo: two', 'echo: three']);
    await gateway.stop();
  });

  it('/stop while a reply is still going out stops the turn running after it', async () => {
    const agent = new HeldAgent();
    const { adapter, gateway } = slowSetup({ agent });
    await gateway.start();
    await adapter.push('one');
    agent.releaseNext();
    await vi.waitFor(() => expect(adapter.log).toEqual(['send echo: one']), { timeout: 5_000, interval: 2 });
    await adapter.push('two');
    await vi.waitFor(() => expect(agent.requests).toHaveLength(2), { timeout: 5_000, interval: 2 });
    const stopped = adapter.push('/stop');
    await vi.waitFor(() => expect(agent.requests[1]!.signal.aborted).toBe(true), { timeout: 5_000, interval: 2 });
    expect(agent.requests[0]!.signal.aborted).toBe(false);
    await adapter.deliverNext();
    await adapter.deliverNext();
    await stopped;
    expect(adapter.texts()).toEqual(['echo: one', 'Stopped the running turn.']);
    await gateway.stop();
  });

  it('another conversation does not wait for this one\'s delivery', async () => {
    const { adapter, gateway } = slowSetup();
    await gateway.start();
    await adapter.push('alice', { senderId: 'alice', channelId: 'dm-alice' });
    await adapter.push('bob', { senderId: 'bob', channelId: 'dm-bob' });
    await vi.waitFor(() => expect(adapter.log).toEqual(['turn alice', 'send echo: alice', 'turn bob', 'send echo: bob']), { timeout: 5_000, interval: 2 });
    await adapter.deliverNext();
    await adapter.deliverNext();
    await gateway.stop();
  });

  it("a streamed reply's first post waits for the previous reply", async () => {
    const { adapter, gateway } = slowSetup({}, (text) => text === 'two');
    await gateway.start();
    await adapter.push('one');
    await adapter.push('two');
    await vi.waitFor(() => expect(adapter.log).toEqual(['turn one', 'send echo: one', 'turn two']), { timeout: 5_000, interval: 2 });
    await tick();
    expect(adapter.log).not.toContain('stream post live two');
    await adapter.deliverNext();
    await vi.waitFor(() => expect(adapter.log.slice(3)).toEqual(['sent echo: one', 'stream post live two']), { timeout: 5_000, interval: 2 });
    // The streamed reply was edited to its final text in place: nothing more is sent.
    await gateway.stop();
    expect(adapter.texts()).toEqual(['echo: one']);
  });

  it('the stream surface is asked for only by a turn that writes as it goes', async () => {
    const { adapter, gateway } = slowSetup({}, (text) => text === 'streamed');
    await gateway.start();
    await adapter.push('plain');
    await adapter.deliverNext();
    expect(adapter.surfaces).toBe(0);
    await adapter.push('streamed');
    await vi.waitFor(() => expect(adapter.log).toContain('stream post live streamed'), { timeout: 5_000, interval: 2 });
    expect(adapter.surfaces).toBe(1);
    await gateway.stop();
  });

  it('streaming off: a turn that writes as it goes still answers with one plain reply', async () => {
    const { adapter, gateway } = slowSetup({}, () => true, { ...withModel, channels: { web: { streaming: false } } });
    await gateway.start();
    await adapter.push('hello');
    await adapter.deliverNext();
    expect(adapter.surfaces).toBe(0);
    expect(adapter.texts()).toEqual(['echo: hello']);
    await gateway.stop();
  });

  it("on a shared store the item holds the session until its reply is out, so another instance's next reply cannot overtake it", async () => {
    const held: string[] = [];
    const sessionLeases = {
      hold: async <T>(name: string, signal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> => {
        held.push(`hold ${name}`);
        try {
          return await fn(signal);
        } finally {
          held.push(`release ${name}`);
        }
      },
    };
    const { adapter, gateway } = slowSetup({ sessionLeases });
    await gateway.start();
    await adapter.push('one');
    await adapter.push('two');
    await vi.waitFor(() => expect(adapter.log).toEqual(['turn one', 'send echo: one']), { timeout: 5_000, interval: 2 });
    await tick();
    expect(adapter.log).toEqual(['turn one', 'send echo: one']);
    expect(held).toHaveLength(1);
    await adapter.deliverNext();
    await vi.waitFor(() => expect(adapter.log).toEqual(['turn one', 'send echo: one', 'sent echo: one', 'turn two', 'send echo: two']), { timeout: 5_000, interval: 2 });
    expect(held.slice(0, 3)).toEqual(['hold session:agent:main:web:direct:local', 'release session:agent:main:web:direct:local', 'hold session:agent:main:web:direct:local']);
    await adapter.deliverNext();
    await gateway.stop();
  });

  it('shutdown waits for replies still going out before it stops the platform; a scheduled turn reports once its reply is out', async () => {
    const { adapter, gateway } = slowSetup();
    await gateway.start();
    const route = { agentId: 'main', sessionKey: 'agent:main:web:direct:local', context: { agentId: 'main', provider: 'web', chat: 'dm', channelId: 'web', model: 'anthropic/claude-sonnet-4-5' } as never, replyTo: { provider: 'web' as const, channelId: 'web' }, text: 'cron job' };
    let outcome: unknown;
    const scheduled = gateway.runScheduled(route).then((o) => (outcome = o));
    await vi.waitFor(() => expect(adapter.log).toEqual(['turn cron job', 'send echo: cron job']), { timeout: 5_000, interval: 2 });
    const stopping = gateway.stop();
    await tick();
    expect(outcome).toBeUndefined();
    expect(adapter.stopped).toBe(false);
    await adapter.deliverNext();
    await stopping;
    await scheduled;
    expect(outcome).toEqual({ ok: true, detail: 'echo: cron job' });
    expect(adapter.stopped).toBe(true);
  });
});

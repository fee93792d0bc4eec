import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { channelTurn, createHarness, echoModel, FunctionToolExecutor } from '../app/agent-testing.js';
import { createAgentRuntime } from '../agent/runtime.js';
import { AgentSessions } from '../agent/sessions.js';
import { runTurn } from '../agent/turn.js';
import type { ModelProvider } from '../models/types.js';
import { UNTRUSTED_CONTENT_RULE } from '../agent/system-prompt.js';
import { parseConfig } from '../config/index.js';
import { Gateway } from '../gateway/gateway.js';
import type { ChatAdapter, InboundMessage, OutboundMessage, ReplyTarget } from '../gateway/types.js';
import { HookedCronJobs, skillChangeReporter } from '../plugins/lifecycle.js';
import type { PluginCommand } from '../plugins/runtime.js';
import { openWardenStore } from '../app/migrations.js';
import { HookBus } from './bus.js';
import type { HookName } from './types.js';

/** Which hooks Warden emits, where, with which payload; a table of what each may change. */

class Adapter implements ChatAdapter {
  readonly provider = 'web' as const;
  readonly sent: Array<{ target: ReplyTarget; message: OutboundMessage }> = [];
  approvals = { provider: 'web', show: async () => {}, update: async () => {} };
  private on?: (m: InboundMessage) => Promise<void>;
  async start(on: (m: InboundMessage) => Promise<void>) {
    this.on = on;
  }
  async send(target: ReplyTarget, message: OutboundMessage) {
    this.sent.push({ target, message });
  }
  typing() {
    return () => {};
  }
  async stop() {}
  push(text: string, senderId = 'local') {
    return this.on!({ provider: 'web', chatType: 'dm', channelId: 'web', senderId, text, mentionsBot: false, messageId: `m-${text}`, receivedAt: Date.now() });
  }
}

function gatewayWith(hooks: HookBus, pluginCommands?: Map<string, PluginCommand>) {
  const parsed = parseConfig({});
  if (!parsed.ok) throw parsed.error;
  const adapter = new Adapter();
  const gateway = new Gateway({
    config: parsed.value.config,
    adapters: [adapter],
    agent: undefined,
    tools: undefined,
    toolReport: () => ({ tools: ['read'], removed: [], unavailable: [], warnings: [] }),
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
    hooks,
    pluginCommands,
  });
  return { adapter, gateway };
}

function record(bus: HookBus, names: HookName[]) {
  const seen: Array<{ name: HookName; event: any; ctx: any }> = [];
  for (const name of names) bus.on(name, ((event: unknown, ctx: unknown) => void seen.push({ name, event, ctx })) as never);
  return seen;
}

describe('the gateway emits message and session hooks', () => {
  it('message_received, session_start, message_sending (rewrites), message_sent, session_end', async () => {
    const bus = new HookBus();
    const seen = record(bus, ['message_received', 'session_start', 'message_sent', 'session_end']);
    bus.on('message_sending', (e) => ({ content: e.content.replace('read', '[tool]') }));
    const { adapter, gateway } = gatewayWith(bus);
    await gateway.start();
    await adapter.push('/tools');
    await adapter.push('/tools');
    await vi.waitFor(() => expect(adapter.sent).toHaveLength(2));
    await gateway.stop();
    expect(adapter.sent.map((s) => s.message.text)).toEqual(['Your tools here (1): [tool]', 'Your tools here (1): [tool]']);
    const key = 'agent:main:web:direct:local';
    expect(seen.filter((s) => s.name === 'session_start')).toEqual([{ name: 'session_start', event: { sessionId: key, sessionKey: key }, ctx: { agentId: 'main', sessionId: key, sessionKey: key } }]);
    expect(seen.find((s) => s.name === 'message_received')).toMatchObject({ event: { from: 'local', content: '/tools', messageId: 'm-/tools', sessionKey: key }, ctx: { channelId: 'web', conversationId: 'web', sessionKey: key } });
    expect(seen.find((s) => s.name === 'message_sent')).toMatchObject({ event: { to: 'web', content: 'Your tools here (1): [tool]', success: true, sessionKey: key } });
    expect(seen.find((s) => s.name === 'session_end')).toMatchObject({ event: { sessionId: key, messageCount: 2, reason: 'shutdown' } });
  });

  it('message_sending may cancel a message; a failing handler is skipped (fails open)', async () => {
    const bus = new HookBus();
    bus.on('message_sending', () => {
      throw new Error('broken');
    }, { priority: 2 });
    bus.on('message_sending', (e) => (e.content.includes('Your tools') ? { cancel: true, cancelReason: 'quiet hours' } : undefined));
    const { adapter, gateway } = gatewayWith(bus);
    await gateway.start();
    await adapter.push('/tools');
    await adapter.push('/help');
    await gateway.stop();
    expect(adapter.sent.map((s) => s.message.text)).toHaveLength(1);
    expect(adapter.sent[0]!.message.text).toMatch(/^Commands:/);
  });
});

describe('plugin commands pass the same gates', () => {
  const command = (ownerOnly: boolean): PluginCommand => ({ pluginId: 'p', name: 'deploy', ownerOnly, config: {}, handler: (ctx) => `deploying ${ctx.args} for ${ctx.senderId} (owner ${ctx.senderIsOwner})` });

  it.each([
    [false, 'stranger', 'deploying api for stranger (owner false)'],
    [true, 'stranger', '/deploy is reserved for owners.'],
    [true, 'local', 'deploying api for local (owner true)'],
  ])('ownerOnly %s, sender %s', async (ownerOnly, sender, expected) => {
    const { adapter, gateway } = gatewayWith(new HookBus(), new Map([['deploy', command(ownerOnly)]]));
    await gateway.start();
    await adapter.push('/deploy api', sender);
    await vi.waitFor(() => expect(adapter.sent).toHaveLength(1));
    await gateway.stop();
    expect(adapter.sent.map((s) => s.message.text)).toEqual([expected]);
  });

  it('/help lists them (owner-only ones for owners only)', async () => {
    const { adapter, gateway } = gatewayWith(new HookBus(), new Map([['deploy', { ...command(true), description: 'ship it' }]]));
    await gateway.start();
    await adapter.push('/help', 'local');
    await adapter.push('/help', 'stranger');
    await gateway.stop();
    expect(adapter.sent[0]!.message.text).toContain('/deploy — ship it');
    expect(adapter.sent[1]!.message.text).not.toContain('/deploy');
  });
});

describe('the turn emits model and agent hooks', () => {
  it('before_model_resolve picks the model; model_call_started/ended and agent_end follow the run', async () => {
    const h = await createHarness({ models: { default: 'anthropic/test-model', providers: { local: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } } } });
    try {
      const bus = new HookBus();
      const seen = record(bus, ['model_call_started', 'model_call_ended', 'agent_end']);
      bus.on('before_model_resolve', (e) => (e.prompt.includes('cheap') ? { providerOverride: 'local', modelOverride: 'llama3' } : undefined));
      const models: string[] = [];
      const provider: ModelProvider = { ...echoModel, complete: (req, s) => (models.push(req.model), echoModel.complete(req, s)) };
      const outcome = await runTurn(h.deps(provider, new FunctionToolExecutor({}), { hooks: bus }), { sessionKey: 's1', turn: channelTurn(), input: { text: 'use the cheap model' }, signal: new AbortController().signal });
      await vi.waitFor(() => expect(seen).toHaveLength(3));
      expect(outcome.status).toBe('completed');
      expect(models).toEqual(['llama3']);
      expect(seen.map((s) => s.name)).toEqual(['model_call_started', 'model_call_ended', 'agent_end']);
      expect(seen[1]!.event).toMatchObject({ provider: 'local', model: 'llama3', outcome: 'completed', durationMs: expect.any(Number) });
      expect(seen[2]!.event).toMatchObject({ success: true, messages: [{ role: 'user' }, { role: 'assistant' }] });
      expect(seen[2]!.ctx).toMatchObject({ agentId: 'main', sessionKey: 's1', messageProvider: 'discord', conversation: { channelName: 'general' } });
    } finally {
      await h.cleanup();
    }
  });

  it('an override naming a model that cannot be used is ignored: the configured model answers', async () => {
    const h = await createHarness();
    try {
      const bus = new HookBus();
      bus.on('before_model_resolve', () => ({ modelOverride: 'nowhere/none' }));
      const models: string[] = [];
      const provider: ModelProvider = { ...echoModel, complete: (req, s) => (models.push(req.model), echoModel.complete(req, s)) };
      await runTurn(h.deps(provider, new FunctionToolExecutor({}), { hooks: bus }), { sessionKey: 's2', turn: channelTurn(), input: { text: 'hi' }, signal: new AbortController().signal });
      expect(models).toEqual(['test-model']);
    } finally {
      await h.cleanup();
    }
  });

  it("before_prompt_build's contexts reach the prompt; its system prompt never drops the untrusted-content rule", async () => {
    const h = await createHarness();
    try {
      const systems: string[] = [];
      const users: string[] = [];
      const provider: ModelProvider = {
        ...echoModel,
        complete: (req, s) => {
          systems.push(req.system);
          const last = req.messages.at(-1)!;
          users.push(last.content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
          return echoModel.complete(req, s);
        },
      };
      const tools = new FunctionToolExecutor({});
      const withPrompt = {
        surface: () => ({ ok: true as const, tools: [], prompt: { systemPrompt: 'You are the release bot.', prependContext: ['[ctx: release week]'], appendContext: [], prependSystemContext: ['PRE'], appendSystemContext: ['POST'] } }),
        execute: tools.execute.bind(tools),
      };
      await runTurn(h.deps(provider, withPrompt), { sessionKey: 's3', turn: channelTurn(), input: { text: 'status?' }, signal: new AbortController().signal });
      expect(systems[0]!.startsWith('PRE\n\nYou are the release bot.')).toBe(true);
      expect(systems[0]).toContain(UNTRUSTED_CONTENT_RULE);
      expect(systems[0]!.endsWith('POST')).toBe(true);
      expect(systems[0]).not.toContain('a team assistant answering');
      expect(users[0]).toBe('[ctx: release week]\n\nstatus?');
    } finally {
      await h.cleanup();
    }
  });
});

describe('subagents', () => {
  it('subagent_spawned when a child starts, subagent_ended when its run ends', async () => {
    const h = await createHarness();
    try {
      const bus = new HookBus();
      const seen = record(bus, ['subagent_spawned', 'subagent_ended']);
      let done!: () => void;
      const announced = new Promise<void>((r) => (done = r));
      const sessions = new AgentSessions({ config: h.config, transcripts: h.transcripts, runs: h.subagentRuns, contexts: h.sessionContexts, announce: () => done(), hooks: bus });
      createAgentRuntime(h.deps(echoModel, new FunctionToolExecutor({}), { sessions, hooks: bus }));
      const spawned = await sessions.spawn({ parentKey: 'agent:main:discord:channel:c1', parentTurn: channelTurn(), inherited: { deny: [] }, task: 'count files', label: 'counter' });
      expect(spawned.ok).toBe(true);
      await announced;
      await vi.waitFor(() => expect(seen).toHaveLength(2));
      const child = (spawned as { value: { childKey: string; runId: string } }).value;
      expect(seen[0]).toMatchObject({ name: 'subagent_spawned', event: { childSessionKey: child.childKey, agentId: 'main', label: 'counter', mode: 'run', runId: child.runId }, ctx: { requesterSessionKey: 'agent:main:discord:channel:c1' } });
      expect(seen[1]).toMatchObject({ name: 'subagent_ended', event: { targetSessionKey: child.childKey, targetKind: 'subagent', reason: 'completed', outcome: 'ok', runId: child.runId } });
    } finally {
      await h.cleanup();
    }
  });
});

describe('lifecycle hooks without a single call site', () => {
  it('cron_changed: added, updated, started, finished, removed', async () => {
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-cron-hooks-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    try {
      const bus = new HookBus();
      const seen = record(bus, ['cron_changed']);
      const jobs = new HookedCronJobs(opened.store.db, bus);
      const job = await jobs.add({ agentId: 'main', name: 'digest', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target: { sessionKey: 'k', provider: 'web', chat: 'dm' }, createdBy: 'u' }, Date.now());
      await jobs.setEnabled(job.id, false, Date.now());
      const run = await jobs.claim(job, 'manual', Date.now());
      await jobs.start(run, job.id, Date.now());
      await jobs.finish(run, job.id, 'error', 'model down', Date.now());
      await jobs.remove(job.id);
      expect(seen.map((s) => s.event.action)).toEqual(['added', 'updated', 'started', 'finished', 'removed']);
      expect(seen[3]!.event).toMatchObject({ jobId: job.id, status: 'error', error: 'model down' });
    } finally {
      await opened.store.close();
    }
  });

  it('skill_changed: created, updated, removed', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-skill-hooks-'));
    const skill = path.join(dir, 'workspace', 'skills', 'deploy');
    mkdirSync(skill, { recursive: true });
    const parsed = parseConfig({});
    if (!parsed.ok) throw parsed.error;
    const bus = new HookBus();
    const seen = record(bus, ['skill_changed']);
    const options = { baseDir: dir, env: {}, homeDir: dir, bundledDir: path.join(dir, 'none') };
    const refresh = skillChangeReporter(bus, () => parsed.value.config, options);
    writeFileSync(path.join(skill, 'SKILL.md'), '---\nname: deploy\ndescription: Ship it.\n---\nSteps.');
    refresh();
    writeFileSync(path.join(skill, 'SKILL.md'), '---\nname: deploy\ndescription: Ship it carefully.\n---\nSteps.');
    refresh();
    writeFileSync(path.join(skill, 'SKILL.md'), 'not a skill any more');
    refresh();
    expect(seen.map((s) => s.event.action)).toEqual(['created', 'updated', 'removed']);
    expect(seen[1]!.event).toMatchObject({ source: 'workspace', before: { description: 'Ship it.' }, after: { name: 'deploy', description: 'Ship it carefully.' } });
  });
});

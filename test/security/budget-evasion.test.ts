// A sender over their budget tries to get more model calls out of Warden anyway. Each attempt
// is what they control — which conversation, which tool (speech, transcription and image
// generation included), how the agent works, what the prompt
// holds, which model a hook picks — and each must land on the same counter or be refused before
// any request. Through the real usage service on a real store.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { childTurnFrom, INHERITED_POLICY_VERSION } from '../../src/agent/subagent-runs.js';
import { channelTurn } from '../../src/app/agent-testing.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { parseConfig, type WardenConfig } from '../../src/config/index.js';
import { callContext } from '../../src/tools/core/fs/test-support.js';
import { createImageGenerateTool } from '../../src/tools/core/media/image-generate.js';
import { createTtsTool, MAX_SPEECH_CHARS } from '../../src/tools/core/media/tts.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
import { startFakeOpenAIMedia } from '../fakes/models/openai-media-fake.js';
import type { TurnContext } from '../../src/policy/context.js';
import { countersFor } from '../../src/usage/budgets.js';
import { UsageService, type CallFacts } from '../../src/usage/service.js';
import { UsageStore } from '../../src/usage/store.js';
import type { UsageAttribution } from '../../src/usage/types.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const cfg = (() => {
  const parsed = parseConfig({
    models: { providers: { priced: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', models: [{ id: 'm', cost: { input: 10, output: 10 } }] }, free: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', models: [{ id: 'm', cost: { input: 0, output: 0 } }] }, unpriced: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1' } } },
    budgets: [
      { scope: 'sender', per: 'day', usd: 0.01 },
      { scope: 'sender', per: 'day', tokens: 5_000 },
    ],
  });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
})();

const attribution = (t: TurnContext, sessionKey: string, purpose = 'turn'): UsageAttribution => ({
  agentId: t.agentId,
  sessionKey,
  platform: t.provider,
  senderId: t.senderId,
  senderName: t.senderName,
  channelId: t.channelId,
  guildId: t.guildId,
  purpose,
});

const alice = channelTurn({ senderId: 'u1', senderName: 'alice' });
const SENDER_KEY = countersFor(cfg.budgets, attribution(alice, 'agent:main:discord:channel:c1'), Date.now()).map((c) => c.key);

const child = childTurnFrom(cfg, {
  parentKey: 'agent:main:discord:channel:c1',
  agentId: 'main',
  depth: 1,
  policyVersion: INHERITED_POLICY_VERSION,
  inherited: { allow: ['*'], deny: [] },
  turn: alice,
});

/** [attempt, the call's attribution]: every one is alice's, so it must be charged to alice's counters. */
const SAME_SENDER: Array<[string, UsageAttribution]> = [
  ['another channel of the guild', attribution(channelTurn({ senderId: 'u1', channelId: 'c9' }), 'agent:main:discord:channel:c9')],
  ['a direct message', attribution(channelTurn({ senderId: 'u1', chat: 'dm', channelId: 'd1', guildId: undefined }), 'agent:main:discord:direct:u1')],
  ['a thread', attribution(channelTurn({ senderId: 'u1', threadId: 't1' }), 'agent:main:discord:channel:c1:thread:t1')],
  ['another agent', attribution(channelTurn({ senderId: 'u1', agentId: 'ops' }), 'agent:ops:discord:channel:c1')],
  ['a subagent the turn spawned', attribution(child.ok ? child.turn : alice, 'agent:main:subagent:x', 'turn')],
  ['the image tool', attribution(alice, 'agent:main:discord:channel:c1', 'image')],
  ['media understanding of an attachment', attribution(alice, 'agent:main:discord:channel:c1', 'media-image')],
  ['compaction', attribution(alice, 'agent:main:discord:channel:c1', 'turn')],
  ['a display name changed to someone else’s', attribution(channelTurn({ senderId: 'u1', senderName: 'bob' }), 'agent:main:discord:channel:c1')],
];

describe('a sender cannot step around their budget', () => {
  it.each(SAME_SENDER)('%s is charged to the sender’s counters', (_attempt, a) => {
    expect(countersFor(cfg.budgets, a, Date.now()).map((c) => c.key)).toEqual(SENDER_KEY);
  });

  it('a subagent acts for its requester', () => {
    expect(child).toMatchObject({ ok: true, turn: { senderId: 'u1' } });
  });

  it('an id containing the key separator cannot name another counter', () => {
    const forged = countersFor(cfg.budgets, { ...attribution(alice, 's'), senderId: 'u1|day|x' }, Date.now()).map((c) => c.key);
    expect(forged.some((k) => SENDER_KEY.includes(k))).toBe(false);
    expect(forged.every((k) => k.split('|').length === 5)).toBe(true);
  });

  async function service() {
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-budget-evasion-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    closers.push(() => opened.store.close());
    return new UsageService({ store: new UsageStore(opened.store.db), config: () => cfg });
  }
  const facts = (over: Partial<CallFacts>): CallFacts => ({
    provider: 'priced',
    model: 'm',
    attribution: attribution(alice, 'agent:main:discord:channel:c1'),
    prompt: { chars: 100, bytes: 100, images: 0 },
    maxOutputTokens: 100,
    ...over,
  });

  it.each([
    ['a model with no known price (a hook switched to it) under a dollar budget', facts({ provider: 'unpriced' }), 'price unknown'],
    ['a prompt whose estimate alone passes the cap, on a fresh counter', facts({ prompt: { chars: 40_000, bytes: 40_000, images: 0 } }), 'is reached'],
    ['a free model: the token budget still counts', facts({ provider: 'free', prompt: { chars: 24_000, bytes: 24_000, images: 0 } }), 'tokens per day is reached'],
    ['images counted in the estimate', facts({ provider: 'free', prompt: { chars: 10, bytes: 10, images: 5 } }), 'tokens per day is reached'],
  ])('%s is refused before any request', async (_attempt, call, says) => {
    const usage = await service();
    const admission = await usage.admit(call);
    expect(admission.ok).toBe(false);
    if (!admission.ok) expect(admission.refusal.message).toContain(says);
  });

  it('once spent, every other way in is refused too', async () => {
    const usage = await service();
    const first = await usage.admit(facts({}));
    expect(first.ok).toBe(true);
    if (first.ok) await usage.settle(first.ticket, { inputTokens: 900, outputTokens: 300 });
    for (const [attempt, a] of SAME_SENDER) expect((await usage.admit(facts({ attribution: a }))).ok, attempt).toBe(false);
    // Bob is not alice.
    expect((await usage.admit(facts({ attribution: attribution(channelTurn({ senderId: 'u2' }), 's') }))).ok).toBe(true);
  });
});

describe('a sender over budget turns to speech or image generation', () => {
  // The media tools go through the same admission as a model call: once alice's token budget is
  // spent by a turn, each is refused before its request reaches the provider. (Transcription:
  // src/media-understanding/understand.test.ts, through its guarded provider requests.)
  const mediaCfg = (url: string) => {
    const parsed = parseConfig({
      models: { providers: { local: { api: 'openai', baseUrl: url } }, retry: { attempts: 1 } },
      media: { tts: { model: 'local/gpt-4o-mini-tts', voice: 'coral' }, imageGeneration: { model: 'local/dall-e-3' } },
      budgets: [{ scope: 'sender', per: 'day', tokens: 1_000 }],
    });
    if (!parsed.ok) throw parsed.error;
    return parsed.value.config;
  };
  const ctxFor = (workspaceDir: string): ToolCallContext => ({ ...callContext(workspaceDir), turn: alice, sessionKey: 'agent:main:discord:channel:c1' });

  it.each<[string, (cfg: WardenConfig, usage: UsageService, ws: string) => Promise<{ refused: boolean; text: string }>]>([
    ['speech of a short text', async (c, u, ws) => tool(await createTtsTool(c, {}, () => u).execute({ text: 'hi' }, ctxFor(ws)))],
    ['speech of the longest text', async (c, u, ws) => tool(await createTtsTool(c, {}, () => u).execute({ text: 'x'.repeat(MAX_SPEECH_CHARS) }, ctxFor(ws)))],
    ['an image from a one-word prompt', async (c, u, ws) => tool(await createImageGenerateTool(c, {}, () => u).execute({ prompt: 'cat' }, ctxFor(ws)))],
  ])('%s: refused before any request', async (_attempt, attempt) => {
    const server = await startFakeOpenAIMedia();
    closers.push(() => server.close());
    const c = mediaCfg(server.url);
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-budget-media-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    closers.push(() => opened.store.close());
    const usage = new UsageService({ store: new UsageStore(opened.store.db), config: () => c });
    // A turn spends alice's day.
    const turn = await usage.admit({ provider: 'local', model: 'chat', attribution: attribution(alice, 'agent:main:discord:channel:c1'), prompt: { chars: 40, bytes: 40, images: 0 }, maxOutputTokens: 100 });
    expect(turn.ok).toBe(true);
    if (turn.ok) await usage.settle(turn.ticket, { inputTokens: 800, outputTokens: 200 });
    const ws = mkdtempSync(path.join(tmpdir(), 'warden-budget-media-ws-'));
    const { refused, text } = await attempt(c, usage, ws);
    expect(refused, text).toBe(true);
    expect(text).toContain('budget of 1000 tokens per day is reached');
    expect(server.requests).toHaveLength(0);
  });
});

async function tool(result: unknown): Promise<{ refused: boolean; text: string }> {
  const r = result as ToolResult;
  return { refused: r.isError === true, text: r.content.map((c) => (c.type === 'text' ? c.text : '')).join('') };
}

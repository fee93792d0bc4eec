import { describe, expect, it } from 'vitest';
import { HOOK_BLOCK_DEFAULT_TEXT, HOOK_FAILURE_TEXT, HookBus } from './bus.js';
import type { BeforeToolCallEvent, PersistedToolMessage } from './types.js';

const call = (toolName = 'read', params: Record<string, unknown> = { path: 'a.txt' }): BeforeToolCallEvent => ({
  toolName,
  toolCallId: 'c1',
  params,
  agentId: 'main',
  sessionKey: 's',
  provider: 'web',
});

const never = () => new Promise<never>(() => {});

describe('registration', () => {
  it('returns an unsubscribe that removes the handler', async () => {
    const bus = new HookBus();
    const off = bus.on('before_tool_call', () => ({ block: true }));
    expect((await bus.runBeforeToolCall(call())).kind).toBe('block');
    off();
    expect((await bus.runBeforeToolCall(call())).kind).toBe('continue');
    expect(bus.has('before_tool_call')).toBe(false);
  });

  it.each([[['*']], [['']], [['  ']]])('refuses toolMatcher %j', (matcher) => {
    expect(() => new HookBus().on('before_tool_call', () => {}, { toolMatcher: matcher })).toThrow(/not a tool name/);
  });

  it('refuses a toolMatcher on a hook that has no tool', () => {
    expect(() => new HookBus().on('session_start', () => {}, { toolMatcher: ['read'] })).toThrow(/only applies/);
  });

  it('refuses an unknown hook name', () => {
    expect(() => new HookBus().on('before_tool' as never, (() => {}) as never)).toThrow(/unknown hook "before_tool"/);
  });

  it('normalises matcher names: Bash matches exec', async () => {
    const bus = new HookBus();
    bus.on('before_tool_call', () => ({ block: true }), { toolMatcher: ['Bash'] });
    expect((await bus.runBeforeToolCall(call('exec'))).kind).toBe('block');
    expect((await bus.runBeforeToolCall(call('read'))).kind).toBe('continue');
  });
});

describe('before_tool_call', () => {
  it('runs handlers by priority, high first, ties in registration order', async () => {
    const bus = new HookBus();
    const order: string[] = [];
    bus.on('before_tool_call', () => void order.push('low'), { priority: -5 });
    bus.on('before_tool_call', () => void order.push('mid-1'));
    bus.on('before_tool_call', () => void order.push('high'), { priority: 10 });
    bus.on('before_tool_call', () => void order.push('mid-2'));
    await bus.runBeforeToolCall(call());
    expect(order).toEqual(['high', 'mid-1', 'mid-2', 'low']);
  });

  it('shallow-merges the last params given over the original', async () => {
    const bus = new HookBus();
    bus.on('before_tool_call', () => ({ params: { limit: 5, offset: 1 } }), { priority: 2 });
    bus.on('before_tool_call', () => ({ params: { limit: 10 } }), { priority: 1 });
    const out = await bus.runBeforeToolCall(call('read', { path: 'a', limit: 1 }));
    expect(out).toEqual({ kind: 'continue', params: { path: 'a', limit: 10 } });
  });

  it('gives each handler an isolated copy of the call', async () => {
    const bus = new HookBus();
    const seen: unknown[] = [];
    bus.on('before_tool_call', (e) => {
      e.params.path = 'mutated';
      return undefined;
    });
    bus.on('before_tool_call', (e) => void seen.push(e.params.path));
    const original = call();
    await bus.runBeforeToolCall(original);
    expect(seen).toEqual(['a.txt']);
    expect(original.params.path).toBe('a.txt');
  });

  it('stops at the first block; later handlers are not called', async () => {
    const bus = new HookBus();
    let later = false;
    bus.on('before_tool_call', () => ({ block: true, blockReason: 'no reading on Fridays' }), { priority: 1, owner: 'calendar' });
    bus.on('before_tool_call', () => void (later = true));
    expect(await bus.runBeforeToolCall(call())).toEqual({ kind: 'block', reason: 'no reading on Fridays', owner: 'calendar' });
    expect(later).toBe(false);
  });

  it('uses the default block text when no reason is given', async () => {
    const bus = new HookBus();
    bus.on('before_tool_call', () => ({ block: true, blockReason: ' ' }));
    expect(await bus.runBeforeToolCall(call())).toMatchObject({ kind: 'block', reason: HOOK_BLOCK_DEFAULT_TEXT });
  });

  it('keeps the first approval request and freezes params once asked', async () => {
    const bus = new HookBus();
    bus.on('before_tool_call', () => ({ params: { limit: 1 } }), { priority: 3 });
    bus.on('before_tool_call', () => ({ requireApproval: { title: 'first', description: 'd1' } }), { priority: 2, owner: 'p1' });
    bus.on('before_tool_call', () => ({ params: { limit: 99 }, requireApproval: { title: 'second', description: 'd2' } }), { priority: 1 });
    const out = await bus.runBeforeToolCall(call());
    expect(out).toEqual({ kind: 'continue', params: { path: 'a.txt', limit: 1 }, approval: { title: 'first', description: 'd1', owner: 'p1' } });
  });

  it.each([
    ['throws', () => { throw new Error('boom'); }, 'boom'],
    ['rejects', () => Promise.reject(new Error('async boom')), 'async boom'],
    ['hangs past its timeout', never, 'before_tool_call handler timed out after 20 ms'],
  ])('fails closed when a handler %s', async (_label, handler, error) => {
    const bus = new HookBus();
    let later = false;
    bus.on('before_tool_call', handler as never, { timeoutMs: 20, priority: 1 });
    bus.on('before_tool_call', () => void (later = true));
    expect(await bus.runBeforeToolCall(call())).toMatchObject({ kind: 'failed', reason: HOOK_FAILURE_TEXT, error });
    expect(later).toBe(false);
  });

  it('only calls handlers whose matcher names the tool', async () => {
    const bus = new HookBus();
    const seen: string[] = [];
    bus.on('before_tool_call', (e) => void seen.push(`exec-only:${e.toolName}`), { toolMatcher: ['exec'] });
    bus.on('before_tool_call', (e) => void seen.push(`all:${e.toolName}`));
    await bus.runBeforeToolCall(call('read'));
    await bus.runBeforeToolCall(call('exec'));
    expect(seen).toEqual(['all:read', 'exec-only:exec', 'all:exec']);
  });
});

describe('before_prompt_build', () => {
  it('keeps the first system prompt, concatenates contexts and collects toolsAllow restrictions', async () => {
    const bus = new HookBus();
    bus.on('before_prompt_build', () => ({ systemPrompt: 'A', prependContext: 'p1', toolsAllow: ['Read', 'bash', 'web_fetch'] }), { priority: 2 });
    bus.on('before_prompt_build', () => ({ systemPrompt: 'B', appendContext: 'a2', toolsAllow: ['read', 'exec'] }), { priority: 1 });
    bus.on('before_prompt_build', () => ({ prependContext: 'p3' }));
    const out = await bus.runBeforePromptBuild({ prompt: '', messages: [], agentId: 'main', sessionKey: 's', provider: 'web', tools: [] });
    expect(out).toEqual({ systemPrompt: 'A', prependContext: ['p1', 'p3'], appendContext: ['a2'], toolsAllow: [['read', 'exec', 'web_fetch'], ['read', 'exec']] });
  });

  it.each([['a string', 'read'], ['a non-string entry', ['read', 3]], ['null', null]])('treats toolsAllow given as %s as deny-all', async (_l, value) => {
    const bus = new HookBus();
    bus.on('before_prompt_build', () => ({ toolsAllow: value as string[] }));
    const out = await bus.runBeforePromptBuild({ prompt: '', messages: [], agentId: 'main', sessionKey: 's', provider: 'web', tools: [] });
    expect(out.toolsAllow).toEqual([[]]);
  });

  it('ignores a failing handler (fails open) and keeps the others', async () => {
    const bus = new HookBus();
    bus.on('before_prompt_build', () => { throw new Error('x'); }, { priority: 1 });
    bus.on('before_prompt_build', () => ({ appendContext: 'ok' }));
    const out = await bus.runBeforePromptBuild({ prompt: '', messages: [], agentId: 'main', sessionKey: 's', provider: 'web', tools: [] });
    expect(out).toEqual({ prependContext: [], appendContext: ['ok'] });
  });
});

describe('message_sending', () => {
  it('rewrites text in order and stops at cancel', async () => {
    const bus = new HookBus();
    bus.on('message_sending', (e) => ({ content: `${e.content}!` }), { priority: 2 });
    bus.on('message_sending', (e) => ({ content: `${e.content}?` }), { priority: 1 });
    expect(await bus.runMessageSending({ to: 'c1', content: 'hi' })).toEqual({ content: 'hi!?', cancelled: false });
    bus.on('message_sending', () => ({ cancel: true }), { priority: 3 });
    expect((await bus.runMessageSending({ to: 'c1', content: 'hi' })).cancelled).toBe(true);
  });
});

describe('void hooks', () => {
  it('run in parallel and a failing or hanging handler does not stop the others', async () => {
    const bus = new HookBus();
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    bus.on('session_start', async () => {
      started.push('a');
      await gate;
    });
    bus.on('session_start', () => {
      started.push('b');
      release();
    });
    bus.on('session_start', () => { throw new Error('bad'); });
    bus.on('session_start', never, { timeoutMs: 20 });
    await bus.runVoid('session_start', { sessionId: 's', sessionKey: 's' });
    // b ran while a was still waiting: a was not awaited before b started.
    expect(started).toEqual(['a', 'b']);
  });
});

describe('tool_result_persist', () => {
  const message: PersistedToolMessage = { role: 'tool', tool: 'read', toolCallId: 'c', content: [{ type: 'text', text: 'secret' }], isError: false };

  it('lets each handler replace the message, in order, synchronously', () => {
    const bus = new HookBus();
    bus.on('tool_result_persist', (e) => ({ message: { ...e.message, content: [{ type: 'text', text: 'redacted' }] } }), { priority: 1 });
    bus.on('tool_result_persist', (e) => ({ message: { ...e.message, details: { seen: (e.message.content[0] as { text: string }).text } } }));
    const out = bus.runToolResultPersist({ toolName: 'read', toolCallId: 'c', message, isSynthetic: false });
    expect(out).toMatchObject({ content: [{ type: 'text', text: 'redacted' }], details: { seen: 'redacted' } });
  });

  it('ignores a handler that returns a Promise', () => {
    const bus = new HookBus();
    bus.on('tool_result_persist', (async () => ({ message: { ...message, content: [] } })) as never);
    expect(bus.runToolResultPersist({ toolName: 'read', toolCallId: 'c', message, isSynthetic: false })).toBe(message);
  });
});

describe('before_model_resolve', () => {
  it('keeps the first modelOverride and the first providerOverride given; a failing handler is skipped', async () => {
    const bus = new HookBus();
    bus.on('before_model_resolve', () => { throw new Error('x'); }, { priority: 3 });
    bus.on('before_model_resolve', () => ({ modelOverride: 'small' }), { priority: 2, owner: 'router' });
    bus.on('before_model_resolve', () => ({ modelOverride: 'big', providerOverride: 'local' }), { priority: 1 });
    expect(await bus.runBeforeModelResolve({ prompt: 'hi' })).toEqual({ modelOverride: 'small', providerOverride: 'local', owner: 'router' });
  });
});

describe('resolve_exec_env', () => {
  it('merges string values, a later handler winning; failures and non-objects add nothing', async () => {
    const bus = new HookBus();
    bus.on('resolve_exec_env', () => ({ A: '1', B: '1' }), { priority: 2 });
    bus.on('resolve_exec_env', () => ({ B: '2', C: 3 as unknown as string }), { priority: 1 });
    bus.on('resolve_exec_env', () => { throw new Error('x'); });
    bus.on('resolve_exec_env', (() => ['nope']) as never);
    expect(await bus.runResolveExecEnv({ toolName: 'exec', host: 'sandbox' })).toEqual({ A: '1', B: '2' });
  });
});

describe('handlers get a context', () => {
  it('before_tool_call passes the tool context as the second argument', async () => {
    const bus = new HookBus();
    let got: unknown;
    bus.on('before_tool_call', (_e, ctx) => void (got = ctx));
    await bus.runBeforeToolCall(call('exec'), { toolName: 'exec', toolCallId: 'c1', conversation: { provider: 'slack', chat: 'channel', channelName: 'ops' } });
    expect(got).toMatchObject({ toolName: 'exec', conversation: { channelName: 'ops' } });
  });

  it('an observer that edits its event does not change the caller\'s', async () => {
    const bus = new HookBus();
    bus.on('after_tool_call', (e) => void e.content.splice(0));
    const content = [{ type: 'text' as const, text: 'kept' }];
    await bus.runVoid('after_tool_call', { toolName: 'read', toolCallId: 'c', params: {}, content, isError: false, durationMs: 1, agentId: 'main', sessionKey: 's', provider: 'web' });
    expect(content).toEqual([{ type: 'text', text: 'kept' }]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { channelTurn } from '../../app/agent-testing.js';
import { openWardenStore } from '../../app/migrations.js';
import { parseConfig, type WardenConfigInput } from '../../config/index.js';
import { log } from '../../log/log.js';
import type { TurnContext } from '../../policy/context.js';
import { registerKnownSecrets } from '../../redact/scrub.js';
import type { Store } from '../../store/store.js';
import type { ToolResult } from '../../tools/types.js';
import { isWrappedUntrusted } from '../../tools/untrusted.js';
import { ENGINES, freshStoreTarget } from '../../../test/store-engines.js';
import { AgentSessions } from '../sessions.js';
import { SubagentRunStore } from '../subagent-runs.js';
import { DbTranscriptStore } from '../transcript.js';
import { SessionContextStore } from '../../turn/session-contexts.js';
import { createSessionsSearchTool, decodeCursor, encodeCursor, snippetOf } from './sessions-search.js';
import { sessionAccessFor } from './visibility.js';

describe('snippetOf', () => {
  it.each([
    ['short text with giraffe', ['giraffe'], 10, '…text with giraffe'],
    ['giraffe first and then a lot more', ['giraffe'], 5, 'giraffe firs…'],
    ['no match here at all', ['zebra'], 4, 'no m…'],
    ['Mixed Case GIRAFFE', ['giraffe'], 3, '…se GIRAFFE'],
    ['two\n\nlines   giraffe', ['giraffe'], 20, 'two lines giraffe'],
    ['key ghp_0123456789abcdefghijABCDEFGHIJ012345 giraffe', ['giraffe'], 60, 'key [secret:detected-github-token] giraffe'],
  ])('%j around %j (radius %d) → %j', (text, terms, radius, snippet) => {
    expect(snippetOf(text, terms, radius)).toBe(snippet);
  });
});

describe('cursors', () => {
  it('round-trips for the same query, and is refused by another query or when forged', () => {
    expect(decodeCursor(encodeCursor(10, ['a', 'b']), ['a', 'b'])).toEqual({ ok: true, offset: 10 });
    expect(decodeCursor(encodeCursor(10, ['a', 'b']), ['a'])).toMatchObject({ ok: false, message: expect.stringContaining('another query') });
    for (const forged of ['nope', Buffer.from('{"o":-1,"q":"x"}').toString('base64url'), Buffer.from('{"o":99999}').toString('base64url'), Buffer.from('[]').toString('base64url')]) {
      expect(decodeCursor(forged, ['a'])).toMatchObject({ ok: false, message: expect.stringContaining('cursor:') });
    }
  });
});

const CALLER = 'agent:main:discord:channel:c1';
const OPS = 'agent:main:discord:channel:c2';
const OWN_DM = 'agent:main:discord:direct:u1';
const OTHER_DM = 'agent:main:discord:direct:u2';
const OTHER_AGENT = 'agent:ops:discord:channel:c3';

describe.each(ENGINES)('sessions_search on %s', (engine) => {
  let store: Store | undefined;
  const undo: Array<() => void> = [];
  afterEach(async () => {
    for (const u of undo.splice(0)) u();
    await store?.close();
    store = undefined;
  });

  async function setup(configInput: WardenConfigInput = {}) {
    const parsed = parseConfig({ models: { default: 'anthropic/test-model' }, agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] }, ...configInput });
    if (!parsed.ok) throw parsed.error;
    const target = await freshStoreTarget(engine);
    const opened = await openWardenStore({ dataDir: target.dataDir, url: target.url });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
    const transcripts = new DbTranscriptStore(opened.store.db);
    const sessions = new AgentSessions({ config: parsed.value.config, transcripts, runs: new SubagentRunStore(opened.store.db), contexts: new SessionContextStore(opened.store.db) });
    const tool = createSessionsSearchTool(sessions, sessionAccessFor(parsed.value.config));
    const say = (key: string, text: string, role: 'user' | 'assistant' = 'user') => transcripts.append(key, [{ kind: 'message', message: { role, content: [{ type: 'text', text }] } }]);
    const run = async (args: Parameters<typeof tool.execute>[0], turn: TurnContext = channelTurn(), sessionKey = CALLER) =>
      (await tool.execute(args, { toolCallId: 't', signal: new AbortController().signal, turn, sessionKey, workspaceDir: '.', log, approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) } })) as ToolResult;
    return { transcripts, say, run };
  }
  const keysOf = (r: ToolResult) => (r.details as { results: Array<{ sessionKey: string }> }).results.map((x) => x.sessionKey).sort();
  const text = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

  it('finds what the caller may read — a channel, its own DM — and never another person’s DM or another agent', async () => {
    const { say, run } = await setup();
    await say(OPS, 'the rollback phrase is purple walrus');
    await say(OWN_DM, 'my note: purple walrus at noon');
    await say(OTHER_DM, 'bob private: purple walrus salary');
    await say(OTHER_AGENT, 'ops agent: purple walrus');
    await say(CALLER, 'unrelated chatter');
    const found = await run({ query: 'purple walrus' });
    expect(found.isError).toBeFalsy();
    expect(keysOf(found)).toEqual([OPS, OWN_DM].sort());
    expect(text(found)).not.toContain('salary');
    expect(isWrappedUntrusted(found.content[0]!.type === 'text' ? found.content[0]!.text : '')).toBe(true);
    expect(text(found)).toContain('rollback phrase is purple walrus');
    // An owner reads every DM of the agent (Warden's rule) — still not another agent's sessions.
    const owner = await run({ query: 'purple walrus' }, channelTurn({ senderIsOwner: true }));
    expect(keysOf(owner)).toEqual([OPS, OWN_DM, OTHER_DM].sort());
  });

  it.each([
    ['self', [] as string[]],
    ['tree', [] as string[]],
    ['agent', [OPS, OWN_DM]],
    ['all', [OPS, OWN_DM, OTHER_AGENT]],
  ] as const)('tools.sessions.visibility=%s bounds it exactly as sessions_list', async (visibility, expected) => {
    const { say, run } = await setup({ tools: { sessions: { visibility } } });
    for (const key of [OPS, OWN_DM, OTHER_DM, OTHER_AGENT]) await say(key, `kiwi marker in ${key}`);
    expect(keysOf(await run({ query: 'kiwi marker' }))).toEqual([...expected].sort());
  });

  it('pages with a cursor: no hit twice, no hit lost; a cursor of another query is refused', async () => {
    const { say, run } = await setup();
    for (let i = 0; i < 13; i++) await say(OPS, `deploy canary step ${i}`);
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const r = await run({ query: 'canary', limit: 5, ...(cursor ? { cursor } : {}) });
      const d = r.details as { results: Array<{ seq: number }>; nextCursor?: string };
      seen.push(...d.results.map((x) => x.seq));
      cursor = d.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toHaveLength(13);
    expect(new Set(seen).size).toBe(13);
    const first = (await run({ query: 'canary', limit: 5 })).details as { nextCursor: string };
    const wrong = await run({ query: 'deploy', cursor: first.nextCursor });
    expect(wrong).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('another query') }] });
  });

  it('scrubs a snippet of a secret registered after the entry was written', async () => {
    const { say, run } = await setup();
    await say(OPS, 'the vault phrase is zq7-hunter-xq9-omega for the staging box');
    undo.push(registerKnownSecrets('test', [{ name: 'vault', value: 'zq7-hunter-xq9-omega' }]));
    const r = await run({ query: 'vault phrase staging' });
    expect(keysOf(r)).toEqual([OPS]);
    expect(text(r)).not.toContain('zq7-hunter');
    expect(text(r)).toContain('[secret:vault]');
  });

  it('a credential in a message is neither stored nor findable', async () => {
    const { say, run } = await setup();
    await say(OPS, 'token ghp_0123456789abcdefghijABCDEFGHIJ012345 for ci');
    const r = await run({ query: 'ghp_0123456789abcdefghijABCDEFGHIJ012345' });
    expect(keysOf(r)).toEqual([]);
    expect(keysOf(await run({ query: 'token for ci' }))).toEqual([OPS]);
    expect(text(await run({ query: 'token for ci' }))).not.toContain('ghp_');
  });

  it('an empty or huge query is an error naming the key', async () => {
    const { run } = await setup();
    expect(await run({ query: '***' })).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('query: no words') }] });
    expect(await run({ query: 'a '.repeat(400) })).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('query: at most 500') }] });
  });
});

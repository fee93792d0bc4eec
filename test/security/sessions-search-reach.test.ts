// sessions_search, attacked: a non-owner in a channel writes the query. Another person's DM and
// another agent's channel hold every word any query here uses; the caller's reach (the same
// visibility as sessions_history) holds one channel with a decoy. Whatever the query says —
// FTS5 syntax (quotes, NEAR, column filters, `*`, `^`, `-`), tsquery operators, SQL, a session
// key as text, a huge or many-worded query — no hit outside the caller's reach comes back, the
// engine never sees syntax (no engine error), and refusals name the `query` key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelTurn } from '../../src/app/agent-testing.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { AgentSessions } from '../../src/agent/sessions.js';
import { SubagentRunStore } from '../../src/agent/subagent-runs.js';
import { DbTranscriptStore } from '../../src/agent/transcript.js';
import { createSessionsSearchTool } from '../../src/agent/tools/sessions-search.js';
import { sessionAccessFor } from '../../src/agent/tools/visibility.js';
import { parseConfig } from '../../src/config/index.js';
import { log } from '../../src/log/log.js';
import type { Store } from '../../src/store/store.js';
import type { ToolResult } from '../../src/tools/types.js';
import { SessionContextStore } from '../../src/turn/session-contexts.js';
import { ENGINES, freshStoreTarget } from '../store-engines.js';

const CALLER = 'agent:main:slack:channel:c1';
const VISIBLE = 'agent:main:slack:channel:c2';
const VICTIM_DM = 'agent:main:slack:direct:u2';
const OTHER_AGENT = 'agent:ops:slack:channel:c3';
const WORDS = 'salary review body session key agent main slack direct u2 near or and not match star drop table transcript entries select from where';

const ATTACKS: ReadonlyArray<[label: string, query: string]> = [
  ['FTS5 OR', 'salary OR review'],
  ['quoted phrase', '"salary review"'],
  ['unbalanced quote', '"salary'],
  ['NEAR group', 'NEAR(salary review, 5)'],
  ['column filter', 'body:salary'],
  ['column filter on the key column', 'session_key:agent'],
  ['column set filter', '{body session_key}:salary'],
  ['prefix star', 'sal*'],
  ['bare star', '*'],
  ['initial token', '^salary'],
  ['NOT', 'review NOT salary'],
  ['minus', '-salary review'],
  ['tsquery operators', 'salary & review | !x <-> y'],
  ['tsquery prefix', 'sal:*'],
  ['SQL break-out', "salary') OR 1=1 --"],
  ['SQL union', "x' UNION SELECT body FROM transcript_search --"],
  ['session key as text', VICTIM_DM],
  ['the DM key with quotes', `"${VICTIM_DM}"`],
  ['LIKE wildcards', '% _ salary%'],
  ['NUL and control characters', 'salary\u0000review\u0007'],
  ['right-to-left override', 'salary\u202ereview'],
  ['full-width letters', 'ｓａｌａｒｙ'],
];

const REFUSED: ReadonlyArray<[label: string, query: string, message: string]> = [
  ['huge query', 'salary '.repeat(200), 'query: at most 500 characters'],
  ['many words', Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), 'query: at most 12 distinct words'],
  ['one enormous word', 's'.repeat(400), 'query: a word longer than 64'],
  ['only operators', '"" * () : - ^ NEAR'.replace('NEAR', ''), 'query: no words'],
];

describe.each(ENGINES)('sessions_search reach on %s', (engine) => {
  let store: Store;
  let run: (query: string, owner?: boolean) => Promise<ToolResult>;

  beforeAll(async () => {
    const parsed = parseConfig({ models: { default: 'anthropic/test-model' }, agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] } });
    if (!parsed.ok) throw parsed.error;
    const target = await freshStoreTarget(engine);
    const opened = await openWardenStore({ dataDir: target.dataDir, url: target.url });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
    const transcripts = new DbTranscriptStore(store.db);
    const sessions = new AgentSessions({ config: parsed.value.config, transcripts, runs: new SubagentRunStore(store.db), contexts: new SessionContextStore(store.db) });
    const tool = createSessionsSearchTool(sessions, sessionAccessFor(parsed.value.config));
    const say = (key: string, text: string) => transcripts.append(key, [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text }] } }]);
    await say(VICTIM_DM, `victim-only ${WORDS} ｓａｌａｒｙ`);
    await say(OTHER_AGENT, `other-agent-only ${WORDS} ｓａｌａｒｙ`);
    await say(VISIBLE, 'decoy: the review is on friday');
    const turn = channelTurn({ provider: 'slack', channelId: 'c1', senderId: 'u1' });
    run = async (query, owner = false) =>
      (await tool.execute({ query }, { toolCallId: 't', signal: new AbortController().signal, turn: { ...turn, senderIsOwner: owner }, sessionKey: CALLER, workspaceDir: '.', log, approvals: { request: async () => ({ id: '', outcome: 'cancelled' as const }) } })) as ToolResult;
  });
  afterAll(async () => {
    await store?.close();
  });

  const text = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

  it.each(ATTACKS)('%s (%j): nothing from the victim’s DM or another agent, no engine error', async (_label, query) => {
    const r = await run(query);
    if (r.isError) {
      expect(text(r)).toMatch(/^query: /);
      return;
    }
    const keys = (r.details as { results: Array<{ sessionKey: string }> }).results.map((x) => x.sessionKey);
    for (const key of keys) expect(key).toBe(VISIBLE);
    expect(text(r)).not.toContain('victim-only');
    expect(text(r)).not.toContain('other-agent-only');
  });

  it.each(REFUSED)('%s is refused, naming the key', async (_label, query, message) => {
    const r = await run(query);
    expect(r.isError).toBe(true);
    expect(text(r)).toContain(message);
  });

  it('the victim’s words are indexed (the attacks had something to find)', async () => {
    // An owner (who may read every DM of the agent) finds the victim's entry with a query of the
    // table: the attacks above had something to find.
    const owner = await run('salary OR review', true);
    expect((owner.details as { results: Array<{ sessionKey: string }> }).results.map((x) => x.sessionKey)).toEqual([VICTIM_DM]);
  });
});

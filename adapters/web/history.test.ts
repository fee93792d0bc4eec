import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionContextStore } from '../../src/turn/session-contexts.js';
import { DbTranscriptStore } from '../../src/agent/transcript.js';
import type { ApprovalRequest } from '../../src/approvals/types.js';
import { sessionKeyFor } from '../../src/policy/session-key.js';
import { skillTurnText } from '../../src/gateway/skill-commands.js';
import { skillCommandSpecs } from '../../src/skills/commands.js';
import { testSkill } from '../../src/skills/testing.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { Transcripts, type Store } from '../../src/store/index.js';
import { storeWebHistory } from './history.js';

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

const keyOf = (sessionId?: string) => sessionKeyFor('main', { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', sessionId });
const web = { provider: 'web', chat: 'dm' as const, channelId: 'web' };

function card(id: string, createdAt: number, over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    id,
    kind: 'exec',
    tool: 'exec',
    title: 'Run a command',
    preview: 'ls',
    fullText: 'ls',
    agentId: 'main',
    sessionKey: keyOf(),
    provider: 'web',
    facts: [],
    allowedDecisions: ['allow-once', 'deny'],
    createdAt,
    expiresAt: createdAt + 60_000,
    status: 'allow-once',
    decidedBy: 'web:local',
    ...over,
  };
}

async function setup(cards: ApprovalRequest[] = []) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'warden-web-history-'));
  const open = async () => {
    const opened = await openWardenStore({ dataDir });
    if (!opened.ok) throw new Error(opened.error.message);
    stores.push(opened.store);
    return opened.store;
  };
  const store = await open();
  const approvals = {
    list: async ({ sessionKey }: { sessionKey?: string }) => cards.filter((c) => c.status === 'pending' && c.sessionKey === sessionKey),
    history: async ({ sessionKey }: { sessionKey?: string }) => cards.filter((c) => c.status !== 'pending' && c.sessionKey === sessionKey),
  };
  const history = storeWebHistory(store.db, { sessionKeyOf: keyOf, approvals });
  return { store, history, reopen: async () => storeWebHistory((await open()).db, { sessionKeyOf: keyOf, approvals }) };
}

const text = (t: string) => [{ type: 'text' as const, text: t }];

describe('the web chat\'s current session', () => {
  it('is the newest session the store recorded for the web user; others\' sessions do not count', async () => {
    const { store, history } = await setup();
    const contexts = new SessionContextStore(store.db);
    expect(await history.currentSessionId()).toBeUndefined();
    await contexts.record(keyOf(), 'main', web, 'local', 1_000);
    expect(await history.currentSessionId()).toBeUndefined();
    await contexts.record(keyOf('a1'), 'main', web, 'local', 2_000);
    expect(await history.currentSessionId()).toBe('a1');
    // Another web user's, another agent's, and a key that merely starts alike.
    await contexts.record(sessionKeyFor('main', { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'other', sessionId: 'zz' }), 'main', web, 'other', 3_000);
    await contexts.record(sessionKeyFor('ops', { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', sessionId: 'yy' }), 'ops', web, 'local', 3_000);
    await contexts.record(`${keyOf()}x:session:ww`, 'main', web, 'local', 3_000);
    expect(await history.currentSessionId()).toBe('a1');
    // A later message in an older session does not move the current one (created, not updated).
    await contexts.record(keyOf(), 'main', { ...web, channelName: 'renamed' }, 'local', 4_000);
    expect(await history.currentSessionId()).toBe('a1');
    await contexts.record(keyOf('b2'), 'main', web, 'local', 5_000);
    expect(await history.currentSessionId()).toBe('b2');
  });
});

describe('the web chat\'s history from the store', () => {
  it('is the conversation as it read, with cards in place and relayed input left out', async () => {
    const spec = skillCommandSpecs([testSkill('release-notes')])[0]!;
    const { store, history } = await setup([card('c1', 2_500), card('other', 2_600, { sessionKey: keyOf('s9') })]);
    const transcripts = new Transcripts(store.db);
    await transcripts.ensureSession(keyOf(), 'main', 'web');
    const row = (role: 'user' | 'assistant' | 'tool' | 'system', content: unknown, at: number, tool?: string) =>
      transcripts.append({ sessionKey: keyOf(), role, content, createdAt: at, ...(tool ? { tool, toolCallId: 'x' } : {}) });
    await row('user', text('list the files'), 1_000);
    await row('assistant', [{ type: 'text', text: 'Let me look.' }, { type: 'toolCall', id: 'x', name: 'exec', arguments: { command: 'ls' } }], 2_000);
    await row('tool', text('a.txt'), 3_000, 'exec');
    await row('assistant', text('There is a.txt.'), 3_100);
    await row('user', text('Results from your subagents:\nsomething'), 4_000);
    await row('user', text('<untrusted-abc source="session:x">hi</untrusted-abc>'), 4_100);
    await row('assistant', text('Relayed answer.'), 4_200);
    await row('system', 'Approval c9 for exec was interrupted: the call waiting for it stopped.', 5_000);
    await row('system', { type: 'summary', text: 'earlier', coversThroughSeq: 2 }, 5_100);
    await row('user', text(skillTurnText(spec, '# Steps', '/release-notes v1.2')), 6_000);
    await row('assistant', text('Notes for v1.2.'), 6_100);

    const items = await history.load(undefined, 50);
    expect(items.map((i) => (i.kind === 'card' ? `card ${i.request.id}` : `${i.message.role}: ${i.message.text}`))).toEqual([
      'user: list the files',
      'card c1',
      'bot: There is a.txt.',
      'bot: Relayed answer.',
      'notice: Approval c9 for exec was interrupted: the call waiting for it stopped.',
      'user: /release-notes v1.2',
      'bot: Notes for v1.2.',
    ]);
    expect((await history.load(undefined, 2)).map((i) => i.kind === 'message' && i.message.text)).toEqual(['/release-notes v1.2', 'Notes for v1.2.']);
    expect((await history.load('s9', 50)).map((i) => i.kind)).toEqual(['card']);
  });

  it('reads what the agent\'s transcript store wrote', async () => {
    const { store, history } = await setup();
    const agentTranscripts = new DbTranscriptStore(store.db);
    await agentTranscripts.append(keyOf('n1'), [
      { kind: 'message', message: { role: 'user', content: text('hello') } },
      { kind: 'message', message: { role: 'assistant', content: text('Hi there.') } } as never,
    ]);
    expect((await history.load('n1', 10)).map((i) => i.kind === 'message' && `${i.message.role}: ${i.message.text}`)).toEqual(['user: hello', 'bot: Hi there.']);
  });
});

describe('page message ids', () => {
  it('are remembered across a restart: a message sent again runs once', async () => {
    const { history, reopen } = await setup();
    expect(await history.firstDelivery('m-0001')).toBe(true);
    expect(await history.firstDelivery('m-0001')).toBe(false);
    expect(await (await reopen()).firstDelivery('m-0001')).toBe(false);
    expect(await (await reopen()).firstDelivery('m-0002')).toBe(true);
  });
});

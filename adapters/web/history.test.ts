import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionContextStore } from '../../src/agent/session-contexts.js';
import { DbTranscriptStore } from '../../src/agent/transcript.js';
import type { ApprovalRequest } from '../../src/approvals/types.js';
import { sessionKeyFor } from '../../src/gateway/session-key.js';
import { skillTurnText } from '../../src/gateway/skill-commands.js';
import { skillCommandSpecs } from '../../src/skills/commands.js';
import { testSkill } from '../../src/skills/testing.js';
import { openStore, Transcripts, type Store } from '../../src/store/index.js';
import { storeWebHistory } from './history.js';

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
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

function setup(cards: ApprovalRequest[] = []) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'warden-web-history-'));
  const open = () => {
    const opened = openStore({ dataDir });
    if (!opened.ok) throw new Error(opened.error.message);
    stores.push(opened.store);
    return opened.store;
  };
  const store = open();
  const approvals = {
    list: ({ sessionKey }: { sessionKey?: string }) => cards.filter((c) => c.status === 'pending' && c.sessionKey === sessionKey),
    history: ({ sessionKey }: { sessionKey?: string }) => cards.filter((c) => c.status !== 'pending' && c.sessionKey === sessionKey),
  };
  const history = storeWebHistory(store.db, { sessionKeyOf: keyOf, approvals });
  return { store, history, reopen: () => storeWebHistory(open().db, { sessionKeyOf: keyOf, approvals }) };
}

const text = (t: string) => [{ type: 'text' as const, text: t }];

describe('the web chat\'s current session', () => {
  it('is the newest session the store recorded for the web user; others\' sessions do not count', () => {
    const { store, history } = setup();
    const contexts = new SessionContextStore(store.db);
    expect(history.currentSessionId()).toBeUndefined();
    contexts.record(keyOf(), 'main', web, 'local', 1_000);
    expect(history.currentSessionId()).toBeUndefined();
    contexts.record(keyOf('a1'), 'main', web, 'local', 2_000);
    expect(history.currentSessionId()).toBe('a1');
    // Another web user's, another agent's, and a key that merely starts alike.
    contexts.record(sessionKeyFor('main', { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'other', sessionId: 'zz' }), 'main', web, 'other', 3_000);
    contexts.record(sessionKeyFor('ops', { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', sessionId: 'yy' }), 'ops', web, 'local', 3_000);
    contexts.record(`${keyOf()}x:session:ww`, 'main', web, 'local', 3_000);
    expect(history.currentSessionId()).toBe('a1');
    // A later message in an older session does not move the current one (created, not updated).
    contexts.record(keyOf(), 'main', { ...web, channelName: 'renamed' }, 'local', 4_000);
    expect(history.currentSessionId()).toBe('a1');
    contexts.record(keyOf('b2'), 'main', web, 'local', 5_000);
    expect(history.currentSessionId()).toBe('b2');
  });
});

describe('the web chat\'s history from the store', () => {
  it('is the conversation as it read, with cards in place and relayed input left out', () => {
    const spec = skillCommandSpecs([testSkill('release-notes')])[0]!;
    const { store, history } = setup([card('c1', 2_500), card('other', 2_600, { sessionKey: keyOf('s9') })]);
    const transcripts = new Transcripts(store.db);
    transcripts.ensureSession(keyOf(), 'main', 'web');
    const row = (role: 'user' | 'assistant' | 'tool' | 'system', content: unknown, at: number, tool?: string) =>
      transcripts.append({ sessionKey: keyOf(), role, content, createdAt: at, ...(tool ? { tool, toolCallId: 'x' } : {}) });
    row('user', text('list the files'), 1_000);
    row('assistant', [{ type: 'text', text: 'Let me look.' }, { type: 'toolCall', id: 'x', name: 'exec', arguments: { command: 'ls' } }], 2_000);
    row('tool', text('a.txt'), 3_000, 'exec');
    row('assistant', text('There is a.txt.'), 3_100);
    row('user', text('Results from your subagents:\nsomething'), 4_000);
    row('user', text('<untrusted-abc source="session:x">hi</untrusted-abc>'), 4_100);
    row('assistant', text('Relayed answer.'), 4_200);
    row('system', 'Approval c9 for exec was interrupted: the call waiting for it stopped.', 5_000);
    row('system', { type: 'summary', text: 'earlier', coversThroughSeq: 2 }, 5_100);
    row('user', text(skillTurnText(spec, '# Steps', '/release-notes v1.2')), 6_000);
    row('assistant', text('Notes for v1.2.'), 6_100);

    const items = history.load(undefined, 50);
    expect(items.map((i) => (i.kind === 'card' ? `card ${i.request.id}` : `${i.message.role}: ${i.message.text}`))).toEqual([
      'user: list the files',
      'card c1',
      'bot: There is a.txt.',
      'bot: Relayed answer.',
      'notice: Approval c9 for exec was interrupted: the call waiting for it stopped.',
      'user: /release-notes v1.2',
      'bot: Notes for v1.2.',
    ]);
    expect(history.load(undefined, 2).map((i) => i.kind === 'message' && i.message.text)).toEqual(['/release-notes v1.2', 'Notes for v1.2.']);
    expect(history.load('s9', 50).map((i) => i.kind)).toEqual(['card']);
  });

  it('reads what the agent\'s transcript store wrote', () => {
    const { store, history } = setup();
    const agentTranscripts = new DbTranscriptStore(store.db);
    agentTranscripts.append(keyOf('n1'), [
      { kind: 'message', message: { role: 'user', content: text('hello') } },
      { kind: 'message', message: { role: 'assistant', content: text('Hi there.') } } as never,
    ]);
    expect(history.load('n1', 10).map((i) => i.kind === 'message' && `${i.message.role}: ${i.message.text}`)).toEqual(['user: hello', 'bot: Hi there.']);
  });
});

describe('page message ids', () => {
  it('are remembered across a restart: a message sent again runs once', () => {
    const { history, reopen } = setup();
    expect(history.firstDelivery('m-0001')).toBe(true);
    expect(history.firstDelivery('m-0001')).toBe(false);
    expect(reopen().firstDelivery('m-0001')).toBe(false);
    expect(reopen().firstDelivery('m-0002')).toBe(true);
  });
});

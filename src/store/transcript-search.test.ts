import { afterEach, describe, expect, it } from 'vitest';
import { WARDEN_MIGRATIONS, openWardenStore } from '../app/migrations.js';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { applyMigrations, migrationsFor } from './migrations.js';
import type { Store } from './store.js';
import { Transcripts } from './transcript.js';
import { fts5Match, MAX_QUERY_CHARS, MAX_QUERY_TERMS, queryTerms, searchableText, searchIndex, transcriptSearchMigrations } from './transcript-search.js';

describe('queryTerms: a query is words, never the engine’s syntax', () => {
  it.each([
    ['blue giraffe', ['blue', 'giraffe']],
    ['Blue  GIRAFFE blue', ['blue', 'giraffe']],
    ['"blue" OR "giraffe"', ['blue', 'or', 'giraffe']],
    ['NEAR(blue giraffe, 2)', ['near', 'blue', 'giraffe', '2']],
    ['body:giraffe', ['body', 'giraffe']],
    ['session_key:agent', ['session', 'key', 'agent']],
    ['{body session_key}: x', ['body', 'session', 'key', 'x']],
    ['gira*', ['gira']],
    ['-blue +giraffe ^start', ['blue', 'giraffe', 'start']],
    ["'; DROP TABLE transcript_entries; --", ['drop', 'table', 'transcript', 'entries']],
    ['blue & !giraffe | x <-> y', ['blue', 'giraffe', 'x', 'y']],
    ['café Zürich 東京', ['café', 'zürich', '東京']],
  ])('%j → %j', (query, terms) => {
    expect(queryTerms(query)).toEqual({ ok: true, terms });
  });

  it.each([
    ['', 'no words'],
    ['"*" () : - ^', 'no words'],
    ['x'.repeat(MAX_QUERY_CHARS + 1), `at most ${MAX_QUERY_CHARS} characters`],
    [Array.from({ length: MAX_QUERY_TERMS + 1 }, (_, i) => `w${i}`).join(' '), `at most ${MAX_QUERY_TERMS} distinct words`],
    ['a'.repeat(65), 'a word longer than 64'],
  ])('refuses %j (%s)', (query, why) => {
    const r = queryTerms(query);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain(why);
    if (!r.ok) expect(r.message.startsWith('query: ')).toBe(true);
  });

  it('hands FTS5 each word as a quoted phrase', () => {
    expect(fts5Match(['near', 'blue'])).toBe('"near" "blue"');
  });
});

describe('searchableText', () => {
  it.each([
    ['user', [{ type: 'text', text: 'hello' }, { type: 'image', data: 'AAAA' }, { type: 'text', text: 'world' }], 'hello\nworld'],
    ['assistant', [{ type: 'toolCall', name: 'exec', args: { command: 'ls' } }], undefined],
    ['assistant', 'plain', 'plain'],
    ['tool', [{ type: 'text', text: 'file contents' }], undefined],
    ['system', { type: 'summary', text: 'we agreed on friday', coversThroughSeq: 3 }, 'we agreed on friday'],
    ['system', { type: 'notice', text: 'approval denied' }, undefined],
    ['user', [{ type: 'text', text: '   ' }], undefined],
  ])('%s %j → %j', (role, content, text) => {
    expect(searchableText(role, content)).toBe(text);
  });
});

describe.each(ENGINES)('the transcript index on %s', (engine) => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  const open = async (migrations = WARDEN_MIGRATIONS) => {
    const target = await freshStoreTarget(engine);
    const opened = await openWardenStore({ dataDir: target.dataDir, url: target.url, migrations });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
    return opened.store;
  };
  const say = (t: Transcripts, sessionKey: string, text: string, role: 'user' | 'assistant' = 'user') => t.append({ sessionKey, role, content: [{ type: 'text', text }] });

  it('indexes entries as they are written, and searches only the sessions named', async () => {
    const s = await open();
    const t = new Transcripts(s.db);
    const a = await say(t, 'agent:main:discord:channel:c1', 'the blue giraffe moved to staging');
    await say(t, 'agent:main:discord:channel:c2', 'the blue giraffe is private here');
    await t.append({ sessionKey: 'agent:main:discord:channel:c1', role: 'tool', tool: 'read', content: [{ type: 'text', text: 'blue giraffe in a file' }] });
    const hits = await searchIndex(s.db, { sessionKeys: ['agent:main:discord:channel:c1'], terms: ['giraffe', 'blue'], limit: 10, offset: 0 });
    expect(hits).toEqual([{ entryId: a, sessionKey: 'agent:main:discord:channel:c1', role: 'user', body: 'the blue giraffe moved to staging', createdAt: expect.any(Number) }]);
    expect(await searchIndex(s.db, { sessionKeys: [], terms: ['giraffe'], limit: 10, offset: 0 })).toEqual([]);
  });

  it('ranks the entry with more of the words first, then pages', async () => {
    const s = await open();
    const t = new Transcripts(s.db);
    const key = 'agent:main:slack:channel:c1';
    for (let i = 0; i < 5; i++) await say(t, key, `canary number ${i} with lots of other words around it to dilute the match`);
    const best = await say(t, key, 'canary canary canary');
    const first = await searchIndex(s.db, { sessionKeys: [key], terms: ['canary'], limit: 2, offset: 0 });
    expect(first[0]!.entryId).toBe(best);
    const rest = await searchIndex(s.db, { sessionKeys: [key], terms: ['canary'], limit: 10, offset: 2 });
    expect(rest).toHaveLength(4);
    expect(new Set([...first, ...rest].map((h) => h.entryId)).size).toBe(6);
  });

  it('backfills entries written before the index existed', async () => {
    const without = WARDEN_MIGRATIONS.filter((f) => f.feature !== 'transcript-search');
    const s = await open(without);
    // Rows as an older build wrote them: no index table yet.
    await s.db.run(`INSERT INTO transcript_entries (session_key, role, content, is_error, created_at) VALUES (?, 'user', ?, 0, ?)`, [
      'agent:main:discord:channel:c1',
      JSON.stringify([{ type: 'text', text: 'an old purple walrus' }]),
      1,
    ]);
    await s.db.run(`INSERT INTO transcript_entries (session_key, role, content, is_error, created_at) VALUES (?, 'system', ?, 0, ?)`, [
      'agent:main:discord:channel:c1',
      JSON.stringify({ type: 'summary', text: 'the walrus summary', coversThroughSeq: 1 }),
      2,
    ]);
    const applied = await applyMigrations(s.db, migrationsFor(engine, [...without, transcriptSearchMigrations]));
    expect(applied).toEqual(engine === 'sqlite' ? ['transcript-search-001-fts5'] : ['transcript-search-pg-001-tsvector', 'transcript-search-pg-002-no-entry-key']);
    const hits = await searchIndex(s.db, { sessionKeys: ['agent:main:discord:channel:c1'], terms: ['walrus'], limit: 10, offset: 0 });
    expect(hits.map((h) => h.body).sort()).toEqual(['an old purple walrus', 'the walrus summary']);
  });

  it.each([
    ['"blue" OR "x"'],
    ['body:blue'],
    ['session_key:agent'],
    ['NEAR(blue giraffe)'],
    ['blu*'],
    ["blue'); DELETE FROM transcript_entries; --"],
    ['blue & !giraffe'],
  ])('a hostile query %j is only words to the engine (no syntax error, nothing outside the named sessions)', async (query) => {
    const s = await open();
    const t = new Transcripts(s.db);
    await say(t, 'agent:main:discord:direct:u2', 'blue giraffe or x body session key agent near delete from transcript entries');
    await say(t, 'agent:main:discord:channel:c1', 'blue sky');
    const parsed = queryTerms(query);
    if (!parsed.ok) throw new Error(parsed.message);
    const hits = await searchIndex(s.db, { sessionKeys: ['agent:main:discord:channel:c1'], terms: parsed.terms, limit: 10, offset: 0 });
    for (const h of hits) expect(h.sessionKey).toBe('agent:main:discord:channel:c1');
    expect(Number(await s.db.value('SELECT COUNT(*) FROM transcript_entries'))).toBe(2);
  });
});

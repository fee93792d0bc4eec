// Attacker's table for the ask_user questions and the secrets tool's private prompts now that
// they live in the store: every click, form and submission below lands on ANOTHER instance
// sharing the store than the one that asked (the same holds for the next start), on both
// engines. A different user, an approver entering someone's secret, a replay after the answer,
// an expired or stopped question, a forged id, an id of another conversation or platform, a
// question/option number the prompt does not have — each is refused, changes nothing and leaves
// the question answerable by the person asked. Two submissions on two instances save one value.
// A secret's value is written nowhere in the store in clear: not in the prompt's row, not in the
// audit log, not in any table.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { FollowUpTurn } from '../../src/gateway/deferred-calls.js';
import type { ChatAdapter, ReplyTarget, UserQuestionPrompt } from '../../src/gateway/types.js';
import type { TurnContext } from '../../src/policy/context.js';
import { AuditLog } from '../../src/store/audit.js';
import type { Store } from '../../src/store/store.js';
import { openSecrets } from '../../src/app/secret-grants.js';
import { SecretPrompts, SECRET_PROMPT_TTL_MS } from '../../src/app/secret-prompts.js';
import { UserQuestions } from '../../src/app/user-questions.js';
import { ENGINES, useTestStores } from '../store-engines.js';

/** Where the questions and prompts below were asked: the clicks come from there unless a case says otherwise. */
const HERE = { provider: 'discord', channelId: 'C1', dm: false };

const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging' }, { label: 'Production' }] };
const spec = { questions: [QUESTION], timeoutSec: 60 };
const turnIn = (channelId: string, senderId: string) => ({ agentId: 'main', provider: 'discord', channelId, chat: 'channel', senderId }) as unknown as TurnContext;
const approvers = new Set(['U9']);
const KEY = randomBytes(32).toString('base64');

type Click = { provider: string; id: (own: string, other: string) => string; question: number; option: number; userId: string; form?: string };
type Setup = 'open' | 'answered' | 'expired' | 'stopped';

/** [case, question state first, the click, refusal] — the click lands on instance b. */
const QUESTION_CASES: Array<[string, Setup, Click, RegExp]> = [
  ['a different user clicks an option', 'open', { provider: 'discord', id: (o) => o, question: 0, option: 0, userId: 'U2' }, /Only the person the assistant asked/],
  ['a different user opens the free-text form', 'open', { provider: 'discord', id: (o) => o, question: 0, option: -1, userId: 'U2' }, /Only the person the assistant asked/],
  ['a different user submits a forged form (an over-long value learns nothing)', 'open', { provider: 'discord', id: (o) => o, question: 0, option: -1, userId: 'U2', form: 'x'.repeat(5000) }, /Only the person the assistant asked/],
  ['a forged question id', 'open', { provider: 'discord', id: () => randomUUID(), question: 0, option: 0, userId: 'U1' }, /no longer open/],
  ['a question id made to look like SQL', 'open', { provider: 'discord', id: () => "x' OR '1'='1", question: 0, option: 0, userId: 'U1' }, /no longer open/],
  ['a question id of another conversation, by a person not asked there', 'open', { provider: 'discord', id: (_o, other) => other, question: 0, option: 0, userId: 'U1' }, /Only the person the assistant asked/],
  ['the person asked, clicking through another platform', 'open', { provider: 'slack', id: (o) => o, question: 0, option: 0, userId: 'U1' }, /no longer open/],
  ['a question number the prompt does not have', 'open', { provider: 'discord', id: (o) => o, question: 3, option: 0, userId: 'U1' }, /no longer open/],
  ['a negative question number', 'open', { provider: 'discord', id: (o) => o, question: -1, option: 0, userId: 'U1' }, /no longer open/],
  ['a fractional question number', 'open', { provider: 'discord', id: (o) => o, question: 0.5, option: 0, userId: 'U1' }, /no longer open/],
  ['an option number the question does not have', 'open', { provider: 'discord', id: (o) => o, question: 0, option: 7, userId: 'U1' }, /no longer open/],
  ['a replayed click after the answer', 'answered', { provider: 'discord', id: (o) => o, question: 0, option: 0, userId: 'U1' }, /no longer open/],
  ['a replayed form after the answer', 'answered', { provider: 'discord', id: (o) => o, question: 0, option: -1, userId: 'U1', form: 'changed my mind' }, /no longer open/],
  ['a click after the deadline, before any sweep ended it', 'expired', { provider: 'discord', id: (o) => o, question: 0, option: 1, userId: 'U1' }, /no longer open/],
  ['an approver clicking after the deadline', 'expired', { provider: 'discord', id: (o) => o, question: 0, option: 1, userId: 'U9' }, /no longer open/],
  ['a click after the asking turn was stopped', 'stopped', { provider: 'discord', id: (o) => o, question: 0, option: 1, userId: 'U1' }, /no longer open/],
];

describe.each(ENGINES)('durable questions and secret prompts under attack (%s)', (engine) => {
  // Registered first, so its closing runs after the processes below have stopped.
  const stores = useTestStores();
  const procs: UserQuestions[] = [];
  afterEach(() => {
    for (const p of procs.splice(0)) p.stop();
  });

  async function target() {
    return (await stores.fresh(engine)).open;
  }

  async function questionsOn(store: Store, name: string, now: () => number = Date.now, waitMs = 0) {
    const prompts: UserQuestionPrompt[] = [];
    const adapter = { provider: 'discord', askUser: async (_t: unknown, p: UserQuestionPrompt) => void prompts.push(p) } as unknown as ChatAdapter;
    const followUps: FollowUpTurn[] = [];
    const q = new UserQuestions({ db: store.db, instance: name, adapter: () => adapter, waitMs: () => waitMs, alsoMayAnswer: (_p, u) => approvers.has(u), now });
    q.bindFollowUp((t) => (followUps.push(t), true));
    procs.push(q);
    return { q, prompts, followUps };
  }

  const act = (h: ReturnType<UserQuestions['handlersFor']>, id: string, c: Click) =>
    c.form !== undefined ? h.submit({ id, question: c.question, userId: c.userId, value: c.form, origin: HERE }) : c.option === -1 ? h.open({ id, question: c.question, userId: c.userId, origin: HERE }) : h.choose({ id, question: c.question, option: c.option, userId: c.userId, origin: HERE });

  it.each(QUESTION_CASES)('ask_user: refuses %s', async (_name, setup, click, refusal) => {
    const connect = await target();
    let clock = Date.now();
    const now = () => clock;
    const a = await questionsOn(await connect(), 'a', now);
    const b = await questionsOn(await connect(), 'b', now);
    await a.q.ask({ spec, turn: turnIn('C1', 'U1'), sessionKey: 'conv-1', toolCallId: 'c1' });
    // Another conversation's question, asked of U5.
    await a.q.ask({ spec, turn: turnIn('C2', 'U5'), sessionKey: 'conv-2', toolCallId: 'c2' });
    const [own, other] = [a.prompts[0]!.id, a.prompts[1]!.id];
    const hb = b.q.handlersFor(click.provider);
    const h1 = b.q.handlersFor('discord');
    const controller = new AbortController();
    if (setup === 'answered') expect(await h1.choose({ id: own, question: 0, option: 1, userId: 'U1', origin: HERE })).toMatchObject({ ok: true });
    if (setup === 'expired') clock += 61_000;
    if (setup === 'stopped') {
      const waiting = await questionsOn(await connect(), 'w', now, 60_000);
      const stoppedQ = waiting.q.ask({ spec, turn: turnIn('C1', 'U1'), sessionKey: 'conv-1', toolCallId: 'c3', signal: controller.signal });
      await expect.poll(() => waiting.prompts.length).toBe(1);
      controller.abort();
      await stoppedQ;
      const res = await act(hb, waiting.prompts[0]!.id, click);
      expect(res).toMatchObject({ ok: false, text: expect.stringMatching(refusal) });
      return;
    }
    const before = await b.q.store.get(own);
    const res = await act(hb, click.id(own, other), click);
    expect(res).toMatchObject({ ok: false, text: expect.stringMatching(refusal) });
    // Nothing changed: the row is as it was.
    expect(await b.q.store.get(own)).toEqual(before);
    if (setup === 'open') {
      // The person asked still answers it, once; one follow-up.
      expect(await h1.choose({ id: own, question: 0, option: 0, userId: 'U1', origin: HERE })).toMatchObject({ ok: true });
      expect(a.followUps.length + b.followUps.length).toBe(1);
      expect(b.followUps[0]!.text).toContain('["Staging"]');
    } else if (setup === 'answered') {
      // The one answer given, handed over once.
      expect(a.followUps.length + b.followUps.length).toBe(1);
      expect(b.followUps[0]!.text).toContain('["Production"]');
    } else {
      // Expired: a sweep on either instance hands over no_answer, once (both conversations' questions expired).
      await a.q.sweep();
      await b.q.sweep();
      const mine = [...a.followUps, ...b.followUps].filter((f) => f.sessionKey === 'conv-1');
      expect(mine).toHaveLength(1);
      expect(mine[0]!.text).toContain('"status":"no_answer"');
    }
  });

  it('ask_user: an approver may answer for the person asked, on another instance (the positive control)', async () => {
    const connect = await target();
    const a = await questionsOn(await connect(), 'a');
    const b = await questionsOn(await connect(), 'b');
    await a.q.ask({ spec, turn: turnIn('C1', 'U1'), sessionKey: 'conv-1', toolCallId: 'c1' });
    expect(await b.q.handlersFor('discord').choose({ id: a.prompts[0]!.id, question: 0, option: 1, userId: 'U9', origin: HERE })).toMatchObject({ ok: true });
    expect(b.followUps).toHaveLength(1);
  });

  // ---- secret prompts ----

  const SECRET = `s3cr3t-${randomBytes(12).toString('hex')}`;
  const target1: ReplyTarget = { provider: 'discord', channelId: 'C1' };

  async function promptsOn(store: Store, dataDir: string, now: () => number = Date.now) {
    const audit = new AuditLog(store.db);
    const opened = await openSecrets(store.db, dataDir, { WARDEN_SECRETS_KEY: KEY }, audit, `test-${randomUUID()}`);
    if (!opened.ok) throw new Error(opened.error);
    const asked: string[] = [];
    const told: string[] = [];
    const adapter = { provider: 'discord', askSecret: async (_t: unknown, p: { id: string }) => void asked.push(p.id) } as unknown as ChatAdapter;
    const prompts = new SecretPrompts({ db: store.db, secrets: opened.secrets, audit, adapter: () => adapter, notify: async (_t, text) => void told.push(text), now });
    return { prompts, secrets: opened.secrets, asked, told, h: (p = 'discord') => prompts.handlersFor(p) };
  }

  async function twoInstances(now?: () => number) {
    const { target: t, open: connect } = await stores.fresh(engine);
    const a = await promptsOn(await connect(), t.dataDir, now);
    const second = await connect();
    const b = await promptsOn(second, t.dataDir, now);
    const asked = await a.prompts.ask({ agentId: 'main', sessionKey: 'conv-1', conversationOnly: false, name: 'DEPLOY_TOKEN', reason: 'deploy', target: target1, guildId: undefined, requesterId: 'U1' });
    if (!asked.ok) throw new Error(asked.error);
    return { a, b, id: asked.id, store: second };
  }

  const SECRET_CASES: Array<[string, (id: string) => { provider: string; id: string; userId: string }, RegExp]> = [
    ['a different user submits', (id) => ({ provider: 'discord', id, userId: 'U2' }), /Only the person the assistant asked/],
    ['an approver submits someone else’s secret', (id) => ({ provider: 'discord', id, userId: 'U9' }), /Only the person the assistant asked/],
    ['a forged request id', () => ({ provider: 'discord', id: randomUUID(), userId: 'U1' }), /no longer open/],
    ['the person asked, through another platform', (id) => ({ provider: 'slack', id, userId: 'U1' }), /no longer open/],
  ];
  it.each(SECRET_CASES)('secret prompt: refuses %s on another instance; nothing is saved; the person asked still can', async (_name, make, refusal) => {
    const { a, b, id } = await twoInstances();
    const c = make(id);
    expect(await b.h(c.provider).open({ id: c.id, userId: c.userId, origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(refusal) });
    expect(await b.h(c.provider).submit({ id: c.id, userId: c.userId, value: 'attacker-value', origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(refusal) });
    expect(await a.secrets.store.get('main', 'DEPLOY_TOKEN')).toBeUndefined();
    expect(await b.h().submit({ id, userId: 'U1', value: SECRET, origin: HERE })).toMatchObject({ ok: true });
    expect(await a.secrets.store.get('main', 'DEPLOY_TOKEN')).toBe(SECRET);
  });

  it('secret prompt: a value entered on another instance is saved there, encrypted, readable by the asking one; a replay is refused', async () => {
    const { a, b, id } = await twoInstances();
    expect(await b.h().open({ id, userId: 'U1', origin: HERE })).toMatchObject({ ok: true, name: 'DEPLOY_TOKEN' });
    expect(await b.h().submit({ id, userId: 'U1', value: SECRET, origin: HERE })).toMatchObject({ ok: true });
    expect(b.told).toEqual([expect.stringContaining('DEPLOY_TOKEN is set')]);
    expect(await a.secrets.store.get('main', 'DEPLOY_TOKEN')).toBe(SECRET);
    // Replayed on either instance: refused, the value kept.
    for (const h of [a.h(), b.h()]) expect(await h.submit({ id, userId: 'U1', value: 'replayed', origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(/no longer open/) });
    expect(await a.secrets.store.get('main', 'DEPLOY_TOKEN')).toBe(SECRET);
  });

  it('secret prompt: two submissions at once on two instances save one value', async () => {
    const { a, b, id } = await twoInstances();
    const [ra, rb] = await Promise.all([a.h().submit({ id, userId: 'U1', value: 'first-value', origin: HERE }), b.h().submit({ id, userId: 'U1', value: 'second-value', origin: HERE })]);
    expect([ra.ok, rb.ok].filter(Boolean)).toHaveLength(1);
    expect(await a.secrets.store.get('main', 'DEPLOY_TOKEN')).toBe(ra.ok ? 'first-value' : 'second-value');
    expect(a.told.length + b.told.length).toBe(1);
  });

  it('secret prompt: an expired request is refused on every instance; nothing is saved', async () => {
    let clock = Date.now();
    const { a, b, id } = await twoInstances(() => clock);
    clock += SECRET_PROMPT_TTL_MS + 1;
    for (const h of [a.h(), b.h()]) {
      expect(await h.open({ id, userId: 'U1', origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(/no longer open/) });
      expect(await h.submit({ id, userId: 'U1', value: SECRET, origin: HERE })).toMatchObject({ ok: false, text: expect.stringMatching(/no longer open/) });
    }
    expect(await a.secrets.store.get('main', 'DEPLOY_TOKEN')).toBeUndefined();
  });

  it('secret prompt: the value is in no table of the store in clear (the prompt row, the audit log, anywhere)', async () => {
    const { b, id, store } = await twoInstances();
    expect(await b.h().submit({ id, userId: 'U1', value: SECRET, origin: HERE })).toMatchObject({ ok: true });
    const tables =
      engine === 'sqlite'
        ? (await store.db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name)
        : (await store.db.all<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()")).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['secret_prompts', 'secret_values', 'audit_events']));
    const forms = [SECRET, Buffer.from(SECRET).toString('base64'), Buffer.from(SECRET).toString('hex')];
    for (const table of tables) {
      const dump = JSON.stringify(await store.db.all(`SELECT * FROM ${table}`));
      for (const form of forms) expect(dump.includes(form), `${table} holds the value`).toBe(false);
    }
    const row = await store.db.get<Record<string, unknown>>('SELECT * FROM secret_prompts WHERE id = ?', [id]);
    expect(row).toMatchObject({ state: 'used', used_by: 'discord:U1', name: 'DEPLOY_TOKEN' });
  });
});

// Attacker's table: a click, form or submission that names a real approval, question or secret
// prompt, sent by a person who may answer it (an approver, the person asked) — but from a
// conversation it was never shown in. A forged or replayed interaction, the same button copied
// into a DM, another channel, another thread or another guild, a Slack payload whose channel
// differs, a modal whose opening click carried no conversation. Each is refused with its own
// private text, audited, and changes nothing: the stored row is as it was and the right click
// from the right place still decides it. Both store engines.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { openSecrets } from '../../src/app/secret-grants.js';
import { SecretPrompts } from '../../src/app/secret-prompts.js';
import { UserQuestions } from '../../src/app/user-questions.js';
import { actorOriginRefusal, approvalOriginRefusal, sameConversation, type ClickOrigin } from '../../src/approvals/click-origin.js';
import { ApprovalService } from '../../src/approvals/service.js';
import type { ApprovalActor, ApprovalRenderer, ApprovalRequest } from '../../src/approvals/types.js';
import { parseConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import type { ChatAdapter, ReplyTarget, UserQuestionPrompt } from '../../src/gateway/types.js';
import type { TurnContext } from '../../src/policy/context.js';
import { AuditLog } from '../../src/store/audit.js';
import { ENGINES, useTestStores } from '../store-engines.js';

const GUILD = 'G1';
const ASKED: ClickOrigin = { provider: 'discord', guildId: GUILD, channelId: 'C1', dm: false };
const IN_THREAD: ClickOrigin = { ...ASKED, threadId: 'T1' };

/** [attack, origin of the click] — every one comes from somewhere the prompt was not shown. */
const ELSEWHERE: Array<[string, ClickOrigin | undefined]> = [
  ['a click that carried no conversation (forged payload, modal without its opening click)', undefined],
  ['the same button replayed from another channel of the guild', { ...ASKED, channelId: 'C2' }],
  ['the same id from a thread of the asking channel', IN_THREAD],
  ['the same channel id in another guild', { ...ASKED, guildId: 'G2' }],
  ['the same channel with no guild reported (an adapter that lost it)', { provider: 'discord', channelId: 'C1', dm: false }],
  ['the same channel id on another platform', { ...ASKED, provider: 'slack' }],
  ['a channel id that differs only in case', { ...ASKED, channelId: 'c1' }],
  ['an empty channel id', { ...ASKED, channelId: '' }],
];

const QUESTION = { id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [{ label: 'Staging' }, { label: 'Production' }] };
const turn = { agentId: 'main', provider: 'discord', guildId: GUILD, channelId: 'C1', chat: 'channel', senderId: 'U1' } as unknown as TurnContext;
const APPROVER = 'U9';

describe.each(ENGINES)('clicks from a conversation the prompt was not shown in (%s)', (engine) => {
  const stores = useTestStores();
  const stops: Array<() => void> = [];
  afterEach(() => {
    for (const s of stops.splice(0)) s();
  });

  // ---- ask_user ----

  async function questions() {
    const store = (await stores.fresh(engine)).open;
    const db = (await store()).db;
    const audit = new AuditLog(db);
    const prompts: UserQuestionPrompt[] = [];
    const adapter = { provider: 'discord', askUser: async (_t: unknown, p: UserQuestionPrompt) => void prompts.push(p) } as unknown as ChatAdapter;
    const q = new UserQuestions({ db, adapter: () => adapter, waitMs: () => 0, audit, alsoMayAnswer: (_p, u) => u === APPROVER });
    q.bindFollowUp(() => true);
    stops.push(() => q.stop());
    await q.ask({ spec: { questions: [QUESTION], timeoutSec: 60 }, turn, sessionKey: 's1', toolCallId: 'c1' });
    return { q, audit, id: prompts[0]!.id, h: q.handlersFor('discord') };
  }

  describe.each([
    ['the person asked', 'U1'],
    ['an approver', APPROVER],
  ])('ask_user, clicked by %s', (_who, userId) => {
    it.each(ELSEWHERE)('refuses %s: nothing recorded, audited, still answerable where asked', async (_name, origin) => {
      const { q, audit, id, h } = await questions();
      const before = await q.store.get(id);
      for (const res of [
        await h.choose({ id, question: 0, option: 1, userId, origin }),
        await h.open({ id, question: 0, userId, origin }),
        await h.submit({ id, question: 0, userId, value: 'Production', origin }),
      ]) {
        expect(res).toMatchObject({ ok: false, text: expect.stringContaining('only be answered in the conversation where it was asked') });
      }
      expect(await q.store.get(id)).toEqual(before);
      const refused = await audit.list({ typePrefix: 'ask_user.refused' });
      expect(refused).toHaveLength(3);
      expect(refused[0]).toMatchObject({ subject: id, actor: `discord:${userId}` });
      expect(await h.choose({ id, question: 0, option: 0, userId, origin: ASKED })).toMatchObject({ ok: true });
    });
  });

  it('ask_user: a non-approver elsewhere is told it is not theirs (who before where), nothing audited as misplaced', async () => {
    const { audit, id, h } = await questions();
    expect(await h.choose({ id, question: 0, option: 0, userId: 'U2', origin: { ...ASKED, channelId: 'C2' } })).toMatchObject({ ok: false, text: expect.stringContaining('Only the person') });
    expect(await audit.list({ typePrefix: 'ask_user.refused' })).toHaveLength(0);
  });

  // ---- secret prompts ----

  /** `guildId` null: a row stored without one (older than the column). */
  async function secretPrompt(target: ReplyTarget, guildId: string | null = GUILD) {
    const { target: t, open } = await stores.fresh(engine);
    const db = (await open()).db;
    const audit = new AuditLog(db);
    const opened = await openSecrets(db, t.dataDir, { WARDEN_SECRETS_KEY: randomBytes(32).toString('base64') }, audit, `test-${randomUUID()}`);
    if (!opened.ok) throw new Error(opened.error);
    const adapter = { provider: 'discord', askSecret: async () => undefined } as unknown as ChatAdapter;
    const prompts = new SecretPrompts({ db, secrets: opened.secrets, audit, adapter: () => adapter, notify: async () => undefined });
    const asked = await prompts.ask({ agentId: 'main', sessionKey: 's1', conversationOnly: false, name: 'DEPLOY_TOKEN', reason: 'deploy', target, guildId: guildId ?? undefined, requesterId: 'U1' });
    if (!asked.ok) throw new Error(asked.error);
    return { id: asked.id, audit, secrets: opened.secrets, h: prompts.handlersFor('discord') };
  }

  // A secret prompt's row keeps the asking turn's guild/team: a submission from the same channel
  // id in another workspace, or one that reports none, is another conversation.
  it.each(ELSEWHERE)('secret prompt: refuses %s for the person asked; nothing saved; audited', async (_name, origin) => {
    const { id, audit, secrets, h } = await secretPrompt({ provider: 'discord', channelId: 'C1' });
    expect(await h.open({ id, userId: 'U1', origin })).toMatchObject({ ok: false, text: expect.stringContaining('only be entered from the prompt') });
    expect(await h.submit({ id, userId: 'U1', value: 'attacker-chosen', origin })).toMatchObject({ ok: false, text: expect.stringContaining('only be entered from the prompt') });
    expect(await secrets.store.get('main', 'DEPLOY_TOKEN')).toBeUndefined();
    expect(await audit.list({ typePrefix: 'secret.refused' })).toHaveLength(2);
    // Where it was shown: the asking conversation, or the person's own DM (Discord posts it there).
    expect(await h.submit({ id, userId: 'U1', value: 'the-real-one', origin: { provider: 'discord', channelId: 'D-U1', dm: true } })).toMatchObject({ ok: true });
    expect(await secrets.store.get('main', 'DEPLOY_TOKEN')).toBe('the-real-one');
  });

  it('secret prompt: asked in the conversation itself, a submission from there is taken', async () => {
    const { id, h } = await secretPrompt({ provider: 'discord', channelId: 'C1' });
    expect(await h.submit({ id, userId: 'U1', value: 'v', origin: ASKED })).toMatchObject({ ok: true });
  });

  it('secret prompt: a row stored without a guild (older than the column) is not entered from a guild channel; the DM still takes it', async () => {
    const { id, h } = await secretPrompt({ provider: 'discord', channelId: 'C1' }, null);
    expect(await h.submit({ id, userId: 'U1', value: 'v', origin: ASKED })).toMatchObject({ ok: false, text: expect.stringContaining('only be entered from the prompt') });
    expect(await h.submit({ id, userId: 'U1', value: 'v', origin: { provider: 'discord', channelId: 'D-U1', dm: true } })).toMatchObject({ ok: true });
  });

  // ---- approvals ----

  async function approvals(target: 'channel' | 'dm' | 'both') {
    // The approver is one on every platform here: what refuses below is where, never who.
    const parsed = parseConfig({ owners: { discord: [APPROVER], slack: [APPROVER], web: ['local'] }, approvals: { waitSec: 0, target } });
    if (!parsed.ok) throw parsed.error;
    const { open } = await stores.fresh(engine);
    const store = await open();
    const shown: ApprovalRequest[] = [];
    const renderer: ApprovalRenderer = { provider: 'discord', show: async (r) => void shown.push(r), update: async () => undefined };
    const svc = new ApprovalService({ store, config: parsed.value.config, events: new EventBus() });
    svc.registerRenderer(renderer);
    stops.push(() => svc.shutdown());
    void svc.request({ kind: 'exec', tool: 'exec', title: 'Run', preview: 'echo hi', fullText: 'echo hi', timeoutMs: 60_000 }, { agentId: 'main', sessionKey: 's1', provider: 'discord', guildId: GUILD, channelId: 'C1', requesterId: 'U1' });
    await expect.poll(() => shown.length).toBe(1);
    const id = shown[0]!.id;
    return { svc, id, audit: svc.audit };
  }

  const APPROVAL_CASES: Array<[string, 'channel' | 'dm' | 'both', ClickOrigin | null]> = [
    ['a click that carried no conversation', 'channel', null],
    ['a button replayed from another channel', 'channel', { ...ASKED, channelId: 'C2' }],
    ['the card id from a thread of its channel', 'channel', IN_THREAD],
    ["the approver's DM while cards go to the channel only", 'channel', { provider: 'discord', channelId: 'D-U9', dm: true }],
    ['the channel while cards go to DMs only', 'dm', ASKED],
    ['the same channel id on Slack', 'both', { ...ASKED, provider: 'slack' }],
    ['the same channel id in another guild', 'channel', { ...ASKED, guildId: 'G2' }],
    ['the card\'s channel with no guild reported', 'channel', { provider: 'discord', channelId: 'C1', dm: false }],
    ['the web chat deciding a Discord card', 'both', { provider: 'web', channelId: 'web', dm: true }],
  ];
  it.each(APPROVAL_CASES)('approval: an approver is refused for %s; the card stays pending; audited', async (_name, target, origin) => {
    const { svc, id, audit } = await approvals(target);
    const provider = origin?.provider ?? 'discord';
    const res = await svc.resolve(id, 'allow-once', { provider, userId: provider === 'web' ? 'local' : APPROVER, via: { kind: 'click', origin } });
    expect(res).toMatchObject({ kind: 'not-approver', wrongConversation: true });
    expect((await svc.get(id))?.status).toBe('pending');
    expect((await audit.list({ typePrefix: 'approval.refused' })).some((e) => e.subject === id)).toBe(true);
    // From a documented place it decides.
    const right = target === 'dm' ? { provider: 'discord', channelId: 'D-U9', dm: true } : ASKED;
    expect(await svc.resolve(id, 'allow-once', { provider: 'discord', userId: APPROVER, via: { kind: 'click', origin: right } })).toMatchObject({ kind: 'resolved' });
  });

  it('approval: typed /approve (kind typed, no origin) keeps deciding by id, as documented', async () => {
    const { svc, id } = await approvals('channel');
    expect(await svc.resolve(id, 'deny', { provider: 'discord', userId: APPROVER, via: { kind: 'typed' } })).toMatchObject({ kind: 'resolved' });
  });

  // An adapter (or plugin) that builds the actor by hand and forgets how the decision came is
  // never taken for a typed command: only an explicit `kind: 'typed'` skips the place check.
  it.each<[string, unknown]>([
    ['a click with no kind/origin given (no `via` at all)', undefined],
    ['a click kind with its origin left out', { kind: 'click' }],
    ['a kind the service does not know', { kind: 'button', origin: ASKED }],
    ['a typed kind spelled in another case', { kind: 'Typed' }],
  ])('approval: %s is refused as a click from nowhere; the card stays pending', async (_name, via) => {
    const { svc, id, audit } = await approvals('channel');
    const actor = { provider: 'discord', userId: APPROVER, ...(via === undefined ? {} : { via }) } as unknown as ApprovalActor;
    expect(await svc.resolve(id, 'allow-once', actor)).toMatchObject({ kind: 'not-approver', wrongConversation: true, reason: 'the click carried no conversation' });
    expect((await svc.get(id))?.status).toBe('pending');
    expect((await audit.list({ typePrefix: 'approval.refused' })).some((e) => e.subject === id)).toBe(true);
  });
});

describe('approvalOriginRefusal: the documented places of a card', () => {
  const request = { provider: 'discord', guildId: GUILD, channelId: 'C1' };
  const dm: ClickOrigin = { provider: 'discord', channelId: 'D1', dm: true };
  it.each<[string, Parameters<typeof approvalOriginRefusal>[0], ClickOrigin, 'channel' | 'dm' | 'both', boolean]>([
    ['its channel, target channel', request, ASKED, 'channel', true],
    ['its channel, target both', request, ASKED, 'both', true],
    ['a DM, target both', request, dm, 'both', true],
    ['a DM, target dm', request, dm, 'dm', true],
    ['a DM, target channel', request, dm, 'channel', false],
    ['a DM for a request from another platform (its cards can only reach DMs here)', { provider: 'slack', channelId: 'C1' }, dm, 'channel', true],
    ['a DM for a request with no conversation (cron)', { provider: 'discord' }, dm, 'channel', true],
    ['a DM after escalation to a person', { ...request, escalateTo: ['user:U7'], escalatedAt: 1 }, dm, 'channel', true],
    ['a DM after escalation to a channel only', { ...request, escalateTo: ['channel:C9'], escalatedAt: 1 }, dm, 'channel', false],
    ['the escalation channel, once escalated', { ...request, escalateTo: ['channel:C9'], escalatedAt: 1 }, { ...ASKED, channelId: 'C9' }, 'channel', true],
    ['the escalation channel, before escalation', { ...request, escalateTo: ['channel:C9'] }, { ...ASKED, channelId: 'C9' }, 'channel', false],
    ['a thread of the escalation channel', { ...request, escalateTo: ['channel:C9'], escalatedAt: 1 }, { ...ASKED, channelId: 'C9', threadId: 'T' }, 'channel', false],
    ['its thread, asked in that thread', { ...request, threadId: 'T1' }, IN_THREAD, 'channel', true],
    ['the parent channel, asked in a thread', { ...request, threadId: 'T1' }, ASKED, 'channel', false],
    ['the web chat for a web request', { provider: 'web', channelId: 'web' }, { provider: 'web', channelId: 'web', dm: true }, 'channel', true],
    ['Discord for a web request', { provider: 'web', channelId: 'web' }, dm, 'both', false],
  ])('%s', (_name, req, origin, target, allowed) => {
    expect(approvalOriginRefusal(req, origin, target) === undefined).toBe(allowed);
  });
});

describe('actorOriginRefusal: only an explicit typed command skips the place check', () => {
  const request = { provider: 'discord', guildId: GUILD, channelId: 'C1' };
  it.each<[string, unknown, boolean]>([
    ['typed /approve, from anywhere', { kind: 'typed' }, true],
    ['a click from the card\'s channel', { kind: 'click', origin: ASKED }, true],
    ['a click from another channel', { kind: 'click', origin: { ...ASKED, channelId: 'C2' } }, false],
    ['a click whose adapter reported no origin', { kind: 'click', origin: null }, false],
    ['a click with no kind/origin given', undefined, false],
    ['a click kind with the origin left out', { kind: 'click' }, false],
    ['an unknown kind carrying a good origin', { kind: 'button', origin: ASKED }, false],
  ])('%s', (_name, via, allowed) => {
    expect(actorOriginRefusal(request, via as Parameters<typeof actorOriginRefusal>[1], 'channel') === undefined).toBe(allowed);
  });
});

// Both platforms' workspace ids: a Discord guild (a snowflake) and a Slack team (T…). The card,
// question or prompt keeps the asking turn's; a click must report the same one, exactly.
describe('sameConversation: the workspace a click came from is the one asked in', () => {
  const DISCORD_GUILD = '1098765432109876543';
  const SLACK_TEAM = 'T01ABCDEF';
  it.each<[string, Parameters<typeof sameConversation>[0], ClickOrigin, boolean]>([
    ['Discord: the same guild', { provider: 'discord', guildId: DISCORD_GUILD, channelId: '222' }, { provider: 'discord', guildId: DISCORD_GUILD, channelId: '222', dm: false }, true],
    ['Discord: another guild, same channel id', { provider: 'discord', guildId: DISCORD_GUILD, channelId: '222' }, { provider: 'discord', guildId: '1098765432109876544', channelId: '222', dm: false }, false],
    ['Discord: the click reports no guild', { provider: 'discord', guildId: DISCORD_GUILD, channelId: '222' }, { provider: 'discord', channelId: '222', dm: false }, false],
    ['Discord: stored without a guild (DM, or an older row), click from a guild', { provider: 'discord', channelId: '222' }, { provider: 'discord', guildId: DISCORD_GUILD, channelId: '222', dm: false }, false],
    ['Discord: a DM asked and answered there (no guild either side)', { provider: 'discord', channelId: '333' }, { provider: 'discord', channelId: '333', dm: true }, true],
    ['Slack: the same team', { provider: 'slack', guildId: SLACK_TEAM, channelId: 'C0123' }, { provider: 'slack', guildId: SLACK_TEAM, channelId: 'C0123', dm: false }, true],
    ['Slack: another team, same channel id (a shared channel)', { provider: 'slack', guildId: SLACK_TEAM, channelId: 'C0123' }, { provider: 'slack', guildId: 'T09ZZZZZZ', channelId: 'C0123', dm: false }, false],
    ['Slack: the payload reports no team', { provider: 'slack', guildId: SLACK_TEAM, channelId: 'C0123' }, { provider: 'slack', channelId: 'C0123', dm: false }, false],
    ['Slack: a team id differing only in case', { provider: 'slack', guildId: SLACK_TEAM, channelId: 'C0123' }, { provider: 'slack', guildId: SLACK_TEAM.toLowerCase(), channelId: 'C0123', dm: false }, false],
  ])('%s', (_name, asked, origin, same) => {
    expect(sameConversation(asked, origin)).toBe(same);
    // An approval card decided in its channel follows the same rule.
    expect(approvalOriginRefusal(asked, origin, 'channel') === undefined).toBe(same);
  });
});

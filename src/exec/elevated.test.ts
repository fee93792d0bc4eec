import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { TurnContext } from '../policy/context.js';
import { elevatedDecision, elevatedIds } from './elevated.js';

const config = (raw: unknown) => {
  const r = parseConfig(raw);
  if (!r.ok) throw r.error;
  return r.value.config;
};
const turn = (over: Partial<TurnContext> = {}): TurnContext => ({ agentId: 'main', provider: 'discord', chat: 'channel', channelId: 'c1', senderId: '111', senderIsOwner: false, spawnDepth: 0, ...over });
const ELEVATED = { tools: { elevated: { enabled: true, allowFrom: { discord: ['111', 'id:222'], whatsapp: ['+15555550123'] } } } };

describe('elevated exec: who may run on the gateway host from a sandboxed agent', () => {
  it.each<[string, unknown, Partial<TurnContext>, 'sandbox' | 'gateway', { ok: boolean; why?: string }]>([
    ['a named sender in a sandboxed session', ELEVATED, {}, 'sandbox', { ok: true }],
    ['an id: entry', ELEVATED, { senderId: '222' }, 'sandbox', { ok: true }],
    ['anyone else', ELEVATED, { senderId: '333' }, 'sandbox', { ok: false, why: 'sender 333 is not in tools.elevated.allowFrom.discord' }],
    ['the same id on another platform', ELEVATED, { provider: 'slack' }, 'sandbox', { ok: false, why: 'sender 111 is not in tools.elevated.allowFrom.slack' }],
    ['exec already on the host', ELEVATED, {}, 'gateway', { ok: false, why: 'exec already runs on the gateway host here; elevated changes nothing' }],
    ['nothing configured', {}, {}, 'sandbox', { ok: false, why: 'tools.elevated is not configured' }],
    ['turned off', { tools: { elevated: { enabled: false, allowFrom: { discord: ['111'] } } } }, {}, 'sandbox', { ok: false, why: 'tools.elevated.enabled is false' }],
    ['enabled with nobody listed', { tools: { elevated: { enabled: true } } }, {}, 'sandbox', { ok: false, why: 'sender 111 is not in tools.elevated.allowFrom.discord' }],
    ['a subagent of a named sender', ELEVATED, { spawnDepth: 1 }, 'sandbox', { ok: false, why: 'a subagent cannot run elevated commands' }],
    ['a scheduled job', ELEVATED, { senderId: 'cron:abc' }, 'sandbox', { ok: false, why: 'only a person named in tools.elevated.allowFrom can ask for elevated commands' }],
    ['no sender', ELEVATED, { senderId: undefined }, 'sandbox', { ok: false, why: 'only a person named in tools.elevated.allowFrom can ask for elevated commands' }],
    ['an agent that turns it off', { ...ELEVATED, agents: { list: [{ id: 'main', tools: { elevated: { enabled: false } } }] } }, {}, 'sandbox', { ok: false, why: 'elevated is turned off for agent main' }],
    ['an agent list the sender is not on', { ...ELEVATED, agents: { list: [{ id: 'main', tools: { elevated: { allowFrom: { discord: ['222'] } } } }] } }, {}, 'sandbox', { ok: false, why: "sender 111 is not in agent main's tools.elevated.allowFrom.discord" }],
  ])('%s', (_name, raw, over, host, expected) => {
    expect(elevatedDecision(config(raw), turn(over), host)).toMatchObject(expected);
  });

  it('only ids name a sender: display names, usernames and * never do', () => {
    expect(elevatedIds({ discord: ['111', 'id:222', 'from:333', 'name:Bob', 'username:bob', 'tag:x', '*', ' '] }, 'discord')).toEqual(['111', '222', '333']);
  });
});

describe('warden audit names who may leave the sandbox', () => {
  it('one finding for named senders, none when off or empty', async () => {
    const { auditElevated } = await import('./elevated.js');
    expect(auditElevated(config(ELEVATED))).toEqual([expect.objectContaining({ id: 'tools.elevated', severity: 'warn', message: expect.stringContaining('discord:111, discord:222') })]);
    expect(auditElevated(config({ tools: { elevated: { enabled: false, allowFrom: { discord: ['1'] } } } }))).toEqual([]);
    expect(auditElevated(config({ tools: { elevated: { allowFrom: { whatsapp: ['+1'] } } } }))).toEqual([]);
  });
});

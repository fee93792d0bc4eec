// The chat adapters a config starts: built from their own config blocks, restarted on reload when
// their block changed, and their listening sockets reported as Warden's own.
import { isDeepStrictEqual } from 'node:util';
import { checkBind, createWebAdapter } from '../../adapters/web/index.js';
import { approversFor } from '../approvals/index.js';
import type { ConfigProblem, WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import type { OwnListener } from '../net/index.js';
import type { Store } from '../store/index.js';
import { clickHandlerOn, type ResolveApproval } from '../gateway/approval-clicks.js';
import { storeCardStore } from '../gateway/card-store.js';
import { PairingStore } from '../cluster/pairing.js';
import { SharedDeliveries } from '../cluster/deliveries.js';
import { decidePairing, pairingDecisionText, type PairingDecision } from '../gateway/pairing-decision.js';
import { senderIsOwner } from '../turn/turn-context.js';
import { Gateway } from '../gateway/gateway.js';
import type { ChatAdapter } from '../gateway/types.js';
import { plannedAdapters } from '../config/planned-adapters.js';
import { scrubbedAdapter } from './scrubbed-adapter.js';
import type { SecretPrompts } from './secret-prompts.js';
import type { UserQuestions } from './user-questions.js';
import { PollStore } from '../tools/core/message/polls.js';

/** Where pairing cards go: the first running platform with owners (the web chat's user is one). */
export function cardPlatform(adapters: readonly ChatAdapter[], config: WardenConfig): string | undefined {
  return adapters.find((a) => a.provider === 'web' || (config.owners[a.provider] ?? []).length > 0)?.provider;
}

/**
 * A reload's adapter changes: an adapter whose connection block changed is stopped and built
 * again, one the config no longer starts is stopped, a new one is started; the rest keep their
 * connection. Resolves with what failed (`provider: why`).
 */
export async function restartChangedAdapters(
  gateway: Gateway,
  previous: WardenConfig,
  next: WardenConfig,
  adapters: { make: (provider: 'discord' | 'slack' | 'web') => Promise<ChatAdapter>; forget: (provider: string) => void },
): Promise<string[]> {
  const failed: string[] = [];
  const before = new Set(plannedAdapters(previous));
  const after = plannedAdapters(next);
  for (const provider of new Set([...before, ...after])) {
    const wanted = after.includes(provider);
    if (wanted && before.has(provider) && isDeepStrictEqual(adapterBlock(previous, provider), adapterBlock(next, provider))) continue;
    try {
      await gateway.replaceAdapter(provider, undefined);
      if (!wanted) {
        adapters.forget(provider);
        log.info({ provider }, 'chat adapter stopped: the config no longer starts it');
        continue;
      }
      await gateway.replaceAdapter(provider, await adapters.make(provider));
      log.info({ provider }, 'chat adapter (re)started: its config block changed');
    } catch (err) {
      failed.push(`${provider}: ${(err as Error).message}`);
    }
  }
  return failed;
}

/** What a running Warden refuses beyond the schema: a web chat bound beyond loopback without a token. */
export function runtimeProblems(config: WardenConfig): ConfigProblem[] {
  if (!plannedAdapters(config).includes('web')) return [];
  const bind = checkBind(config.channels.web.host, config.channels.web.token);
  return bind.ok ? [] : [{ path: bind.path, message: bind.message }];
}

/** The part of a config an adapter is built from: its own block, plus who gets its approval cards. */
export function adapterBlock(config: WardenConfig, provider: 'discord' | 'slack' | 'web'): unknown {
  const block = config.channels[provider];
  // Tool policies are read per turn from the live config; only connection settings need a restart.
  if (provider === 'web') {
    const { tools: _t, toolsBySender: _s, streaming: _st, ...rest } = config.channels.web;
    return rest;
  }
  if (!block) return undefined;
  // Mention gating and streaming are read per message too.
  if (provider === 'discord') {
    const { guilds: _g, requireMention: _m, streaming: _st, ...rest } = config.channels.discord!;
    return rest;
  }
  const { channels: _c, requireMention: _m, streaming: _st, ...rest } = config.channels.slack!;
  return rest;
}

/** A direct message to each owner on every running platform (the web chat's page for its local user). */
export async function notifyOwners(gateway: Gateway, config: WardenConfig, text: string): Promise<void> {
  for (const provider of plannedAdapters(config)) {
    if (!gateway.adapter(provider)) continue;
    if (provider === 'web') {
      await gateway.notify({ provider, channelId: 'web' }, { text });
      continue;
    }
    for (const id of config.owners[provider] ?? []) await gateway.notify({ provider, channelId: '', dmUserId: id }, { text });
  }
}

/** A platform's client library (discord.js, Bolt) is imported only when the config starts it. */
export async function createAdapter(
  provider: 'discord' | 'slack' | 'web',
  config: WardenConfig,
  store: Store,
  resolve: ResolveApproval,
  webToken: string,
  web: Pick<Parameters<typeof createWebAdapter>[1], 'history' | 'pendingApprovals' | 'filesDir' | 'welcome' | 'front'>,
  current: () => WardenConfig,
  secretPrompts?: SecretPrompts | undefined,
  userQuestions?: UserQuestions | undefined,
): Promise<ChatAdapter> {
  const onApprovalClick = clickHandlerOn(resolve, provider);
  const pairing = new PairingStore(store.db);
  const deliveries = store.db.shared ? new SharedDeliveries(store.db) : undefined;
  const polls = new PollStore(store.db);
  // Approvers and the card target are read at each card: a reload changes who gets it.
  const deps = (p: 'discord' | 'slack') => ({
    onApprovalClick,
    get approvers() {
      const c = current();
      return [...approversFor({ owners: c.owners, approvers: c.approvals.approvers }, p)];
    },
    get approvalsTarget() {
      return current().approvals.target;
    },
    cards: storeCardStore(store.db, p),
    // Slack polls as buttons: the votes in the store, counted alike by every instance.
    polls,
    ...(secretPrompts ? { secretPrompts: secretPrompts.handlersFor(p) } : {}),
    // The owners' pairing card: decided as `/pair` is, ownership read from the config at the click.
    pairingClicks: async (click: { decision: PairingDecision; code: string; userId: string }) => {
      const outcome = await decidePairing(pairing, { provider: p, code: click.code, decision: click.decision, by: { userId: click.userId, isOwner: senderIsOwner(current(), p, click.userId) } });
      return { final: outcome.kind === 'approved' || outcome.kind === 'denied', text: pairingDecisionText(outcome) };
    },
    ...(userQuestions ? { userQuestions: userQuestions.handlersFor(p) } : {}),
    // Instances sharing the store handle a platform's repeated delivery once, whichever it reaches.
    ...(deliveries ? { deliveries } : {}),
  });
  switch (provider) {
    // What an adapter posts passes the secret scrubber (scrubbed-adapter.ts).
    case 'web':
      return scrubbedAdapter(createWebAdapter(config.channels.web, { onApprovalClick, token: webToken, ...web, ...(secretPrompts ? { secretPrompts: secretPrompts.handlersFor('web') } : {}), ...(userQuestions ? { userQuestions: userQuestions.handlersFor('web') } : {}) }));
    case 'discord': {
      const { createDiscordAdapter } = await import('../../adapters/discord/index.js');
      return scrubbedAdapter(createDiscordAdapter(config.channels.discord!, deps('discord')));
    }
    case 'slack': {
      const { createSlackAdapter } = await import('../../adapters/slack/index.js');
      return scrubbedAdapter(createSlackAdapter(config.channels.slack!, deps('slack')));
    }
  }
}

/** The listening socket of an adapter that does not register its own (Slack's HTTP receiver). */
export function listenerOf(adapter: ChatAdapter): OwnListener[] {
  if (adapter.provider !== 'slack' || !('eventsUrl' in adapter) || typeof adapter.eventsUrl !== 'string') return [];
  const m = /^http:\/\/(.+):(\d+)\/slack\/events$/.exec(adapter.eventsUrl);
  return m ? [{ name: 'Slack HTTP receiver', host: m[1]!, port: Number(m[2]) }] : [];
}

import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import { background } from '../util/background.js';
import type { Message, ModelProvider, ModelRequest, Usage } from '../models/types.js';
import { metrics as processMetrics, type WardenMetrics } from '../ops/metrics.js';
import { countersFor, type CounterSpec } from './budgets.js';
import { costNano, formatUsd } from './cost.js';
import { describeReset } from './periods.js';
import { priceFor, type Price } from './prices.js';
import type { UsageStore } from './store.js';
import type { UsageAttribution, UsageRecord } from './types.js';
import { toolsJsonSize } from '../util/json-size.js';

/** How long a call's hold on a counter lasts if its process dies before settling it. */
export const HOLD_MS = 15 * 60_000;
/** An image part's tokens: a rough estimate for the check, a generous bound for the hold. */
const IMAGE_ESTIMATE_TOKENS = 1_000;
const IMAGE_BOUND_TOKENS = 5_000;

/**
 * What `ask` rules need from the approvals service, given at the composition root: open a card
 * offering to raise a counter for its period, and read how a card ended.
 */
export interface RaiseApprovals {
  open(input: { attribution: UsageAttribution; title: string; text: string; facts: Array<{ label: string; value: string }> }): Promise<string>;
  /** `approved` (allow-once), `pending`, or `closed` (denied, expired, cancelled, unknown). */
  status(approvalId: string): Promise<'approved' | 'pending' | 'closed'>;
}

/** Why a call may not run: told to the sender as `message`. */
export interface BudgetRefusal {
  message: string;
  counter: CounterSpec;
  spentNano: number | undefined;
  resetsAt: number;
  /** The card asking to raise it, when the rule is `ask`. */
  raiseApprovalId?: string | undefined;
}

/** Thrown by a metered provider in place of a call the budgets do not admit; no request is made. */
export class BudgetRefusedError extends Error {
  override readonly name = 'BudgetRefusedError';
  constructor(readonly refusal: BudgetRefusal) {
    super(refusal.message);
  }
}

export interface CallFacts {
  provider: string;
  model: string;
  attribution: UsageAttribution;
  /** What the prompt holds: characters of text, UTF-8 bytes of text, and image parts. */
  prompt: { chars: number; bytes: number; images: number };
  maxOutputTokens: number;
}

export interface Ticket {
  facts: CallFacts;
  price: Price | undefined;
  held: Array<{ key: string; hold: number }>;
}

export type Admission = { ok: true; ticket: Ticket } | { ok: false; refusal: BudgetRefusal };

export interface UsageServiceOptions {
  store: UsageStore;
  /** The live config (budgets and prices follow a reload). */
  config: () => Pick<WardenConfig, 'models' | 'budgets'>;
  raises?: RaiseApprovals | undefined;
  metrics?: WardenMetrics | undefined;
  now?: () => number;
}

/**
 * Usage accounting and budgets: every model call is admitted (budgets checked, a hold placed on
 * each counter it is charged to) and settled (its usage recorded, the holds swapped for what it
 * cost). The turn loop reaches it through `wrap`, so the turn's calls, its compaction and
 * anything else that calls the wrapped provider are all counted, by one path.
 */
export class UsageService {
  private readonly now: () => number;
  /** Usage records of answered calls still being written (see `wrap`). */
  private readonly settling = new Set<Promise<unknown>>();
  /** The same, by conversation (session key): its next call's admission waits for them. */
  private readonly settlingIn = new Map<string, Set<Promise<unknown>>>();

  constructor(private readonly options: UsageServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  get store(): UsageStore {
    return this.options.store;
  }

  /** A provider whose every call is admitted first and recorded after. */
  wrap(provider: ModelProvider, attribution: UsageAttribution): ModelProvider {
    return {
      name: provider.name,
      api: provider.api,
      complete: async (request, signal) => {
        // The conversation's previous answer may still be settling (see below): until it has,
        // its counters hold that call's upper bound, not its cost, and this admission would be
        // judged against more than was spent (a refusal near a cap that the settled record
        // admits). Waiting costs nothing when no record is on its way, one write's round trip
        // when one is; other conversations never wait for it.
        if (this.settlingIn.size > 0) await this.settledIn(attribution.sessionKey);
        const admission = await this.admit({
          provider: provider.name,
          model: request.model,
          attribution,
          prompt: measurePrompt(request),
          maxOutputTokens: request.maxOutputTokens,
        });
        if (!admission.ok) throw new BudgetRefusedError(admission.refusal);
        let usage: Usage | undefined;
        try {
          const response = await provider.complete(request, signal);
          usage = response.usage;
          return response;
        } finally {
          // A failed call reported no usage: its holds are given back and nothing is recorded. A
          // store that fails here costs the record, not the answer: the holds stay until they lapse.
          const settling = this.settle(admission.ticket, usage).catch((err: unknown) => log.error({ err, provider: provider.name, model: request.model }, 'model usage could not be recorded'));
          // A failure waits for its holds to come back (a retry is admitted against them). An
          // answer does not wait for its record: the record is issued now, and commits with the
          // caller's next write of this conversation (the reply's transcript entry), in its
          // transaction (`UsageStore.record`). `settled()` waits for records still on their way.
          if (usage === undefined) await settling;
          else this.track(settling, attribution.sessionKey);
        }
      },
    };
  }

  /** Resolves once every usage record issued so far is written (or failed and was logged): before the store closes. */
  async settled(): Promise<void> {
    while (this.settling.size > 0) await Promise.all([...this.settling]);
  }

  /** Resolves once the usage records issued so far in conversation `sessionKey` are written (at once when none is on its way). */
  async settledIn(sessionKey: string | undefined): Promise<void> {
    if (sessionKey === undefined) return;
    for (let pending = this.settlingIn.get(sessionKey); pending !== undefined; pending = this.settlingIn.get(sessionKey)) await Promise.all([...pending]);
  }

  private track(settling: Promise<unknown>, sessionKey: string | undefined): void {
    this.settling.add(settling);
    let inSession: Set<Promise<unknown>> | undefined;
    if (sessionKey !== undefined) {
      inSession = this.settlingIn.get(sessionKey);
      if (!inSession) this.settlingIn.set(sessionKey, (inSession = new Set()));
      inSession.add(settling);
    }
    background(
      settling.finally(() => {
        this.settling.delete(settling);
        inSession?.delete(settling);
        if (inSession?.size === 0 && this.settlingIn.get(sessionKey!) === inSession) this.settlingIn.delete(sessionKey!);
      }),
      'usage record bookkeeping',
    );
  }

  /** Checks every budget the call is charged to; admitted calls hold an upper bound of their cost until settled. */
  async admit(facts: CallFacts): Promise<Admission> {
    const config = this.options.config();
    const now = this.now();
    const price = priceFor(config, facts.provider, facts.model);
    const counters = countersFor(config.budgets, facts.attribution, now);
    const ticket: Ticket = { facts, price, held: [] };
    if (counters.length === 0) return { ok: true, ticket };
    const needTokens = Math.ceil(facts.prompt.chars / 4) + facts.prompt.images * IMAGE_ESTIMATE_TOKENS;
    const boundInput = facts.prompt.bytes + facts.prompt.images * IMAGE_BOUND_TOKENS;
    const items: Array<{ counter: CounterSpec; need: number; hold: number }> = [];
    for (const counter of counters) {
      if (counter.unit === 'tokens') {
        items.push({ counter, need: needTokens, hold: boundInput + facts.maxOutputTokens });
      } else if (price) {
        // The hold bounds the call's cost: every prompt byte a token at the dearest input price, every allowed output token.
        const inputBound = Math.max(price.input, price.cacheWrite ?? 0, price.cacheRead ?? 0);
        const hold = costNano({ inputTokens: boundInput, outputTokens: facts.maxOutputTokens }, { ...price, input: inputBound, cacheRead: undefined, cacheWrite: undefined });
        items.push({ counter, need: costNano({ inputTokens: needTokens, outputTokens: 0 }, price), hold });
      } else {
        return { ok: false, refusal: this.unknownPrice(counter, facts) };
      }
    }
    const until = now + HOLD_MS;
    let refused = await this.options.store.admit(items, now, until);
    // An `ask` counter at its cap may have been raised by an approver since: applied once, then admitted again.
    if (refused.length > 0) {
      let raised = false;
      for (const item of items) if (refused.includes(item.counter.key) && item.counter.action === 'ask') raised = (await this.applyApprovedRaises(item.counter.key)) || raised;
      if (raised) refused = await this.options.store.admit(items, now, until);
    }
    if (refused.length > 0) {
      const counter = items.find((i) => i.counter.key === refused[0])!.counter;
      return { ok: false, refusal: await this.refusal(counter, facts) };
    }
    ticket.held = items.map((i) => ({ key: i.counter.key, hold: i.hold }));
    return { ok: true, ticket };
  }

  /** Records the call (when it reported usage) and swaps its holds for its real cost or tokens. */
  async settle(ticket: Ticket, usage: Usage | undefined): Promise<UsageRecord | undefined> {
    const { facts, price } = ticket;
    const cost = usage && price ? costNano(usage, price) : undefined;
    const tokens = usage ? usage.inputTokens + usage.outputTokens : 0;
    const config = this.options.config();
    const items = ticket.held.map((h) => ({ key: h.key, hold: h.hold, spent: h.key.endsWith('|tokens') ? tokens : (cost ?? 0) }));
    if (!usage) {
      await this.options.store.settle(items);
      return undefined;
    }
    const record: UsageRecord = { at: this.now(), provider: facts.provider, model: facts.model, attribution: facts.attribution, usage, costNano: cost, priceSource: price?.source };
    // The record and the counters' settle in one transaction, riding with the conversation's next
    // write of this turn of the event loop (the answer's transcript entry): one commit for both.
    await this.options.store.record(record, items, facts.attribution.sessionKey);
    (this.options.metrics ?? processMetrics).modelUsage(facts.attribution.agentId, facts.provider, facts.model, usage, cost);
    if (cost === undefined && config.budgets.rules.length > 0) log.debug({ provider: facts.provider, model: facts.model }, 'model call recorded with price unknown');
    return record;
  }

  /** The budgets a call for `attribution` would be charged to now, with what each has spent: `/usage`. */
  async budgetsFor(attribution: UsageAttribution): Promise<Array<{ counter: CounterSpec; spent: number; limit: number }>> {
    const out: Array<{ counter: CounterSpec; spent: number; limit: number }> = [];
    for (const counter of countersFor(this.options.config().budgets, attribution, this.now())) {
      const state = await this.options.store.get(counter.key);
      out.push({ counter, spent: state?.spent ?? 0, limit: counter.cap + (state?.raised ?? 0) });
    }
    return out;
  }

  /** Raises approvers granted since the last look, applied once each; true when any was. */
  private async applyApprovedRaises(key: string): Promise<boolean> {
    const raises = this.options.raises;
    if (!raises) return false;
    let applied = false;
    for (const r of await this.options.store.pendingRaises(key)) {
      const status = await raises.status(r.approvalId);
      if (status === 'approved') applied = (await this.options.store.applyRaise(r.approvalId, key, r.amount)) || applied;
      else if (status === 'closed') await this.options.store.closeRaise(r.approvalId);
    }
    return applied;
  }

  private async refusal(counter: CounterSpec, facts: CallFacts): Promise<BudgetRefusal> {
    const state = await this.options.store.get(counter.key);
    const timeZone = this.options.config().budgets.timeZone;
    const spent = state?.spent ?? 0;
    const limit = counter.cap + (state?.raised ?? 0);
    const amount = (v: number) => (counter.unit === 'usd' ? formatUsd(v) : `${v} tokens`);
    const whose = SCOPE_TEXT[counter.scope](counter.subject);
    const per = this.options.config().budgets.rules[counter.ruleIndex]?.per ?? 'day';
    const inFlight = state && state.held > 0 ? ` (${amount(state.held)} more held by calls still running)` : '';
    let message = `⛔ ${whose} budget of ${amount(limit)} per ${per} is reached: ${amount(spent)} spent${inFlight}. It resets at ${describeReset(counter.window.end, timeZone)}.`;
    let raiseApprovalId: string | undefined;
    if (counter.action === 'ask' && this.options.raises) {
      raiseApprovalId = await this.askToRaise(counter, facts, amount(spent), amount(counter.cap), per);
      if (raiseApprovalId) message += ` I asked the approvers to raise it by ${amount(counter.cap)} for this ${per} (approval ${raiseApprovalId}); ask again once they have.`;
    }
    return { message, counter, spentNano: counter.unit === 'usd' ? spent : undefined, resetsAt: counter.window.end, ...(raiseApprovalId ? { raiseApprovalId } : {}) };
  }

  /** One card per counter at a time: a raise still waiting is pointed to, not asked again. */
  private async askToRaise(counter: CounterSpec, facts: CallFacts, spent: string, by: string, per: string): Promise<string | undefined> {
    const raises = this.options.raises!;
    for (const r of await this.options.store.pendingRaises(counter.key)) {
      if ((await raises.status(r.approvalId)) === 'pending') return r.approvalId;
    }
    try {
      const id = await raises.open({
        attribution: facts.attribution,
        title: `Raise ${SCOPE_TEXT[counter.scope](counter.subject).replace(/^Your/, 'the sender’s')} budget for this ${per}?`,
        text: `Budget ${counter.key}: ${spent} spent of ${by}. Approving raises it by ${by} until ${describeReset(counter.window.end, this.options.config().budgets.timeZone)}.`,
        facts: [
          { label: 'Budget', value: `${counter.scope} ${counter.subject}, per ${per}` },
          { label: 'Spent', value: spent },
          { label: 'Raise by', value: by },
        ],
      });
      await this.options.store.addRaise(id, counter.key, counter.cap, this.now());
      return id;
    } catch (err) {
      log.error({ err, counter: counter.key }, 'budget raise card could not be opened');
      return undefined;
    }
  }

  private unknownPrice(counter: CounterSpec, facts: CallFacts): BudgetRefusal {
    return {
      message: `⛔ ${facts.provider}/${facts.model} has no known price (price unknown), so the US-dollar budget on ${counter.scope} ${counter.subject} cannot be kept: the call is not made. Set models.providers.${facts.provider}.models[].cost for it, or budget this scope in tokens.`,
      counter,
      spentNano: undefined,
      resetsAt: counter.window.end,
    };
  }
}

const SCOPE_TEXT: Record<CounterSpec['scope'], (subject: string) => string> = {
  sender: () => 'Your',
  channel: (s) => `This channel’s (${s})`,
  guild: (s) => `This server’s (${s})`,
  agent: (s) => `The agent ${s}’s`,
  global: () => 'The overall',
};

/** Characters and UTF-8 bytes of the prompt's text (system, messages, tool schemas) and its image count. */
export function measurePrompt(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): CallFacts['prompt'] {
  let chars = request.system.length;
  let bytes = Buffer.byteLength(request.system);
  let images = 0;
  const text = (t: string) => {
    chars += t.length;
    bytes += Buffer.byteLength(t);
  };
  for (const m of request.messages as Message[]) {
    // Each message's framing (role, separators) is a few tokens the text does not show.
    bytes += 8;
    for (const p of m.content) {
      if (p.type === 'text') text(p.text);
      else if (p.type === 'image') images++;
      else text(`${p.name}${p.rawArgs ?? JSON.stringify(p.args ?? {})}`);
    }
  }
  if (request.tools.length > 0) {
    // The schemas are the same objects every turn: their size is measured once (util/json-size).
    const tools = toolsJsonSize(request.tools);
    chars += tools.chars;
    bytes += tools.bytes;
  }
  return { chars, bytes, images };
}

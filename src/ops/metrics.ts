import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventBus } from '../events/events.js';

/** Seconds buckets for work a person waits on: a model reply, a turn. */
const INTERACTIVE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds buckets for a person's decision on an approval card (expiry defaults to 30 min). */
const DECISION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];
/** Seconds buckets for a store operation (SQLite on local disk: micro- to milliseconds). */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

/** What a scrape reads from a running Warden: approvals waiting, sessions queued. */
export interface GaugeSource {
  approvalsPending(): number | Promise<number>;
  queue(): { sessions: number; running: number; pending: number };
}

/**
 * Labels whose values come from outside (a tool name the model made up) are capped: past
 * `limit` distinct values the rest are counted as `other`, so a model cannot grow the series
 * without bound.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();
  constructor(private readonly limit: number) {}
  value(raw: string): string {
    // Only names that passed the test below are kept: one seen before is its own label.
    if (this.seen.has(raw)) return raw;
    // Tool names, and model ids such as `meta-llama/llama-3.1-70b`; anything else is not a name.
    const v = /^[\w.:/-]{1,64}$/.test(raw) ? raw : 'other';
    if (this.seen.has(v)) return v;
    if (this.seen.size >= this.limit) return 'other';
    this.seen.add(v);
    return v;
  }
}

/**
 * Warden's Prometheus metrics, one registry per process (what `/metrics` serves). The code
 * paths report through small hooks — the turn loop, the model registry, the transcript store
 * and the event bus (tool calls, approvals) — and the gauges are read from the running
 * instances at scrape time.
 */
export class WardenMetrics {
  readonly registry = new Registry();
  private readonly sources = new Set<GaugeSource>();
  private readonly toolLabel = new BoundedLabel(200);
  private readonly modelLabel = new BoundedLabel(50);
  private readonly agentLabel = new BoundedLabel(50);

  readonly turns = new Counter({ name: 'warden_turns_total', help: 'Agent turns by outcome', labelNames: ['status'] as const, registers: [this.registry] });
  readonly turnSeconds = new Histogram({ name: 'warden_turn_duration_seconds', help: 'Agent turn duration', labelNames: ['status'] as const, buckets: INTERACTIVE_BUCKETS, registers: [this.registry] });
  readonly toolCalls = new Counter({ name: 'warden_tool_calls_total', help: 'Tool calls by tool and status (ok, error, blocked)', labelNames: ['tool', 'status'] as const, registers: [this.registry] });
  readonly toolSeconds = new Histogram({ name: 'warden_tool_call_duration_seconds', help: 'Duration of tool calls that ran', labelNames: ['tool'] as const, buckets: INTERACTIVE_BUCKETS, registers: [this.registry] });
  readonly approvalsRequested = new Counter({ name: 'warden_approvals_requested_total', help: 'Approval requests opened', labelNames: ['kind'] as const, registers: [this.registry] });
  readonly approvalsDecided = new Counter({ name: 'warden_approvals_decided_total', help: 'Approval requests closed, by outcome', labelNames: ['kind', 'outcome'] as const, registers: [this.registry] });
  readonly decisionSeconds = new Histogram({ name: 'warden_approval_decision_seconds', help: 'Time from an approval request to its closing', labelNames: ['kind', 'outcome'] as const, buckets: DECISION_BUCKETS, registers: [this.registry] });
  readonly modelRequests = new Counter({ name: 'warden_model_requests_total', help: 'Model API requests (each attempt) by outcome', labelNames: ['provider', 'model', 'outcome'] as const, registers: [this.registry] });
  readonly modelSeconds = new Histogram({ name: 'warden_model_request_duration_seconds', help: 'Model API request latency (each attempt)', labelNames: ['provider', 'model'] as const, buckets: INTERACTIVE_BUCKETS, registers: [this.registry] });
  readonly modelTokens = new Counter({ name: 'warden_model_tokens_total', help: 'Tokens models used, by kind (input, output, cached, reasoning; cached and reasoning are parts of input and output)', labelNames: ['agent', 'provider', 'model', 'kind'] as const, registers: [this.registry] });
  readonly modelCost = new Counter({ name: 'warden_model_cost_usd_total', help: 'What model calls cost in US dollars, at the configured or built-in price (calls with no known price are not in it)', labelNames: ['agent', 'provider', 'model'] as const, registers: [this.registry] });
  readonly modelCallsUnpriced = new Counter({ name: 'warden_model_calls_price_unknown_total', help: 'Model calls recorded with no known price', labelNames: ['agent', 'provider', 'model'] as const, registers: [this.registry] });
  readonly unhandledRejections = new Counter({ name: 'warden_unhandled_rejections_total', help: 'Promise rejections nothing handled (logged; Warden kept running)', registers: [this.registry] });
  readonly inboundRefused = new Counter({ name: 'warden_inbound_refused_total', help: 'Inbound messages refused before any model call, by reason (access rule, bot, loop breaker)', labelNames: ['provider', 'reason'] as const, registers: [this.registry] });
  readonly rateLimited = new Counter({ name: 'warden_rate_limited_total', help: 'Inbound messages over a rate limit, by bucket (sender, channel, agent)', labelNames: ['provider', 'bucket'] as const, registers: [this.registry] });
  readonly sandboxEgress = new Counter({ name: 'warden_sandbox_egress_total', help: 'Sandboxed commands\' network connections through the egress proxy, by decision (allowed, asked-allowed, asked-denied, refused)', labelNames: ['decision'] as const, registers: [this.registry] });
  readonly storeSeconds = new Histogram({ name: 'warden_store_operation_seconds', help: 'Store operation latency', labelNames: ['operation'] as const, buckets: STORE_BUCKETS, registers: [this.registry] });

  constructor() {
    const sources = this.sources;
    new Gauge({
      name: 'warden_approvals_pending',
      help: 'Approval requests waiting for a decision',
      registers: [this.registry],
      async collect() {
        this.set(await sum(sources, (s) => s.approvalsPending()));
      },
    });
    new Gauge({
      name: 'warden_queue_depth',
      help: 'Session queue: sessions with a lane, turns running, messages waiting',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const q = [...sources].map(safeQueue);
        this.set({ state: 'sessions' }, q.reduce((n, s) => n + s.sessions, 0));
        this.set({ state: 'running' }, q.reduce((n, s) => n + s.running, 0));
        this.set({ state: 'waiting' }, q.reduce((n, s) => n + s.pending, 0));
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Adds a running instance's gauges until the returned function is called. */
  addSource(source: GaugeSource): () => void {
    this.sources.add(source);
    return () => void this.sources.delete(source);
  }

  turnEnded(status: string, seconds: number): void {
    this.turns.inc({ status });
    this.turnSeconds.observe({ status }, seconds);
  }

  modelRequest(provider: string, model: string, outcome: string, seconds: number): void {
    const m = this.modelLabel.value(model);
    this.modelRequests.inc({ provider, model: m, outcome });
    this.modelSeconds.observe({ provider, model: m }, seconds);
  }

  /** One model call's usage (tokens as reported) and its cost in nano-dollars, undefined when its price is unknown. */
  modelUsage(agent: string, provider: string, model: string, usage: { inputTokens: number; outputTokens: number; cachedInputTokens?: number | undefined; reasoningTokens?: number | undefined }, costNano: number | undefined): void {
    const labels = { agent: this.agentLabel.value(agent), provider, model: this.modelLabel.value(model) };
    this.modelTokens.inc({ ...labels, kind: 'input' }, usage.inputTokens);
    this.modelTokens.inc({ ...labels, kind: 'output' }, usage.outputTokens);
    if (usage.cachedInputTokens) this.modelTokens.inc({ ...labels, kind: 'cached' }, usage.cachedInputTokens);
    if (usage.reasoningTokens) this.modelTokens.inc({ ...labels, kind: 'reasoning' }, usage.reasoningTokens);
    if (costNano === undefined) this.modelCallsUnpriced.inc(labels);
    else this.modelCost.inc(labels, costNano / 1e9);
  }

  /** Times `fn` as store operation `operation` (rethrowing what it throws). */
  async timeStoreAsync<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    const end = this.storeSeconds.startTimer({ operation });
    try {
      return await fn();
    } finally {
      end();
    }
  }

  timeStore<T>(operation: string, fn: () => T): T {
    const end = this.storeSeconds.startTimer({ operation });
    try {
      return fn();
    } finally {
      end();
    }
  }

  /** Counts the tool calls and approvals `bus` reports until the returned function is called. */
  observe(bus: EventBus): () => void {
    const tool = (name: string) => this.toolLabel.value(name);
    const offs = [
      bus.on('tool.execution.completed', (e) => {
        this.toolCalls.inc({ tool: tool(e.tool), status: e.isError ? 'error' : 'ok' });
        this.toolSeconds.observe({ tool: tool(e.tool) }, e.durationMs / 1000);
      }),
      bus.on('tool.execution.error', (e) => {
        this.toolCalls.inc({ tool: tool(e.tool), status: 'error' });
        this.toolSeconds.observe({ tool: tool(e.tool) }, e.durationMs / 1000);
      }),
      bus.on('tool.execution.blocked', (e) => this.toolCalls.inc({ tool: tool(e.tool), status: 'blocked' })),
      bus.on('approval.requested', ({ request }) => this.approvalsRequested.inc({ kind: request.kind })),
      bus.on('approval.closed', ({ request }) => {
        const outcome = request.status;
        this.approvalsDecided.inc({ kind: request.kind, outcome });
        const at = request.decidedAt ?? Date.now();
        this.decisionSeconds.observe({ kind: request.kind, outcome }, Math.max(0, at - request.createdAt) / 1000);
      }),
    ];
    return () => offs.forEach((off) => off());
  }
}

async function sum(sources: Set<GaugeSource>, read: (s: GaugeSource) => number | Promise<number>): Promise<number> {
  let n = 0;
  for (const s of sources) {
    try {
      n += await read(s);
    } catch {
      // An instance mid-stop (its store closed) adds nothing.
    }
  }
  return n;
}

function safeQueue(source: GaugeSource): { sessions: number; running: number; pending: number } {
  try {
    return source.queue();
  } catch {
    return { sessions: 0, running: 0, pending: 0 };
  }
}

/** The process's metrics: what `/metrics` serves and the hooks report to. */
export const metrics = new WardenMetrics();

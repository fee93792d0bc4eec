// The ask_user tool's questions waiting for a person. The prompt is posted through the
// conversation's adapter (buttons, and a form for free text); clicks and forms land here and are
// checked against the question (the person asked or an approver, from the conversation it was asked in, still open, not expired). Like
// an approval, the tool waits `approvals.waitSec` for the answer; then its turn ends with
// `pending` — the conversation is not held — and the answer, or `no_answer` at the question's
// timeout, reaches the agent through the follow-up turn deferred approvals use (the gateway's
// followUp, behind the session's queue, which on a shared store runs holding the session's lease).
//
// Questions live in the store (`user_questions`, see user-questions-store.ts), not in this
// process: a click that lands on another instance sharing the store, or on the next start,
// finds the question and is checked there. Each answer is one conditional write, so two clicks
// on two instances record one; the question ends once (answered, expired, stopped), and its
// outcome is handed over once — to the asking turn if it still waits inline in a live process,
// else by one follow-up turn from whichever process ended it (or a sweep, for one ended while
// no process could queue it). Deadlines are timed by the asking process and by every process's
// sweep, so a question that expired while Warden was down gets its `no_answer` at the next start.
import { randomUUID } from 'node:crypto';
import { originForAudit, type ClickOrigin } from '../approvals/click-origin.js';
import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import type { TranscriptStore } from '../agent/types.js';
import type { ChatAdapter } from '../gateway/types.js';
import { answerDanglingCall, replyTargetOf, type FollowUpTurn } from '../gateway/deferred-calls.js';
import type { TurnContext } from '../policy/context.js';
import type { AuditLog } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { AskUserOutcome, AskUserSpec } from '../tools/core/ask-user/ask-user.js';
import { refreshTurnContext } from '../turn/turn-context.js';
import { background } from '../util/background.js';
import { ASK_MAX_CHARS } from '../../adapters/common/ask-user-prompt.js';
import { answerRefusal, outcomeOf, UserQuestionStore, type AnswerRefusal, type StoredQuestion } from './user-questions-store.js';

const NOT_FOUND = 'This question is no longer open (answered, expired, or withdrawn).';
const NOT_YOURS = 'Only the person the assistant asked (or an approver) can answer this question.';
const ELSEWHERE = 'This question can only be answered in the conversation where it was asked. Nothing was recorded.';
const REFUSALS: Record<AnswerRefusal, string> = { 'not-found': NOT_FOUND, 'not-yours': NOT_YOURS, answered: 'This question is already answered.', elsewhere: ELSEWHERE };
/** How often a process looks for deadlines no timer of its own covers, and outcomes nobody handed over. */
const DEFAULT_SWEEP_MS = 15_000;
/** How often an inline wait looks whether another instance ended its question. */
const DEFAULT_POLL_MS = 1_000;
/** Two clicks changing one question at once: the loser reads it again, this many times at most. */
const ANSWER_ATTEMPTS = 8;
/** Ended questions are kept this long (a late click is told it is no longer open either way). */
const KEEP_ENDED_MS = 24 * 3600_000;

export interface UserQuestionsDeps {
  db: Db;
  adapter: (provider: string) => ChatAdapter | undefined;
  /** How long the tool's turn waits for the answer (approvals.waitSec, read at each call). */
  waitMs: () => number;
  /**
   * Whether someone besides the person asked may answer: the platform's approvers, decided by
   * the approvals' own `approverRefusal` at each click. Absent: the person asked only.
   */
  alsoMayAnswer?: ((provider: string, userId: string) => boolean) | undefined;
  /** The question's timeout; tests shorten it. Default: the validated timeoutSeconds. */
  timeoutMs?: ((timeoutSec: number) => number) | undefined;
  /** This process among those sharing the store (the cluster's instance id); default: one of its own. */
  instance?: string | undefined;
  /** Whether the process `instance` runs (the cluster's lease); default: only this one. */
  ownerAlive?: ((instance: string) => Promise<boolean>) | undefined;
  /** The config current at delivery: a follow-up's context is rebuilt under it. Absent: the asking turn's. */
  config?: (() => WardenConfig) | undefined;
  /** Where refused clicks from another conversation are recorded. */
  audit?: Pick<AuditLog, 'recordOrLog'> | undefined;
  /** The transcripts, to answer the tool call a turn that died mid-wait left open before the follow-up. */
  transcripts?: TranscriptStore | undefined;
  now?: () => number;
  sweepMs?: number | undefined;
  pollMs?: number | undefined;
}

export class UserQuestions {
  readonly store: UserQuestionStore;
  private readonly instance: string;
  /** The inline waits of this process's turns, by question id. */
  private readonly waiters = new Map<string, (outcome: AskUserOutcome) => void>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private sweeper: NodeJS.Timeout | undefined;
  private followUp: ((turn: FollowUpTurn) => boolean) | undefined;
  private accepting: () => boolean = () => true;
  private stopped = false;

  constructor(private readonly deps: UserQuestionsDeps) {
    this.store = new UserQuestionStore(deps.db);
    this.instance = deps.instance ?? `local-${randomUUID()}`;
  }

  /** The gateway's follow-up queue, bound once it exists, and whether it takes work. */
  bindFollowUp(followUp: (turn: FollowUpTurn) => boolean, accepting?: () => boolean): void {
    this.followUp = followUp;
    if (accepting) this.accepting = accepting;
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * Times the deadlines of the open questions stored before this start, hands over what ended
   * while no process could (expired while Warden was down, answered elsewhere), and sweeps now
   * and then for the deadlines of questions other processes asked.
   */
  async start(): Promise<void> {
    this.stopped = false;
    for (const q of await this.store.open()) this.schedule(q);
    await this.sweep();
    this.sweeper ??= setInterval(() => background(this.sweep(), 'ask_user questions not swept'), this.deps.sweepMs ?? DEFAULT_SWEEP_MS);
    this.sweeper.unref?.();
  }

  /** Stops the timers; the questions stay stored for the next start or another instance. */
  stop(): void {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** Ends the overdue questions and hands over the outcomes nobody handed over. */
  async sweep(): Promise<void> {
    if (this.stopped) return;
    const now = this.now();
    for (const q of await this.store.overdue(now)) await this.expire(q.id);
    for (const q of await this.store.undelivered()) await this.deliver(q);
    await this.store.prune(now - KEEP_ENDED_MS);
  }

  async ask(input: { spec: AskUserSpec; turn: TurnContext; sessionKey: string; toolCallId: string; signal?: AbortSignal | undefined }): Promise<AskUserOutcome> {
    const { turn } = input;
    if (turn.senderId === undefined) return { status: 'error', error: 'there is no person in this conversation to ask (a scheduled or system turn); decide yourself' };
    const target = replyTargetOf(turn);
    if (!target) return { status: 'error', error: 'this turn has no conversation to ask in' };
    const adapter = this.deps.adapter(target.provider);
    if (!adapter?.askUser) return { status: 'error', error: `${target.provider} cannot show questions here; ask in plain words instead` };
    const id = randomUUID();
    const timeoutMs = this.deps.timeoutMs?.(input.spec.timeoutSec) ?? input.spec.timeoutSec * 1000;
    const createdAt = this.now();
    const q: StoredQuestion = {
      id,
      provider: target.provider,
      requesterId: turn.senderId,
      agentId: turn.agentId,
      sessionKey: input.sessionKey,
      toolCallId: input.toolCallId,
      spec: input.spec,
      turn,
      target,
      answers: input.spec.questions.map(() => null),
      state: 'open',
      owner: this.instance,
      delivered: false,
      version: 0,
      createdAt,
      expiresAt: createdAt + timeoutMs,
    };
    // The waiter exists before the row: an answer can never find the row owned here without it.
    const inline = new Promise<AskUserOutcome>((resolve) => this.waiters.set(id, resolve));
    try {
      await this.store.insert(q);
    } catch (err) {
      this.waiters.delete(id);
      return { status: 'error', error: `the question could not be stored: ${(err as Error).message}` };
    }
    this.schedule(q);
    try {
      await adapter.askUser(target, { id, requesterId: q.requesterId, questions: input.spec.questions });
    } catch (err) {
      this.waiters.delete(id);
      this.forget(id);
      await this.store.remove(id).catch((e: unknown) => log.warn({ err: e, question: id }, 'ask_user: an unposted question could not be removed'));
      return { status: 'error', error: `the question could not be posted: ${(err as Error).message}` };
    }
    log.info({ question: id, provider: q.provider, count: input.spec.questions.length }, 'ask_user question posted');
    const timers: NodeJS.Timeout[] = [];
    const waited = new Promise<'waited'>((resolve) => timers.push(setTimeout(() => resolve('waited'), Math.max(0, this.deps.waitMs()))));
    // Another instance may end the question (a click there, its sweep): looked for while waiting.
    const poll = setInterval(() => background(this.pickUp(id), 'ask_user question not looked at'), this.deps.pollMs ?? DEFAULT_POLL_MS);
    poll.unref?.();
    const aborted = new Promise<'aborted'>((resolve) => {
      if (input.signal?.aborted) resolve('aborted');
      input.signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
    const first = await Promise.race([inline, waited, aborted]);
    for (const t of timers) clearTimeout(t);
    clearInterval(poll);
    this.waiters.delete(id);
    if (typeof first === 'object') return first;
    if (first === 'aborted') {
      // A stopped turn takes its question with it: no follow-up for a turn the person stopped.
      if (!(await this.store.stop(id, this.now(), this.instance))) await this.store.claimDelivery(id);
      this.forget(id);
      return { status: 'no_answer', reason: 'The turn was stopped.' };
    }
    if (await this.store.release(id, this.instance)) return { status: 'pending', questionId: id, expiresAt: q.expiresAt };
    // Ended meanwhile (elsewhere, not yet seen by the poll): the outcome is still this turn's to take.
    const ended = await this.store.get(id);
    if (ended && ended.state !== 'open' && (await this.store.claimDelivery(id))) return outcomeOf(ended);
    return { status: 'pending', questionId: id, expiresAt: q.expiresAt };
  }

  /** An inline wait's look: the question ended elsewhere → its outcome, taken once. */
  private async pickUp(id: string): Promise<void> {
    const waiter = this.waiters.get(id);
    if (!waiter) return;
    const q = await this.store.get(id);
    if (!q || q.state === 'open' || q.delivered) return;
    if (this.waiters.has(id) && (await this.store.claimDelivery(id))) waiter(outcomeOf(q));
  }

  private schedule(q: Pick<StoredQuestion, 'id' | 'expiresAt'>): void {
    if (this.stopped || this.timers.has(q.id)) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(q.id);
        background(this.expire(q.id), 'ask_user question not expired', { fields: { question: q.id } });
      },
      Math.max(0, q.expiresAt - this.now()),
    );
    timer.unref?.();
    this.timers.set(q.id, timer);
  }

  private forget(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  private async expire(id: string): Promise<void> {
    if (!(await this.store.expire(id, this.now(), this.instance))) {
      const q = await this.store.get(id);
      // A timer that fired early by this clock: again later.
      if (q?.state === 'open') this.schedule(q);
      return;
    }
    this.forget(id);
    log.info({ question: id }, 'ask_user question expired');
    const q = await this.store.get(id);
    if (q) await this.deliver(q);
  }

  /**
   * Hands an ended question's outcome over once: to this process's waiting turn, or — when no
   * live process waits inline for it — to the agent in a follow-up turn. A process that cannot
   * queue one leaves it for another's (or the next start's) sweep.
   */
  private async deliver(q: StoredQuestion): Promise<void> {
    if (q.delivered || q.state === 'open' || q.state === 'stopped') return;
    const waiter = this.waiters.get(q.id);
    if (q.owner === this.instance && waiter) {
      if (await this.store.claimDelivery(q.id)) waiter(outcomeOf(q));
      return;
    }
    // Its turn still waits in another live process: that process's look takes it.
    if (q.owner !== undefined && q.owner !== this.instance && (await (this.deps.ownerAlive?.(q.owner) ?? Promise.resolve(false)))) return;
    if (this.stopped || !this.followUp || !this.accepting()) return;
    if (!(await this.store.claimDelivery(q.id))) return;
    const context = this.deps.config ? refreshTurnContext(this.deps.config(), q.turn) : q.turn;
    const replyTo = replyTargetOf(context) ?? q.target;
    const transcripts = this.deps.transcripts;
    // A turn that died while it waited inline left its call unanswered: it gets its pending answer first.
    const before = q.owner !== undefined && transcripts ? () => answerDanglingCall(transcripts, { approvalId: q.id, sessionKey: q.sessionKey, toolCallId: q.toolCallId }, pendingText(q)) : undefined;
    const dangling = before ? { approvalId: q.id, toolCallId: q.toolCallId, pendingText: pendingText(q) } : undefined;
    const queued = this.followUp({ sessionKey: q.sessionKey, agentId: context.agentId, context, replyTo, text: followUpText(q, outcomeOf(q)), before, dangling });
    if (queued) log.info({ question: q.id, sessionKey: q.sessionKey, state: q.state }, 'ask_user follow-up queued');
    else log.warn({ question: q.id, sessionKey: q.sessionKey }, 'ask_user follow-up could not be queued');
  }

  /**
   * Records one answer: read, check, one conditional write on the version read. A write that
   * loses (another click changed the question first) reads again and is checked again.
   */
  private async record(provider: string, click: { id: string; question: number; userId: string; origin: ClickOrigin | undefined }, answerOf: (q: StoredQuestion) => string | undefined): Promise<{ ok: true; text: string; summary: string } | { ok: false; text: string }> {
    for (let attempt = 0; attempt < ANSWER_ATTEMPTS; attempt++) {
      const q = await this.store.get(click.id);
      const refused = await this.refusal(provider, q, click);
      if (refused) return { ok: false, text: REFUSALS[refused] };
      const value = answerOf(q!);
      if (value === undefined) return { ok: false, text: NOT_FOUND };
      const answers = q!.answers.map((a, i) => (i === click.question ? [value] : a));
      const remaining = answers.filter((a) => a === null).length;
      const now = this.now();
      if (!(await this.store.answer(q!.id, q!.version, answers, remaining === 0, now, this.instance))) continue;
      const s = q!.spec.questions[click.question]!;
      if (remaining === 0) {
        this.forget(q!.id);
        await this.deliver({ ...q!, answers, state: 'answered', version: q!.version + 1 });
      }
      return { ok: true, text: remaining === 0 ? 'Thanks, your answer was passed on.' : `Recorded. ${remaining} more question${remaining === 1 ? '' : 's'} to answer.`, summary: `${s.header}: ${s.question}\nAnswered: ${value}` };
    }
    return { ok: false, text: 'The question changed while your answer was recorded; please try again.' };
  }

  /** The one decision for every click and form on a question (answerRefusal); refusals of people are logged, misplaced clicks audited. */
  private async refusal(provider: string, q: StoredQuestion | undefined, click: { question: number; userId: string; origin: ClickOrigin | undefined }): Promise<AnswerRefusal | undefined> {
    const refused = answerRefusal(q, { provider, question: click.question, userId: click.userId, origin: click.origin, now: this.now() }, (p, u) => this.deps.alsoMayAnswer?.(p, u) ?? false);
    if (refused === 'not-yours') log.info({ provider, userId: click.userId, question: q?.id }, 'ask_user answer refused: not the person asked');
    if (refused === 'elsewhere') {
      log.warn({ provider, userId: click.userId, question: q?.id, origin: originForAudit(click.origin) }, 'ask_user answer refused: not from the conversation asked in');
      await this.deps.audit?.recordOrLog({ type: 'ask_user.refused', subject: q?.id ?? '', actor: `${provider}:${click.userId}`, sessionKey: q?.sessionKey, data: { reason: 'not from the conversation the question was asked in', origin: originForAudit(click.origin) } });
    }
    return refused;
  }

  /** The adapter-facing handlers of one platform. */
  handlersFor(provider: string) {
    return {
      choose: async ({ id, question, option, userId, origin }: { id: string; question: number; option: number; userId: string; origin: ClickOrigin | undefined }) =>
        this.record(provider, { id, question, userId, origin }, (q) => q.spec.questions[question]!.options[option]?.label),
      open: async ({ id, question, userId, origin }: { id: string; question: number; userId: string; origin: ClickOrigin | undefined }) => {
        const q = await this.store.get(id);
        const refused = await this.refusal(provider, q, { question, userId, origin });
        return refused ? { ok: false as const, text: REFUSALS[refused] } : { ok: true as const, title: q!.spec.questions[question]!.header };
      },
      submit: async ({ id, question, userId, value, origin }: { id: string; question: number; userId: string; value: string; origin: ClickOrigin | undefined }) => {
        const answer = value.trim();
        // Checked first: a refused person learns nothing about the question from the value's checks.
        const q = await this.store.get(id);
        const refused = await this.refusal(provider, q, { question, userId, origin });
        if (refused) return { ok: false as const, text: REFUSALS[refused] };
        if (answer === '') return { ok: false as const, text: 'An empty answer was not recorded.' };
        // The forms cap it; a forged submission gets the same limit, refused rather than cut.
        if (answer.length > ASK_MAX_CHARS) return { ok: false as const, text: `The answer is ${answer.length} characters; at most ${ASK_MAX_CHARS}. It was not recorded.` };
        return this.record(provider, { id, question, userId, origin }, () => answer);
      },
    };
  }
}

/** The tool result a call whose turn died while it waited would have had. */
function pendingText(q: Pick<StoredQuestion, 'id' | 'expiresAt'>): string {
  return JSON.stringify({ status: 'pending', question: q.id, expiresAt: new Date(q.expiresAt).toISOString(), note: 'The turn that asked ended while the question waited; its answer (or no_answer) follows in a message.' });
}

/** What the agent reads when the answer (or its absence) comes after its turn ended. */
export function followUpText(entry: Pick<StoredQuestion, 'id' | 'toolCallId'>, outcome: AskUserOutcome): string {
  const head = `[Question ${entry.id}] Your earlier ask_user call (call ${entry.toolCallId})`;
  if (outcome.status === 'answered') return `${head} was answered: ${JSON.stringify({ status: 'answered', answers: { answers: outcome.answers } })}\nContinue the task with this answer.`;
  return `${head} got no answer: ${JSON.stringify({ status: 'no_answer' })}. Continue with your best judgment.`;
}

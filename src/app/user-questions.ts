// The ask_user tool's questions waiting for a person. The prompt is posted through the
// conversation's adapter (buttons, and a form for free text); clicks and forms land here and are
// checked against the question (the person asked, still open). Like an approval, the tool waits
// `approvals.waitSec` for the answer; then its turn ends with `pending` — the conversation is not
// held — and the answer, or `no_answer` at the question's timeout, reaches the agent through the
// follow-up turn deferred approvals use (the gateway's followUp, behind the session's queue).
// Questions live in this process: a restart drops them (the follow-up never comes).
import { randomUUID } from 'node:crypto';
import { log } from '../log/log.js';
import type { ChatAdapter, ReplyTarget } from '../gateway/types.js';
import { replyTargetOf, type FollowUpTurn } from '../gateway/deferred-calls.js';
import type { TurnContext } from '../policy/context.js';
import type { AskUserOutcome, AskUserSpec } from '../tools/core/ask-user/ask-user.js';
import { ASK_MAX_CHARS } from '../../adapters/common/ask-user-prompt.js';

const NOT_FOUND = 'This question is no longer open (answered, expired, or Warden restarted).';
const NOT_YOURS = 'Only the person the assistant asked (or an approver) can answer this question.';

interface Pending {
  id: string;
  provider: string;
  requesterId: string;
  spec: AskUserSpec;
  turn: TurnContext;
  sessionKey: string;
  toolCallId: string;
  target: ReplyTarget;
  answers: Array<string[] | undefined>;
  expiresAt: number;
  timer: NodeJS.Timeout;
  /** Set while the tool still waits inline; absent once its turn ended (`pending`). */
  waiter?: ((outcome: AskUserOutcome) => void) | undefined;
}

export interface UserQuestionsDeps {
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
  now?: () => number;
}

export class UserQuestions {
  private readonly pending = new Map<string, Pending>();
  private followUp: ((turn: FollowUpTurn) => boolean) | undefined;

  constructor(private readonly deps: UserQuestionsDeps) {}

  /** The gateway's follow-up queue, bound once it exists. */
  bindFollowUp(followUp: (turn: FollowUpTurn) => boolean): void {
    this.followUp = followUp;
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
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
    const entry: Pending = {
      id,
      provider: target.provider,
      requesterId: turn.senderId,
      spec: input.spec,
      turn,
      sessionKey: input.sessionKey,
      toolCallId: input.toolCallId,
      target,
      answers: input.spec.questions.map(() => undefined),
      expiresAt: this.now() + timeoutMs,
      timer: setTimeout(() => this.expire(id), timeoutMs),
    };
    entry.timer.unref?.();
    this.pending.set(id, entry);
    const inline = new Promise<AskUserOutcome>((resolve) => (entry.waiter = resolve));
    try {
      await adapter.askUser(target, { id, requesterId: entry.requesterId, questions: input.spec.questions });
    } catch (err) {
      this.drop(id);
      return { status: 'error', error: `the question could not be posted: ${(err as Error).message}` };
    }
    log.info({ question: id, provider: entry.provider, count: input.spec.questions.length }, 'ask_user question posted');
    let waitTimer: NodeJS.Timeout | undefined;
    const waited = new Promise<AskUserOutcome>((resolve) => {
      waitTimer = setTimeout(() => resolve({ status: 'pending', questionId: id, expiresAt: entry.expiresAt }), Math.max(0, this.deps.waitMs()));
    });
    const aborted = new Promise<AskUserOutcome>((resolve) => {
      if (input.signal?.aborted) resolve({ status: 'no_answer', reason: 'The turn was stopped.' });
      input.signal?.addEventListener('abort', () => resolve({ status: 'no_answer', reason: 'The turn was stopped.' }), { once: true });
    });
    const outcome = await Promise.race([inline, waited, aborted]);
    clearTimeout(waitTimer);
    entry.waiter = undefined;
    // A stopped turn takes its question with it: no follow-up for a turn the person stopped.
    if (outcome.status === 'no_answer') this.drop(id);
    return outcome;
  }

  private drop(id: string): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.pending.delete(id);
  }

  private expire(id: string): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    log.info({ question: id }, 'ask_user question expired');
    this.finish(entry, { status: 'no_answer', reason: 'The person did not answer before the question expired.' });
  }

  /** Hands the outcome to the waiting tool, or to the agent in a follow-up turn. */
  private finish(entry: Pending, outcome: AskUserOutcome): void {
    if (entry.waiter) return entry.waiter(outcome);
    const text = followUpText(entry, outcome);
    const queued = this.followUp?.({ sessionKey: entry.sessionKey, agentId: entry.turn.agentId, context: entry.turn, replyTo: entry.target, text }) ?? false;
    if (!queued) log.warn({ question: entry.id, sessionKey: entry.sessionKey }, 'ask_user follow-up could not be queued');
  }

  private check(provider: string, id: string, question: number, userId: string): { ok: true; entry: Pending } | { ok: false; text: string } {
    const entry = this.pending.get(id);
    if (!entry || entry.provider !== provider || entry.expiresAt <= this.now() || question >= entry.spec.questions.length) return { ok: false, text: NOT_FOUND };
    if (entry.requesterId !== userId && !(this.deps.alsoMayAnswer?.(provider, userId) ?? false)) {
      log.info({ provider, userId, question: id }, 'ask_user answer refused: not the person asked');
      return { ok: false, text: NOT_YOURS };
    }
    if (entry.answers[question] !== undefined) return { ok: false, text: 'This question is already answered.' };
    return { ok: true, entry };
  }

  private record(entry: Pending, question: number, value: string): { ok: true; text: string; summary: string } {
    entry.answers[question] = [value];
    const q = entry.spec.questions[question]!;
    const remaining = entry.answers.filter((a) => a === undefined).length;
    if (remaining === 0) {
      this.drop(entry.id);
      const answers = Object.fromEntries(entry.spec.questions.map((s, i) => [s.id, entry.answers[i]!]));
      this.finish(entry, { status: 'answered', answers });
    }
    return { ok: true, text: remaining === 0 ? 'Thanks, your answer was passed on.' : `Recorded. ${remaining} more question${remaining === 1 ? '' : 's'} to answer.`, summary: `${q.header}: ${q.question}\nAnswered: ${value}` };
  }

  /** The adapter-facing handlers of one platform. */
  handlersFor(provider: string) {
    return {
      choose: async ({ id, question, option, userId }: { id: string; question: number; option: number; userId: string }) => {
        const checked = this.check(provider, id, question, userId);
        if (!checked.ok) return checked;
        const label = checked.entry.spec.questions[question]!.options[option]?.label;
        if (label === undefined) return { ok: false as const, text: NOT_FOUND };
        return this.record(checked.entry, question, label);
      },
      open: async ({ id, question, userId }: { id: string; question: number; userId: string }) => {
        const checked = this.check(provider, id, question, userId);
        return checked.ok ? { ok: true as const, title: checked.entry.spec.questions[question]!.header } : checked;
      },
      submit: async ({ id, question, userId, value }: { id: string; question: number; userId: string; value: string }) => {
        const checked = this.check(provider, id, question, userId);
        if (!checked.ok) return checked;
        const answer = value.trim();
        if (answer === '') return { ok: false as const, text: 'An empty answer was not recorded.' };
        // The forms cap it; a forged submission gets the same limit, refused rather than cut.
        if (answer.length > ASK_MAX_CHARS) return { ok: false as const, text: `The answer is ${answer.length} characters; at most ${ASK_MAX_CHARS}. It was not recorded.` };
        return this.record(checked.entry, question, answer);
      },
    };
  }
}

/** What the agent reads when the answer (or its absence) comes after its turn ended. */
export function followUpText(entry: Pick<Pending, 'id' | 'toolCallId'>, outcome: AskUserOutcome): string {
  const head = `[Question ${entry.id}] Your earlier ask_user call (call ${entry.toolCallId})`;
  if (outcome.status === 'answered') return `${head} was answered: ${JSON.stringify({ status: 'answered', answers: { answers: outcome.answers } })}\nContinue the task with this answer.`;
  return `${head} got no answer: ${JSON.stringify({ status: 'no_answer' })}. Continue with your best judgment.`;
}

import { jsonResult } from '../../result.js';
import type { ToolImplementation } from '../../types.js';
import type { TurnContext } from '../../../policy/context.js';
import { askUserParameters as parameters } from './ask-user-schema.js';

/**
 * `ask_user` (OpenClaw's tool of that name): the model asks the person who wrote to it one to
 * three questions, each with two to five options shown as native buttons (and an "Other…" free
 * text answer through a form). Only that person can answer. The tool waits as long as an
 * approval does (`approvals.waitSec`); an answer within that wait is its result. After it the
 * turn ends with `status: "pending"` — the conversation is not held — and the answer, or
 * `no_answer` when the question's timeout passes, comes to the agent in a follow-up turn.
 */

/** What every platform can show: Discord button labels ≤ 80, Slack button text ≤ 75. */
export const ASK_USER_LIMITS = {
  questions: { min: 1, max: 3 },
  options: { min: 2, max: 5 },
  idChars: 32,
  headerChars: 12,
  questionChars: 300,
  descriptionChars: 100,
  /** The label on a button: the smallest platform limit wins where the provider is unknown. */
  labelChars: { discord: 80, slack: 75, web: 80 } as Record<string, number>,
  defaultLabelChars: 75,
  timeoutSec: { min: 30, max: 3600, default: 900 },
} as const;

export interface AskUserOption {
  label: string;
  description?: string | undefined;
}
export interface AskUserQuestion {
  id: string;
  header: string;
  question: string;
  options: AskUserOption[];
}
export interface AskUserSpec {
  questions: AskUserQuestion[];
  timeoutSec: number;
}

const ID = /^[a-z][a-z0-9_]*$/;

/** Checks the model's arguments against the platform's limits; the error names the key path. */
export function validateAskUser(raw: unknown, provider: string): { ok: true; value: AskUserSpec } | { ok: false; error: string } {
  const L = ASK_USER_LIMITS;
  const labelMax = L.labelChars[provider] ?? L.defaultLabelChars;
  const fail = (error: string) => ({ ok: false as const, error });
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('arguments must be an object {questions, timeoutSeconds?}');
  const args = raw as Record<string, unknown>;
  for (const key of Object.keys(args)) if (key !== 'questions' && key !== 'timeoutSeconds') return fail(`${key}: unknown key (allowed: questions, timeoutSeconds)`);
  const qs = args.questions;
  if (!Array.isArray(qs)) return fail('questions: must be an array of 1-3 questions');
  if (qs.length < L.questions.min || qs.length > L.questions.max) return fail(`questions: ${qs.length} given; ask 1-3 questions`);
  let timeoutSec: number = L.timeoutSec.default;
  if (args.timeoutSeconds !== undefined) {
    const t = args.timeoutSeconds;
    if (typeof t !== 'number' || !Number.isInteger(t)) return fail('timeoutSeconds: must be an integer number of seconds');
    timeoutSec = Math.min(L.timeoutSec.max, Math.max(L.timeoutSec.min, t));
  }
  const questions: AskUserQuestion[] = [];
  const ids = new Set<string>();
  for (const [i, q] of qs.entries()) {
    const at = `questions[${i}]`;
    if (typeof q !== 'object' || q === null || Array.isArray(q)) return fail(`${at}: must be an object {id, header, question, options}`);
    const o = q as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      if (key === 'multiSelect') {
        if (o.multiSelect === true) return fail(`${at}.multiSelect: not supported here; ask for one choice (or ask separate questions)`);
        continue;
      }
      if (!['id', 'header', 'question', 'options'].includes(key)) return fail(`${at}.${key}: unknown key (allowed: id, header, question, options)`);
    }
    if (typeof o.id !== 'string' || !ID.test(o.id) || o.id.length > L.idChars) return fail(`${at}.id: must be snake_case (a-z, 0-9, _), 1-${L.idChars} characters`);
    if (ids.has(o.id)) return fail(`${at}.id: "${o.id}" is used twice; ids must be unique`);
    ids.add(o.id);
    const text = (v: unknown, path: string, max: number) => (typeof v !== 'string' || v.trim() === '' ? `${path}: must be a non-empty string` : v.length > max ? `${path}: ${v.length} characters; at most ${max}` : undefined);
    const bad = text(o.header, `${at}.header`, L.headerChars) ?? text(o.question, `${at}.question`, L.questionChars);
    if (bad) return fail(bad);
    if (!Array.isArray(o.options)) return fail(`${at}.options: must be an array of 2-5 options`);
    if (o.options.length < L.options.min || o.options.length > L.options.max) return fail(`${at}.options: ${o.options.length} given; offer 2-5 options (free text "Other" is added automatically)`);
    const options: AskUserOption[] = [];
    const labels = new Set<string>();
    for (const [j, opt] of o.options.entries()) {
      const ap = `${at}.options[${j}]`;
      if (typeof opt !== 'object' || opt === null || Array.isArray(opt)) return fail(`${ap}: must be an object {label, description?}`);
      const p = opt as Record<string, unknown>;
      for (const key of Object.keys(p)) if (key !== 'label' && key !== 'description') return fail(`${ap}.${key}: unknown key (allowed: label, description)`);
      const badLabel = text(p.label, `${ap}.label`, labelMax);
      if (badLabel) return fail(provider in L.labelChars && typeof p.label === 'string' && p.label.length > labelMax ? `${badLabel} (${provider} button limit)` : badLabel);
      const label = p.label as string;
      if (labels.has(label)) return fail(`${ap}.label: "${label}" is offered twice`);
      if (/^other\W*$/i.test(label.trim())) return fail(`${ap}.label: do not add an "Other" option; free text is offered automatically`);
      labels.add(label);
      if (p.description !== undefined) {
        const badDesc = text(p.description, `${ap}.description`, L.descriptionChars);
        if (badDesc) return fail(badDesc);
      }
      options.push({ label, ...(p.description !== undefined ? { description: p.description as string } : {}) });
    }
    questions.push({ id: o.id, header: o.header as string, question: o.question as string, options });
  }
  return { ok: true, value: { questions, timeoutSec } };
}

/** How a question ended, as the model reads it. */
export type AskUserOutcome =
  | { status: 'answered'; answers: Record<string, string[]> }
  | { status: 'no_answer'; reason: string }
  | { status: 'pending'; questionId: string; expiresAt: number }
  | { status: 'error'; error: string };

export interface AskUserToolDeps {
  ask(input: { spec: AskUserSpec; turn: TurnContext; sessionKey: string; toolCallId: string; signal?: AbortSignal | undefined }): Promise<AskUserOutcome>;
}

export function createAskUserTool(deps: AskUserToolDeps): ToolImplementation<Record<string, unknown>> {
  return {
    id: 'ask_user',
    parameters,
    async execute(args, ctx) {
      const checked = validateAskUser(args, ctx.turn.provider);
      if (!checked.ok) return jsonResult({ status: 'error', tool: 'ask_user', error: checked.error }, true);
      const outcome = await deps.ask({ spec: checked.value, turn: ctx.turn, sessionKey: ctx.sessionKey, toolCallId: ctx.toolCallId, signal: ctx.signal });
      switch (outcome.status) {
        case 'answered':
          // OpenClaw's result shape: the protocol's envelope around the map of answers.
          return jsonResult({ status: 'answered', answers: { answers: outcome.answers } });
        case 'no_answer':
          return jsonResult({ status: 'no_answer', note: `${outcome.reason} Continue with your best judgment.` });
        case 'pending':
          return jsonResult({
            status: 'pending',
            question: outcome.questionId,
            expiresAt: new Date(outcome.expiresAt).toISOString(),
            note: 'The person has not answered yet. Do not ask again or wait: end your turn. Their answer (or no_answer when the question expires) comes to you in a follow-up message.',
          });
        case 'error':
          return jsonResult({ status: 'error', tool: 'ask_user', error: outcome.error }, true);
      }
    },
  };
}

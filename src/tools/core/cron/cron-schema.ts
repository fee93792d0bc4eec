// The argument schemas of this folder's tools, apart from their implementations: the tool surface
// (src/app/core-descriptors.ts) reads them without loading the tools, and each implementation
// validates its calls against the same object. Keep imports here to constants only.
import { MISSED_RUN_POLICIES } from '../../../cron/jobs.js';
export const cronParameters = {
  type: 'object',
  properties: {
    action: {
      type: 'string',
      enum: ['status', 'list', 'add', 'update', 'remove', 'run', 'runs'],
      description:
        'status: scheduler state; list: jobs of this agent; add: schedule a job; update: change its schedule, message, target, name, missed-run policy, or pause/resume it; remove; run: run now; runs: recent runs of a job.',
    },
    id: { type: 'string', description: 'Job id (update, remove, run, runs).' },
    name: { type: 'string', minLength: 1, maxLength: 80, description: 'Short job name (add, update).' },
    message: {
      type: 'string',
      minLength: 1,
      maxLength: 4000,
      description: 'What you will be asked when the job fires; the answer is posted in the job’s target conversation (add, update).',
    },
    cron: { type: 'string', description: 'Cron expression, e.g. "0 9 * * 1-5" (add, update; one of cron, everyMs, at); runs at least one minute apart.' },
    tz: { type: 'string', description: 'IANA time zone for cron, e.g. "Europe/Paris".' },
    everyMs: { type: 'integer', minimum: 60000, description: 'Repeat interval in milliseconds, at least one minute.' },
    at: { type: 'string', description: 'One-off time, ISO 8601 (e.g. "2026-12-01T09:00:00Z").' },
    enabled: { type: 'boolean', description: 'Resume (true) or pause (false) the job (update).' },
    missed: { type: 'string', enum: MISSED_RUN_POLICIES, description: 'Runs missed while Warden was down: skip them, or run once at start (add, update).' },
    target: { type: 'string', description: 'Where the job posts: "here" (default), or a channel (#name or its mention) Warden has been addressed in (add, update).' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

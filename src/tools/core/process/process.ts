import type { ExecJob } from '../../../exec/job.js';
import { isStarter, partyOf, processRegistry as defaultRegistry, type JobParty, type JobRecord, type ProcessRegistry } from '../../../exec/process-registry.js';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { processParameters as parameters, ACTIONS } from './process-schema.js';

/**
 * The `process` tool (reference A15): background jobs — list, poll, log, write, send-keys,
 * submit, paste, kill, clear, remove. A caller reaches only the jobs it started in this session
 * (owners: every job of the session; see process-registry.ts). A job of another session is
 * answered exactly like a job that does not exist; a job of another sender in this session is
 * refused plainly, so the model stops trying instead of guessing.
 */
export interface ProcessArgs {
  action: 'list' | 'poll' | 'log' | 'write' | 'send-keys' | 'submit' | 'paste' | 'kill' | 'clear' | 'remove';
  sessionId?: string;
  data?: string;
  keys?: string[];
  hex?: string[];
  literal?: string;
  text?: string;
  bracketed?: boolean;
  eof?: boolean;
  offset?: number;
  limit?: number;
  timeout?: number;
}

/** No output for this long while stdin is open: the job probably waits for input. */
const INPUT_WAIT_IDLE_MS = 15_000;
const DEFAULT_LOG_LINES = 200;

export function createProcessTool(deps: { registry?: ProcessRegistry } = {}): ToolImplementation<ProcessArgs> {
  const registry = deps.registry ?? defaultRegistry;
  return {
    id: 'process',
    parameters,
    async execute(args, ctx) {
      const party = partyOf(ctx);
      if (args.action === 'list') return list(registry.list(party), party);
      if (!args.sessionId) return error(`process ${args.action} needs a sessionId`);
      const found = registry.lookup(party, args.sessionId);
      if (!found.ok) {
        return found.reason === 'not-yours'
          ? error(`Session ${args.sessionId} was started by another sender in this conversation; only that sender or an owner can use it. Do not retry.`)
          : error(`No session found for ${args.sessionId}`);
      }
      const record = found.record;
      const job = record.job;
      switch (args.action) {
        case 'poll':
          return poll(record, args.timeout ?? 0);
        case 'log':
          return text(logSlice(job.outputText(), args.offset, args.limit), { status: job.status });
        case 'write': {
          if (!record.backgrounded) return error(`session ${job.id} is not in the background`);
          if (args.data !== undefined && !job.write(args.data)) return error(`session ${job.id} does not accept input`);
          if (args.eof) job.endInput();
          return text(`Wrote ${args.data?.length ?? 0} characters to ${job.id}${args.eof ? ' and closed stdin' : ''}.`);
        }
        case 'send-keys': {
          const bytes = encodeKeys(args);
          if (!bytes.ok) return error(bytes.error);
          if (!job.write(bytes.value)) return error(`session ${job.id} does not accept input`);
          return text(`Sent ${bytes.value.length} bytes to ${job.id}.`);
        }
        case 'submit':
          return job.write('\r') ? text(`Sent enter to ${job.id}.`) : error(`session ${job.id} does not accept input`);
        case 'paste': {
          const body = args.text ?? '';
          const payload = args.bracketed === false ? body : `\x1b[200~${body}\x1b[201~`;
          return job.write(payload) ? text(`Pasted ${body.length} characters into ${job.id}.`) : error(`session ${job.id} does not accept input`);
        }
        case 'kill': {
          if (!job.running) return text(`Session ${job.id} already ended (${job.status}).`);
          job.kill();
          await job.done;
          return text(`Killed session ${job.id}.`, { status: job.status, signal: job.signal });
        }
        case 'clear':
          if (job.running) return error(`session ${job.id} is still running; kill or remove it`);
          registry.remove(party, job.id);
          return text(`Cleared session ${job.id}.`);
        case 'remove':
          registry.remove(party, job.id);
          return text(`Removed session ${job.id}${job.running ? ' (killed)' : ''}.`);
      }
    },
  };
}

function list(records: JobRecord[], party: JobParty): ToolResult {
  if (records.length === 0) return text('No background sessions.', { sessions: [] });
  const now = Date.now();
  // Only an owner sees other senders' jobs; theirs are marked with who started them.
  const startedBy = (r: JobRecord) => (isStarter(r, party) ? undefined : `${r.startedBy.provider}:${r.startedBy.senderId ?? '(unknown sender)'}`);
  const lines = records.map((r) => {
    const j = r.job;
    const runtime = Math.round(((j.endedAt ?? now) - j.startedAt) / 1000);
    const waiting = j.running && now - j.lastOutputAt >= INPUT_WAIT_IDLE_MS ? ' [input-wait]' : '';
    const by = startedBy(r);
    return `${j.id}  ${j.status.padEnd(9)} ${String(runtime).padStart(5)}s${waiting}  ${j.label}${by ? `  (started by ${by})` : ''}`;
  });
  return text(lines.join('\n'), {
    sessions: records.map((r) => ({ id: r.job.id, status: r.job.status, pid: r.job.pid, command: r.job.label, ...(startedBy(r) ? { startedBy: startedBy(r) } : {}) })),
  });
}

async function poll(record: JobRecord, timeoutMs: number): Promise<ToolResult> {
  const job = record.job;
  if (job.running && !record.backgrounded) return error(`session ${job.id} is not in the background`);
  if (job.running && timeoutMs > 0) {
    const wait = Math.min(30_000, Math.ceil(timeoutMs / 250) * 250);
    await Promise.race([job.done, new Promise((r) => setTimeout(r, wait).unref())]);
  }
  const fresh = job.drainPending();
  if (!job.running) {
    const end = job.status === 'timed-out' ? 'killed by timeout' : job.exitCode !== null ? `exit code ${job.exitCode}` : `signal ${job.signal}`;
    return text(`${fresh || '(no new output)'}\n\nProcess ${job.status} (${end}).`, { status: job.status, exitCode: job.exitCode, signal: job.signal });
  }
  const idle = Date.now() - job.lastOutputAt >= INPUT_WAIT_IDLE_MS ? '\n(no output for a while: it may be waiting for input; use write or send-keys)' : '';
  return text(`${fresh || '(no new output)'}${idle}\n\nProcess still running.`, { status: 'running' });
}

/** Lines of the output: offset/limit, limit alone = last N lines, neither = last 200 with a note. */
export function logSlice(output: string, offset?: number, limit?: number): string {
  const lines = output.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (offset !== undefined) return lines.slice(offset, limit !== undefined ? offset + limit : undefined).join('\n') || '(no output in range)';
  const n = limit ?? DEFAULT_LOG_LINES;
  const start = Math.max(0, lines.length - n);
  const body = lines.slice(start).join('\n') || '(no output)';
  return limit === undefined && start > 0 ? `[showing the last ${n} of ${lines.length} lines; use offset to page]\n${body}` : body;
}

const NAMED_KEYS: Record<string, string> = {
  enter: '\r', return: '\r', tab: '\t', escape: '\x1b', esc: '\x1b', space: ' ', backspace: '\x7f', bspace: '\x7f',
  home: '\x1b[H', end: '\x1b[F', pageup: '\x1b[5~', pgup: '\x1b[5~', ppage: '\x1b[5~', pagedown: '\x1b[6~', pgdn: '\x1b[6~',
  npage: '\x1b[6~', insert: '\x1b[2~', ic: '\x1b[2~', delete: '\x1b[3~', del: '\x1b[3~', dc: '\x1b[3~', btab: '\x1b[Z',
  f1: '\x1bOP', f2: '\x1bOQ', f3: '\x1bOR', f4: '\x1bOS', f5: '\x1b[15~', f6: '\x1b[17~', f7: '\x1b[18~', f8: '\x1b[19~',
  f9: '\x1b[20~', f10: '\x1b[21~', f11: '\x1b[23~', f12: '\x1b[24~',
};
const ARROWS = new Set(['up', 'down', 'left', 'right']);

export function encodeKeys(args: Pick<ProcessArgs, 'literal' | 'hex' | 'keys'>): { ok: true; value: string } | { ok: false; error: string } {
  let out = args.literal ?? '';
  for (const h of args.hex ?? []) {
    if (!/^(0x)?[0-9a-f]{1,2}$/i.test(h)) return { ok: false, error: `hex byte "${h}" is not one or two hex digits` };
    out += String.fromCharCode(parseInt(h.replace(/^0x/i, ''), 16));
  }
  for (const key of args.keys ?? []) {
    const k = key.toLowerCase();
    // Without a terminal the cursor-key mode is unknown, so arrow bytes could mean anything.
    if (ARROWS.has(k)) return { ok: false, error: `arrow key "${key}" refused: the cursor-key mode of this job is unknown` };
    const ctrl = /^\^([a-z@[\\\]^_?])$/i.exec(key) ?? /^c-([a-z])$/i.exec(key);
    if (ctrl) {
      const c = ctrl[1]!.toUpperCase();
      out += c === '?' ? '\x7f' : String.fromCharCode(c.charCodeAt(0) & 0x1f);
      continue;
    }
    if (/^kp[0-9]$/.test(k)) {
      out += k.slice(2);
      continue;
    }
    const named = NAMED_KEYS[k] ?? { 'kp/': '/', 'kp*': '*', 'kp-': '-', 'kp+': '+', 'kp.': '.', kpenter: '\r' }[k];
    if (named === undefined) return { ok: false, error: `unknown key "${key}"` };
    out += named;
  }
  if (out === '') return { ok: false, error: 'send-keys needs literal, hex or keys' };
  return { ok: true, value: out };
}

function text(body: string, details: Record<string, unknown> = {}): ToolResult {
  return { content: [{ type: 'text', text: body }], details };
}

function error(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true };
}


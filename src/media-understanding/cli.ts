import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MediaModelEntry } from '../config/schema/media-understanding.js';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../tools/types.js';
import type { MediaAnswer } from './requests.js';

/**
 * A `type: cli` entry (whisper, a vendor CLI) runs through the exec tool itself: the same
 * analysis, allowlist, approval card, sandbox host and child environment as a command the model
 * asks for. Nothing here spawns a process. The attachment is staged inside the agent's workspace
 * (the only place the sandbox sees) and removed afterwards.
 */
export interface CliRun {
  entry: MediaModelEntry;
  data: Buffer;
  ext: string;
  mime: string;
  index: number;
  prompt: string;
  maxChars: number | undefined;
  timeoutSec: number;
  exec: ToolImplementation;
  ctx: ToolCallContext;
}

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** `{{AttachmentPath}}` and friends, OpenClaw's deprecated `{{Media*}}` names and the old `{input}`. */
export function fillTemplate(arg: string, values: Record<string, string>): string {
  return arg
    .replace(/\{\{\s*(\w+)\s*\}\}/g, (m, name: string) => values[name] ?? m)
    .replaceAll('{input}', values.AttachmentPath ?? '{input}');
}

/** Whisper and friends prefix lines with `[00:00.000 --> 00:02.000]`; the text is what counts. */
export function cleanCliOutput(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/^\s*\[\d{1,2}:\d{2}(?::\d{2})?\.\d{3}\s*-->\s*\d{1,2}:\d{2}(?::\d{2})?\.\d{3}\]\s*/, ''))
    .filter((line) => !/^(Detecting language|Detected language)/.test(line.trim()))
    .join('\n')
    .trim();
}

const TRAILER_BODY = /^(?:exit code -?\d+|killed: timeout|signal [\w-]+|could not start: [^)]*)$/;

/**
 * `text` without the exit trailer the exec tool appends (`\n\n(exit code 1)`), as
 * `/\n\n\((exit code -?\d+|…|could not start: [^)]*)\)$/` takes it off. The trailer holds one `)`,
 * its last, so it starts after the `)` before; each `\n\n(` from there is tried once, where that
 * pattern scans the command's output from every `\n\n(` to its end.
 */
export function withoutExitTrailer(text: string): string {
  if (!text.endsWith(')')) return text;
  const after = text.lastIndexOf(')', text.length - 2) + 1;
  for (let at = text.indexOf('\n\n(', after); at >= 0; at = text.indexOf('\n\n(', at + 1)) {
    if (TRAILER_BODY.test(text.slice(at + 3, -1))) return text.slice(0, at);
  }
  return text;
}

/** The command's output from an exec result, without the exit trailer the tool appends. */
function execOutput(result: ToolResult): string {
  const body = withoutExitTrailer(result.content.map((c) => (c.type === 'text' ? c.text : '')).join(''));
  return body === '(no output)' ? '' : body;
}

export async function runCliEntry(run: CliRun): Promise<MediaAnswer> {
  const command = run.entry.command;
  if (!command || !run.entry.args?.length) return { ok: false, error: 'the cli entry has no command or args' };
  const rel = path.join('.warden-media', randomBytes(6).toString('hex'));
  const dir = path.join(run.ctx.workspaceDir, rel);
  const file = path.join(dir, `attachment.${run.ext}`);
  const outDir = path.join(dir, 'out');
  try {
    await mkdir(outDir, { recursive: true });
    await writeFile(file, run.data, { mode: 0o600 });
    const values: Record<string, string> = {
      AttachmentPath: file,
      AttachmentUrl: '',
      AttachmentContentType: run.mime,
      AttachmentDir: dir,
      AttachmentIndex: String(run.index),
      Prompt: run.prompt,
      MaxChars: String(run.maxChars ?? ''),
      OutputDir: outDir,
      OutputBase: path.join(outDir, 'attachment'),
    };
    values.MediaPath = values.AttachmentPath!;
    values.MediaUrl = values.AttachmentUrl!;
    values.MediaType = values.AttachmentContentType!;
    values.MediaDir = values.AttachmentDir!;
    const words = [command, ...run.entry.args.map((a) => fillTemplate(a, values))];
    const script = words.map(quote).join(' ');
    // The kill timeout fires before the exec tool's longest foreground wait, so nothing is left running.
    const timeoutSec = Math.min(run.timeoutSec, 110);
    const result = (await run.exec.execute({ command: script, workdir: rel, timeout: timeoutSec, yieldMs: 120_000 }, run.ctx)) as ToolResult;
    const details = (result.details ?? {}) as { status?: string; exitCode?: number | null; reason?: string; sessionId?: string };
    if (details.status === 'running') {
      // Longer than the exec tool waits in the foreground: stop it rather than leave it behind.
      return { ok: false, error: `${command} did not finish within ${timeoutSec} s` };
    }
    if (details.status === 'denied') return { ok: false, error: `the exec policy did not let ${command} run: ${details.reason ?? execOutput(result)}` };
    if (details.status !== 'completed') return { ok: false, error: `${command} failed: ${execOutput(result).slice(-300) || details.status}` };
    let text = cleanCliOutput(execOutput(result));
    if (!text) {
      // Tools that write a .txt instead of printing (whisper --output_dir) leave it in one of these.
      for (const where of [outDir, dir]) {
        const txt = (await readdir(where).catch(() => [])).find((n) => n.endsWith('.txt'));
        if (txt) {
          text = cleanCliOutput(await readFile(path.join(where, txt), 'utf8'));
          break;
        }
      }
    }
    return text ? { ok: true, text } : { ok: false, error: `${command} printed nothing` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

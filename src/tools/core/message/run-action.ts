import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { WardenConfig } from '../../../config/schema/index.js';
import type { MessageAction } from '../../../config/schema/message-actions.js';
import { safeName } from '../fs/safe-name.js';
import { resolveWorkspacePath } from '../fs/workspace.js';
import { writeAtomic } from '../fs/workspace-io.js';
import type { MessageTarget, MessagingService, ToolCallContext, ToolResult } from '../../types.js';
import { wrapUntrusted } from '../../untrusted.js';
import {
  decideMessageAction,
  DOWNLOAD_MAX_BYTES,
  isThisConversation,
  parseChannelId,
  parseEmoji,
  parseMessageId,
  POLL_MAX_OPTIONS,
  READ_DEFAULT_MESSAGES,
  READ_MAX_MESSAGES,
  type PlatformActionRequest,
  type ReadMessage,
} from './actions.js';
import { fail, type MessageArgs } from './message.js';
import { crossContextText, messageTargetAllowed } from './targets.js';

/** Where downloaded files land in the workspace. */
export const DOWNLOADS_DIR = 'downloads';

const ok = (text: string, details: Record<string, unknown>): ToolResult => ({ content: [{ type: 'text', text }], details: { status: 'ok', ...details } });

/**
 * One message action, end to end: the target is parsed (ids only, in the platform's spelling),
 * the gate decides (decideMessageAction — the platform is asked what an outside channel is only
 * once the rest of the gate has passed), then the adapter acts, and what comes back from other
 * people (messages, pins) reaches the model wrapped as untrusted.
 */
export async function runMessageAction(config: WardenConfig, messaging: MessagingService, action: Exclude<MessageAction, 'send'>, args: MessageArgs, ctx: ToolCallContext): Promise<ToolResult> {
  const turn = ctx.turn;
  const provider = args.provider ?? turn.provider;
  if (!messaging.providers().includes(provider)) return fail(`no ${provider} adapter is running; running: ${messaging.providers().join(', ') || 'none'}`);
  if (args.userId !== undefined) return fail(`the message action "${action}" takes a channel id, not a userId`);

  // The target: the given channel id, else this conversation (and its thread).
  let channel: string | undefined;
  if (args.channel !== undefined) {
    const parsed = parseChannelId(provider, args.channel);
    if (!parsed.ok) return fail(parsed.why);
    channel = parsed.id;
  } else if (provider === turn.provider) channel = turn.channelId;
  if (channel === undefined) return fail(`the message action "${action}" needs a channel id`);
  let threadId = args.channel === undefined && args.threadId === undefined ? turn.threadId : args.threadId;
  if (args.threadId !== undefined) {
    const parsed = provider === 'slack' ? parseMessageId(provider, args.threadId) : parseChannelId(provider, args.threadId);
    if (!parsed.ok) return fail(`threadId: ${parsed.why}`);
    threadId = parsed.id;
  }
  const target: MessageTarget = { provider, channel, threadId };

  // The gate: allowlist and platform first, then reach.
  const here = isThisConversation(target, turn);
  const first = decideMessageAction(config, action, target, turn, here ? undefined : 'channel', messageTargetAllowed);
  if (!first.ok) return fail(first.why);
  const port = messaging.actions?.(provider);
  if (!port) return fail(`the ${provider} adapter has no message actions`);
  if (!here) {
    const kind = await port.channelKind(channel);
    const decided = decideMessageAction(config, action, target, turn, kind, messageTargetAllowed);
    if (!decided.ok) return fail(decided.why);
  }

  const messageId = (): { ok: true; id: string } | { ok: false; why: string } => (args.messageId === undefined ? { ok: false, why: `the message action "${action}" needs messageId` } : parseMessageId(provider, args.messageId));
  const where = `${provider} channel ${channel}${threadId ? ` (thread ${threadId})` : ''}`;
  let request: PlatformActionRequest;
  switch (action) {
    case 'react': {
      const id = messageId();
      if (!id.ok) return fail(id.why);
      if (args.emoji === undefined) return fail('react needs emoji');
      const emoji = parseEmoji(provider, args.emoji);
      if (!emoji.ok) return fail(emoji.why);
      request = { action, channel, threadId, messageId: id.id, emoji: emoji.emoji, remove: args.remove === true };
      break;
    }
    case 'thread-create': {
      if (args.name === undefined) return fail('thread-create needs name');
      let from: string | undefined;
      if (args.messageId !== undefined) {
        const id = messageId();
        if (!id.ok) return fail(id.why);
        from = id.id;
      }
      request = { action, channel, threadId, messageId: from, name: args.name, text: args.text === undefined ? undefined : crossContextText(config, target, turn, args.text) };
      break;
    }
    case 'thread-reply': {
      if (threadId === undefined) return fail('thread-reply needs threadId');
      if (args.text === undefined) return fail('thread-reply needs text');
      if (!(await port.threadIn(channel, threadId))) return fail(`${threadId} is not a thread of ${provider} channel ${channel}`);
      const sent = await messaging.send(target, crossContextText(config, target, turn, args.text));
      if (!sent.ok) return fail(`could not post: ${sent.error}`);
      return ok(`Replied in ${where}.`, { action, ...target });
    }
    case 'pin':
    case 'unpin':
    case 'edit':
    case 'delete': {
      const id = messageId();
      if (!id.ok) return fail(id.why);
      if (action === 'edit') {
        if (args.text === undefined) return fail('edit needs text');
        request = { action, channel, threadId, messageId: id.id, text: args.text };
      } else request = { action, channel, threadId, messageId: id.id };
      break;
    }
    case 'list-pins':
      request = { action, channel, threadId };
      break;
    case 'poll': {
      const options = args.options ?? [];
      if (args.question === undefined || options.length < 2 || options.length > POLL_MAX_OPTIONS) return fail(`poll needs a question and 2–${POLL_MAX_OPTIONS} options`);
      request = { action, channel, threadId, question: args.question, options, hours: args.durationHours ?? 24 };
      break;
    }
    case 'read':
      request = { action, channel, threadId, limit: Math.min(Math.max(1, Math.trunc(args.limit ?? READ_DEFAULT_MESSAGES)), READ_MAX_MESSAGES) };
      break;
    case 'download-file': {
      const id = messageId();
      if (!id.ok) return fail(id.why);
      if (args.fileId === undefined || args.fileId.length === 0 || args.fileId.length > 40) return fail('download-file needs the fileId read listed');
      request = { action, channel, threadId, messageId: id.id, fileId: args.fileId, maxBytes: DOWNLOAD_MAX_BYTES };
      break;
    }
  }

  const done = await port.run(request);
  if (!done.ok) return fail(done.error);
  const details = { action, provider, channel, threadId, ...(done.id ? { id: done.id } : {}), ...(done.pollKind ? { pollKind: done.pollKind } : {}) };
  if (done.messages) {
    // One wrapper around the whole answer: the call chain passes an answer that is exactly one wrapper as it is.
    const body = done.messages.map(lineOf).join('\n') || '(no messages)';
    return ok(wrapUntrusted(`${provider}:${channel}${threadId ? `/${threadId}` : ''}`, `${done.summary}\n${body}`), { ...details, count: done.messages.length });
  }
  if (done.file) {
    const saved = await saveDownload(ctx.workspaceDir, done.file.name, done.file.data);
    if (!saved.ok) return fail(`downloaded, but not saved: ${saved.error}`);
    return ok(`Saved ${done.file.data.length} bytes as ${saved.rel}.`, { ...details, path: saved.rel, bytes: done.file.data.length });
  }
  return ok(done.summary, details);
}

/** One message of `read` / `list-pins` for the model: who, when, what, its files and reactions. */
function lineOf(m: ReadMessage): string {
  const files = m.files.map((f) => ` [file ${f.id}: ${f.name}${f.size !== undefined ? `, ${f.size} bytes` : ''}]`).join('');
  const reactions = m.reactions?.length ? ` (reactions: ${m.reactions.map((r) => `${r.emoji}×${r.count}`).join(' ')})` : '';
  return `[${m.id}]${m.at ? ` ${m.at}` : ''} ${m.fromBot ? 'bot (you)' : `${m.authorName ?? 'user'} <${m.authorId}>`}${m.threadId ? ` thread ${m.threadId}` : ''}: ${m.text}${files}${reactions}`;
}

/** A downloaded file, written as generated files are: through the workspace guard, under downloads/, named by Warden. */
async function saveDownload(workspaceDir: string, name: string, data: Buffer): Promise<{ ok: true; rel: string } | { ok: false; error: string }> {
  await mkdir(path.resolve(workspaceDir), { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const resolved = await resolveWorkspacePath(workspaceDir, `${DOWNLOADS_DIR}/${stamp}-${randomBytes(2).toString('hex')}-${safeName(name)}`);
  if (!resolved.ok) return { ok: false, error: resolved.message ?? 'refused by the workspace guard' };
  const written = await writeAtomic(resolved, data);
  return written.ok ? { ok: true, rel: resolved.rel } : { ok: false, error: written.message ?? 'could not write' };
}

import type { WardenConfig } from '../../../config/schema/index.js';
import { MESSAGE_ACTIONS, type MessageAction } from '../../../config/schema/message-actions.js';
import type { MessageTarget, MessagingService, ToolCallContext, ToolImplementation, ToolResult } from '../../types.js';
import { POLL_MAX_HOURS, POLL_MAX_OPTIONS, POLL_OPTION_MAX, POLL_QUESTION_MAX, READ_MAX_MESSAGES, THREAD_NAME_MAX, decideMessageAction } from './actions.js';
import { runMessageAction } from './run-action.js';
import { messageParameters as parameters } from './message-schema.js';
import { crossContextText, messageTargetAllowed } from './targets.js';

export { crossContextText, messageTargetAllowed };

export interface MessageArgs {
  /** What to do; default `send` (OpenClaw's action names). */
  action?: MessageAction | undefined;
  /** The message to post (`send`, `thread-reply`), the new text (`edit`), a thread's first message (`thread-create`). */
  text?: string | undefined;
  /** Provider of the target; default the current conversation's. */
  provider?: string | undefined;
  /** Channel id or `#name` (send); channel id (other actions); default the current conversation. */
  channel?: string | undefined;
  threadId?: string | undefined;
  /** A user id to DM instead of a channel (send only). */
  userId?: string | undefined;
  /** The message acted on (react, pin, unpin, edit, delete, download-file; thread-create from a message). */
  messageId?: string | undefined;
  emoji?: string | undefined;
  /** react: take the bot's reaction away instead. */
  remove?: boolean | undefined;
  /** thread-create: the thread's name. */
  name?: string | undefined;
  question?: string | undefined;
  options?: string[] | undefined;
  durationHours?: number | undefined;
  /** read: how many recent messages (default 20, at most 50). */
  limit?: number | undefined;
  /** download-file: the file's id, as `read` lists it. */
  fileId?: string | undefined;
}

export const fail = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true });

/** message: post in this conversation, another channel, a thread or a user's DM. */
export function createMessageTool(config: WardenConfig, messaging: MessagingService | undefined): ToolImplementation<MessageArgs> {
  return {
    id: 'message',
    parameters,
    async execute(args, ctx: ToolCallContext) {
      if (!messaging) return fail('message works only inside `warden start`, where the chat adapters run.');
      const action = args.action ?? 'send';
      if (action !== 'send') return runMessageAction(config, messaging, action, args, ctx);
      const turn = ctx.turn;
      if (args.text === undefined || args.text === '') return fail('send needs text');
      const target: MessageTarget = {
        provider: args.provider ?? turn.provider,
        channel: args.userId ? undefined : (args.channel ?? turn.channelId),
        threadId: args.channel === undefined && args.userId === undefined ? (args.threadId ?? turn.threadId) : args.threadId,
        userId: args.userId ?? (args.channel === undefined && turn.chat === 'dm' ? turn.senderId : undefined),
      };
      if (!messaging.providers().includes(target.provider)) return fail(`no ${target.provider} adapter is running; running: ${messaging.providers().join(', ') || 'none'}`);
      if (target.channel === undefined && target.userId === undefined) return fail('give a channel or a userId');
      const allowed = decideMessageAction(config, 'send', target, turn, undefined, messageTargetAllowed);
      if (!allowed.ok) return fail(allowed.why);
      // A thread named by the model must be one of the judged channel's (on Discord a thread is a channel of its own).
      const port = messaging.actions?.(target.provider);
      if (args.threadId !== undefined && target.channel !== undefined && port && !(await port.threadIn(target.channel, args.threadId))) {
        return fail(`${args.threadId} is not a thread of ${target.provider} channel ${target.channel}`);
      }
      const sent = await messaging.send(target, crossContextText(config, target, turn, args.text));
      if (!sent.ok) return fail(`could not post: ${sent.error}`);
      const where = target.userId ? `a DM to ${target.userId}` : `${target.provider} channel ${sent.channelId}${target.threadId ? ` (thread ${target.threadId})` : ''}`;
      return { content: [{ type: 'text', text: `Posted to ${where}.` }], details: { status: 'ok', action: 'send', ...target, channelId: sent.channelId } };
    },
  };
}

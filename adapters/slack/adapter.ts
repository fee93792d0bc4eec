import { slackMessageActions } from './message-actions.js';
import { votePollClick } from './poll.js';
import { POLL_ACTION_PREFIX } from '../../src/tools/core/message/polls.js';
import { slackApiFetch } from './api-fetch.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  App,
  HTTPReceiver,
  LogLevel,
  SocketModeReceiver,
  webApi,
  type AllMiddlewareArgs,
  type BlockAction,
  type ButtonAction,
  type Logger,
  type RespondFn,
  type types as slackTypes,
  type SlackActionMiddlewareArgs,
  type SlackCommandMiddlewareArgs,
  type SlackViewMiddlewareArgs,
  type ViewSubmitAction,
} from '@slack/bolt';
import type { ApprovalDecision, ApprovalRequest } from '../../src/approvals/types.js';
import { ConfigError } from '../../src/config/errors.js';
import type { SlackAdapterConfig as SlackConfig } from '../../src/config/schema/channels.js';
import type { SkillCommandSpec } from '../../src/skills/commands.js';
import type { StreamSurface } from '../../src/gateway/reply-stream.js';
import type { ChatAdapter, ClickOrigin, ClickOutcome, InboundMessage, OutboundMessage, ReplyTarget, SentMessage, UserQuestionPrompt } from '../../src/gateway/types.js';
import { ASK_BUTTON_PREFIX, ASK_FIELD, ASK_MAX_CHARS, ASK_MODAL_PREFIX, ASK_OTHER_PREFIX, askButtonId, askModalId, askOtherId, askQuestionText, decodeAskId } from '../common/ask-user-prompt.js';
import { log } from '../../src/log/log.js';
import { cardDestinations, type AdapterDeps } from '../common/adapter-deps.js';
import {
  alreadyResolvedText,
  CLICK_FAILED_TEXT,
  decodeApprovalAction,
  decodeReasonAction,
  INVALID_ACTION_TEXT,
  NOT_APPROVER_TEXT,
  NOT_FOUND_TEXT,
  REASON_FIELD,
  REASON_MAX,
} from '../common/approval-card.js';
import { memoryCardStore, type CardRef } from '../../src/gateway/approval-card-store.js';
import { chunkText } from '../../src/gateway/chunk-text.js';
import { toMrkdwn } from './mrkdwn.js';
import { fitFiles, withNotes } from '../common/outbound-files.js';
import { answersPrivately, slackCommandText } from '../common/native-commands.js';
import { RecentIds } from '../common/recent-ids.js';
import { decodePairingButton, PAIRING_BUTTON_PREFIX, pairingButtonId } from '../common/pairing-card.js';
import { pairingCardText, type PairingCardRequest } from '../../src/gateway/pairing-decision.js';
import { SECRET_BUTTON_PREFIX, SECRET_FIELD, SECRET_MAX_CHARS, SECRET_MODAL_PREFIX, secretButtonId, secretModalId, secretPromptText, secretRequestId } from '../common/secret-prompt.js';
import { APPROVAL_ACTION_PATTERN, escapeMrkdwn, mention, slackCard } from './card.js';
import { SlackUsergroupCache } from './usergroups.js';
import { signedOnly } from './signature.js';

/** The callback id of the "Deny with reason" form. */
const REASON_VIEW_ID = 'warden_approval_reason_form';
/** One pattern matching what any of the handlers' patterns match. */
const anyOf = (handlers: readonly (readonly [RegExp, unknown])[]): RegExp => new RegExp(handlers.map(([p]) => `(?:${p.source})`).join('|'));
import { deliveryKeys, inboundFromSlack, inboundFromSlackCommand, originFromMetadata, SLACK_FILE_HOSTS, slackAttachment, slackClickOrigin, type SlackMessageEvent } from './inbound.js';

/** Slack accepts 40,000 characters of text but renders long posts poorly; 3,000 is one section. */
export const SLACK_CHUNK = 3_000;
/** Replies longer than this go out as a file with a short note. */
export const SLACK_LONG_REPLY = 12_000;
/** Least time between two writes of a streamed reply. */
export const SLACK_STREAM_INTERVAL_MS = 1_200;
/** Files posted with a reply: Slack takes up to 1 GB; Warden keeps to what a chat needs. */
export const SLACK_FILE_LIMIT = 50 * 1024 * 1024;
const SLACK_MAX_FILES = 10;
/** A slash command's response_url takes 5 posts within 30 minutes. */
const RESPONSE_URL_USES = 5;
const RESPONSE_URL_MS = 29 * 60_000;
/** The commands Warden answers: one `/warden <command>`, or `/warden-<command>` per command (skills too). */
export const SLACK_COMMAND_PATTERN = /^\/warden(?:-[a-z0-9_-]+)?$/;

export interface SlackAdapter extends ChatAdapter {
  readonly provider: 'slack';
  readonly mode: 'http' | 'socket';
  /** The Events API / interactivity URL once started in HTTP mode. */
  readonly eventsUrl: string | undefined;
}

/**
 * Answers of chat.startStream that mean the workspace or this app's token has no native
 * streaming (an older plan or grid policy, a token without the scope): remembered, not retried.
 */
const NATIVE_STREAM_UNSUPPORTED = new Set(['unknown_method', 'not_allowed', 'not_allowed_token_type', 'missing_scope', 'method_deprecated', 'feature_not_enabled', 'team_access_not_granted', 'no_permission']);
export const nativeStreamUnsupported = (error: string): boolean => NATIVE_STREAM_UNSUPPORTED.has(error);

/** Bolt logs through pino, so its warnings (bad signatures, stale requests) land in the same stream. */
function boltLogger(): Logger {
  const logger = log.child({ adapter: 'slack', component: 'bolt' });
  let level = LogLevel.INFO;
  const line = (args: unknown[]) => args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
  // Bolt and its web client log a handful of debug lines for every event and API call: the line
  // is built only when its level is on (pino would drop it after the work of joining it).
  const at = (pinoLevel: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => {
    if (logger.isLevelEnabled(pinoLevel)) logger[pinoLevel](line(args));
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    setLevel: (l) => void (level = l),
    getLevel: () => level,
    setName: () => undefined,
  };
}

/**
 * The Slack adapter on Bolt: the HTTP receiver (signing secret) or Socket Mode (app token).
 * Bolt verifies signatures and timestamps and drops the bot's own messages; this adapter adds
 * what Bolt leaves to apps: processing a redelivered event once, keeping replies in their
 * thread and within Slack's limits, and the approval card with its buttons.
 */
export function createSlackAdapter(config: SlackConfig, deps: AdapterDeps): SlackAdapter {
  const problems = [];
  if (!config.botToken) problems.push({ path: 'channels.slack.botToken', message: 'required to start the Slack adapter' });
  if (!config.appToken && !config.signingSecret) {
    problems.push({ path: 'channels.slack.signingSecret', message: 'set signingSecret (HTTP events) or appToken (Socket Mode)' });
  }
  if (problems.length > 0) throw new ConfigError(undefined, problems);
  const mode = config.appToken ? 'socket' : 'http';
  // A loopback API (the tests' fake) serves its files itself.
  const fileHosts = [...SLACK_FILE_HOSTS, ...(config.apiUrl && /^http:\/\/127\.0\.0\.1:\d+\//.test(config.apiUrl) ? [new URL(config.apiUrl).host] : [])];
  const cards = deps.cards ?? memoryCardStore();
  const logger = log.child({ adapter: 'slack' });
  // Event ids and messages this process was handed (deliveryKeys): a repeat is skipped here
  // without asking the store.
  const seen = new RecentIds();
  const channelNames = new Map<string, string | undefined>();
  const dmChannels = new Map<string, string>();
  /** Per workspace (team id): whether native streaming worked (true) or was refused as unsupported (false). */
  const nativeStreams = new Map<string, boolean>();
  let app: App | undefined;
  /** The skill commands `/warden <skill>` and `/warden-<skill>` may name. */
  let skillCommands: readonly SkillCommandSpec[] = [];
  let socketReceiver: SocketModeReceiver | undefined;
  let server: Server | undefined;
  let botUserId: string | undefined;
  // User groups for `usergroup:` entries, read with the bot token and cached (usergroups.ts).
  const usergroups = new SlackUsergroupCache(
    {
      list: () => web().usergroups.list({}),
      users: (usergroup) => web().usergroups.users.list({ usergroup }),
    },
    { onError: (err) => logger.warn({ err }, 'Slack user groups not read; usergroup: entries match nobody until they are') },
  );

  type WebClient = webApi.WebClient;
  // Web API calls through undici's request, their answers read without a web Response (api-fetch.ts).
  const apiFetch = slackApiFetch();
  // web-api's default keeps retrying for about 30 minutes; a chat reply that late helps nobody.
  const clientOptions = { retryConfig: webApi.retryPolicies.fiveRetriesInFiveMinutes, fetch: apiFetch, ...(config.apiUrl ? { slackApiUrl: config.apiUrl } : {}) };

  const web = (): WebClient => {
    if (!app) throw new Error('the Slack adapter is not started');
    return app.client;
  };

  async function channelName(client: WebClient, channel: string): Promise<string | undefined> {
    if (channelNames.has(channel)) return channelNames.get(channel);
    let name: string | undefined;
    try {
      const info = await client.conversations.info({ channel });
      name = info.channel?.name;
    } catch (err) {
      logger.debug({ err, channel }, 'no channel name');
    }
    channelNames.set(channel, name);
    return name;
  }

  async function dmChannelOf(userId: string): Promise<string> {
    const known = dmChannels.get(userId);
    if (known) return known;
    const opened = await web().conversations.open({ users: userId });
    const id = opened.channel?.id;
    if (!id) throw new Error(`Slack did not open a DM with ${userId}`);
    dmChannels.set(userId, id);
    return id;
  }

  async function upload(channel: string, threadTs: string | undefined, file: { name: string; content: string | Buffer }, comment?: string) {
    const data = typeof file.content === 'string' ? Buffer.from(file.content, 'utf8') : file.content;
    const common = { file: data, filename: file.name, ...(comment ? { initial_comment: comment } : {}) };
    await web().files.uploadV2(threadTs ? { ...common, channel_id: channel, thread_ts: threadTs } : { ...common, channel_id: channel });
  }

  /** Slash commands waiting for the router's answer, by trigger id. */
  const invocations = new Map<string, { respond: RespondFn; ephemeral: boolean; at: number }>();

  /**
   * Answers a slash command through its response_url, which works even in channels the bot
   * has not joined. One answer per invocation; false when unknown, expired or too long for
   * the URL's five uses, and the caller posts to the channel instead.
   */
  async function answerInvocation(invocationId: string, message: OutboundMessage): Promise<boolean> {
    const pending = invocations.get(invocationId);
    invocations.delete(invocationId);
    // A response_url takes text only: files go to the channel.
    if (!pending || Date.now() - pending.at > RESPONSE_URL_MS || message.attachment || (message.files?.length ?? 0) > 0 || message.text.length > SLACK_LONG_REPLY) return false;
    const chunks = chunkText(message.text, SLACK_CHUNK);
    if (chunks.length === 0) chunks.push('(no reply)');
    if (chunks.length > RESPONSE_URL_USES) return false;
    const response_type = pending.ephemeral ? 'ephemeral' : 'in_channel';
    let sent = 0;
    try {
      for (const text of chunks) {
        await pending.respond({ text: toMrkdwn(text), response_type, replace_original: false });
        sent++;
      }
    } catch (err) {
      logger.warn({ err, invocationId, sent }, 'could not answer a slash command through its response_url');
    }
    // Only an answer that never started is posted again in the channel; a partial one is not repeated.
    return sent > 0;
  }

  async function send(target: ReplyTarget, message: OutboundMessage): Promise<void | SentMessage> {
    if (target.invocationId !== undefined && !target.dmUserId && (await answerInvocation(target.invocationId, message))) return;
    const channel = target.dmUserId ? await dmChannelOf(target.dmUserId) : target.channelId;
    // An approval's outcome goes into the thread of its card when the card is in this channel.
    const card = message.linkedApproval && !target.threadId ? (await cards.get(message.linkedApproval)).find((r) => r.channelId === channel) : undefined;
    const thread = target.dmUserId ? undefined : (target.threadId ?? card?.messageId);
    const { fit, notes } = fitFiles(message.files, { maxBytes: SLACK_FILE_LIMIT, maxFiles: SLACK_MAX_FILES });
    let text = withNotes(message.text, notes);
    let file = message.attachment;
    if (!file && text.length > SLACK_LONG_REPLY) {
      file = { name: 'reply.md', content: text };
      text = '';
      await upload(channel, thread, file, `The reply is ${message.text.length.toLocaleString('en-US')} characters, so it is attached as reply.md.`);
      for (const f of fit) await upload(channel, thread, { name: f.name, content: f.data });
      return;
    }
    let first: string | undefined;
    for (const chunk of chunkText(text, SLACK_CHUNK)) {
      const posted = await web().chat.postMessage({ channel, text: toMrkdwn(chunk), ...(thread ? { thread_ts: thread } : {}) });
      first ??= posted.ts;
    }
    if (file) await upload(channel, thread, file);
    for (const f of fit) await upload(channel, thread, { name: f.name, content: f.data });
    return { messageId: first };
  }

  /**
   * A reply streamed into one message updated in place (chat.update is Tier 3, about 50 a
   * minute: one write every 1.2 s keeps a stream within it), continued at the chunk limit.
   * In a thread, where the workspace has it, Slack's own streaming is used instead: the
   * message is started with chat.startStream, grown with chat.appendStream and closed with
   * chat.stopStream (`nativeStream`); text taken back (a progress line replaced) closes the
   * stream and is corrected by chat.update. A slash command's answer goes through its
   * response_url instead.
   */
  function streamTo(target: ReplyTarget, recipient?: { userId?: string | undefined; teamId?: string | undefined }): StreamSurface | undefined {
    if (target.invocationId !== undefined && !target.dmUserId) return undefined;
    // The channel each message of this stream is in (a DM's id comes back from the post).
    const streamChannels = new Map<string, string>();
    /** Messages that are native streams, with the Markdown they show; `open` until stopped. */
    const natives = new Map<string, { shown: string; open: boolean }>();
    const team = recipient?.teamId ?? '';
    const where = async () => ({ channel: target.dmUserId ? await dmChannelOf(target.dmUserId) : target.channelId, thread: target.dmUserId ? undefined : target.threadId });
    const channelOf = async (ts: string) => streamChannels.get(ts) ?? (await where()).channel;
    const stop = async (ts: string) => {
      const native = natives.get(ts);
      if (!native?.open) return;
      native.open = false;
      await web().chat.stopStream({ channel: await channelOf(ts), ts });
    };
    return {
      limit: SLACK_CHUNK,
      minIntervalMs: SLACK_STREAM_INTERVAL_MS,
      async post(text) {
        const { channel, thread } = await where();
        if (thread && nativeStreams.get(team) !== false) {
          const started = await startNative(channel, thread, text, recipient);
          if (started) {
            streamChannels.set(started, channel);
            natives.set(started, { shown: text, open: true });
            return started;
          }
        }
        const posted = await web().chat.postMessage({ channel, text: toMrkdwn(text), ...(thread ? { thread_ts: thread } : {}) });
        if (!posted.ts) throw new Error('chat.postMessage answered no ts');
        streamChannels.set(posted.ts, posted.channel ?? channel);
        return posted.ts;
      },
      async edit(ts, text) {
        const native = natives.get(ts);
        if (native?.open && text.startsWith(native.shown)) {
          const delta = text.slice(native.shown.length);
          try {
            if (delta !== '') await web().chat.appendStream({ channel: await channelOf(ts), ts, markdown_text: delta });
            native.shown = text;
            return;
          } catch (err) {
            // A stream Slack closed (it times out): the message is still there to edit.
            logger.debug({ err, ts }, 'chat.appendStream failed; the stream goes on by edits');
            native.open = false;
          }
        }
        if (native?.open) await stop(ts);
        await web().chat.update({ channel: await channelOf(ts), ts, text: toMrkdwn(text) });
      },
      async remove(ts) {
        await stop(ts).catch((err: unknown) => logger.debug({ err, ts }, 'chat.stopStream failed'));
        await web().chat.delete({ channel: await channelOf(ts), ts });
        streamChannels.delete(ts);
        natives.delete(ts);
      },
      async complete(ids) {
        for (const ts of ids) {
          try {
            await stop(ts);
          } catch (err) {
            logger.warn({ err, ts }, 'a native stream could not be stopped');
          }
        }
      },
    };
  }

  /**
   * chat.startStream, or undefined when the stream cannot start here: an answer that means the
   * workspace (or this app's token) has no native streaming is remembered for the workspace,
   * so its later replies go straight to edits; other refusals count for this reply only.
   */
  async function startNative(channel: string, thread: string, text: string, recipient: { userId?: string | undefined; teamId?: string | undefined } | undefined): Promise<string | undefined> {
    const team = recipient?.teamId ?? '';
    // Outside a DM Slack wants to know whom the stream is for.
    const forWhom = !channel.startsWith('D') && recipient?.userId && recipient.teamId ? { recipient_user_id: recipient.userId, recipient_team_id: recipient.teamId } : {};
    try {
      const started = await web().chat.startStream({ channel, thread_ts: thread, markdown_text: text, ...forWhom });
      if (!started.ts) throw new Error('chat.startStream answered no ts');
      nativeStreams.set(team, true);
      return started.ts;
    } catch (err) {
      const code = (err as { data?: { error?: unknown } }).data?.error;
      if (typeof code === 'string' && nativeStreamUnsupported(code)) {
        nativeStreams.set(team, false);
        logger.info({ team, error: code }, 'this workspace has no native streaming; replies stream by edits');
      } else {
        logger.warn({ err, channel }, 'chat.startStream failed; this reply streams by edits');
      }
      return undefined;
    }
  }

  async function show(request: ApprovalRequest): Promise<void> {
    const card = slackCard(request);
    const dest = cardDestinations(request, 'slack', deps);
    let posted = 0;
    let firstError: unknown;
    const deliver = async (channel: string | Promise<string>, threadTs?: string) => {
      try {
        const id = await channel;
        const res = await web().chat.postMessage({ channel: id, text: card.text, blocks: card.blocks, ...(threadTs ? { thread_ts: threadTs } : {}) });
        if (!res.ts) throw new Error('chat.postMessage returned no ts');
        await cards.add(request.id, { channelId: id, messageId: res.ts });
        posted++;
        if (card.fullText) {
          // The full command, in the card's thread: a card never hides part of what will run.
          for (const chunk of chunkText(`\`\`\`\n${escapeMrkdwn(card.fullText)}\n\`\`\``, SLACK_CHUNK)) {
            await web().chat.postMessage({ channel: id, text: chunk, thread_ts: res.ts });
          }
        }
      } catch (err) {
        firstError ??= err;
        logger.warn({ err, approvalId: request.id }, 'could not post an approval card');
      }
    };
    if (dest.channel) await deliver(dest.channel.channelId, dest.channel.threadId);
    for (const userId of dest.dmUserIds) await deliver(dmChannelOf(userId));
    if (posted === 0) throw new Error(`approval ${request.id}: no card could be posted on Slack`, { cause: firstError });
  }

  /**
   * Undecided in time: the card is posted again to each `escalateTo` entry — `channel:<id>` in
   * that channel, `usergroup:<id>` in the card's own channel with the group mentioned, a user
   * id by DM — each copy decidable and linking the original.
   */
  async function escalate(request: ApprovalRequest): Promise<void> {
    const original = (await cards.get(request.id))[0];
    const link = original ? `https://slack.com/archives/${original.channelId}/p${original.messageId.replace('.', '')}` : undefined;
    const card = slackCard(request);
    const intro = (who: string) => `Escalated to ${who}: nobody decided this in time.${link ? ` Original: <${link}|the card>` : ''}`;
    for (const raw of request.escalateTo ?? []) {
      const target = raw.trim();
      try {
        let channel: string;
        let who: string;
        if (target.startsWith('channel:')) {
          channel = target.slice('channel:'.length);
          who = `<#${channel}>`;
        } else if (target.startsWith('usergroup:')) {
          if (!original) continue;
          channel = original.channelId;
          who = `<!subteam^${target.slice('usergroup:'.length)}>`;
        } else {
          const userId = target.startsWith('user:') ? target.slice('user:'.length) : target;
          channel = await dmChannelOf(userId);
          who = `<@${userId}>`;
        }
        const res = await web().chat.postMessage({ channel, text: intro(who), blocks: [{ type: 'section', text: { type: 'mrkdwn', text: intro(who) } }, ...card.blocks] });
        if (res.ts) await cards.add(request.id, { channelId: channel, messageId: res.ts });
      } catch (err) {
        logger.warn({ err, approvalId: request.id, target }, 'could not escalate an approval card');
      }
    }
  }

  /** Edits every copy of the card, plus `clicked` if the store does not know it (a restart). */
  async function update(request: ApprovalRequest, clicked?: CardRef): Promise<void> {
    const { text, blocks } = slackCard(request);
    const refs = [...(await cards.get(request.id))];
    if (clicked && !refs.some((r) => r.channelId === clicked.channelId && r.messageId === clicked.messageId)) refs.push(clicked);
    for (const ref of refs) {
      try {
        await web().chat.update({ channel: ref.channelId, ts: ref.messageId, text, blocks });
      } catch (err) {
        logger.warn({ err, approvalId: request.id, ref }, 'could not update an approval card');
      }
    }
  }

  async function onClick({ ack, body, action, client }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> {
    // Slack wants the acknowledgement within 3 s, before the router's slower work.
    await ack();
    const channel = body.channel?.id ?? body.container?.channel_id;
    const userId = body.user.id;
    const ephemeral = async (text: string) => {
      if (channel) await client.chat.postEphemeral({ channel, user: userId, text });
    };
    const clicked = channel && body.message?.ts ? { channelId: channel, messageId: body.message.ts } : undefined;
    const reasonFor = decodeReasonAction(action.value ?? '');
    if (reasonFor) {
      // "Deny with reason": a form; its submission (onReason) decides. Where the card is rides along.
      await client.views.open({
        trigger_id: body.trigger_id,
        view: {
          type: 'modal',
          callback_id: REASON_VIEW_ID,
          private_metadata: JSON.stringify({ approvalId: reasonFor.approvalId, ...(clicked ? { channel: clicked.channelId, ts: clicked.messageId } : {}), origin: slackClickOrigin(body) }),
          title: { type: 'plain_text', text: 'Deny with reason' },
          submit: { type: 'plain_text', text: 'Deny' },
          close: { type: 'plain_text', text: 'Cancel' },
          blocks: [
            { type: 'input', block_id: REASON_FIELD, label: { type: 'plain_text', text: 'Why is this denied?' }, element: { type: 'plain_text_input', action_id: REASON_FIELD, multiline: true, max_length: REASON_MAX } },
          ],
        },
      });
      return;
    }
    const decoded = decodeApprovalAction(action.value ?? '');
    if (!decoded) return ephemeral(INVALID_ACTION_TEXT);
    return decide({ ...decoded, userId, origin: slackClickOrigin(body) }, clicked, ephemeral);
  }

  /**
   * The clicker's user groups, for `usergroup:` approver entries: the same cache the access gate
   * reads (usergroups.ts). Unknown when the lookup fails, and then such entries never match.
   */
  async function usergroupsOf(userId: string): Promise<string[] | undefined> {
    try {
      const ids = await usergroups.usergroupsOf(userId);
      return ids === undefined ? undefined : [...ids];
    } catch (err) {
      logger.warn({ err, userId }, 'user groups unknown for an approval click; usergroup entries do not match');
      return undefined;
    }
  }

  /** The reason form was submitted: a deny with that reason, decided like a click. */
  async function onReason({ ack, body, view, client }: SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs): Promise<void> {
    await ack();
    let meta: { approvalId?: unknown; channel?: unknown; ts?: unknown } = {};
    try {
      meta = JSON.parse(view.private_metadata) as typeof meta;
    } catch {
      // A view this app did not open: nothing to decide.
    }
    if (typeof meta.approvalId !== 'string') return;
    const userId = body.user.id;
    const channel = typeof meta.channel === 'string' ? meta.channel : undefined;
    const clicked = channel && typeof meta.ts === 'string' ? { channelId: channel, messageId: meta.ts } : undefined;
    const ephemeral = async (text: string) => {
      if (channel) await client.chat.postEphemeral({ channel, user: userId, text });
    };
    const reason = view.state.values[REASON_FIELD]?.[REASON_FIELD]?.value ?? '';
    await decide({ approvalId: meta.approvalId, decision: 'deny', userId, reason, origin: originFromMetadata(view.private_metadata) }, clicked, ephemeral);
  }

  async function decide(click: { approvalId: string; decision: ApprovalDecision; userId: string; reason?: string; origin: ClickOrigin | undefined }, clicked: CardRef | undefined, ephemeral: (text: string) => Promise<unknown>): Promise<void> {
    let outcome: ClickOutcome;
    try {
      const usergroupIds = await usergroupsOf(click.userId);
      outcome = await deps.onApprovalClick({ ...click, ...(usergroupIds ? { usergroupIds } : {}) });
    } catch (err) {
      logger.error({ err, approvalId: click.approvalId }, 'the router failed to take an approval click');
      await ephemeral(CLICK_FAILED_TEXT);
      return;
    }
    switch (outcome.kind) {
      case 'not-approver':
        await ephemeral(outcome.text ?? NOT_APPROVER_TEXT);
        return;
      case 'not-found':
        await ephemeral(NOT_FOUND_TEXT);
        return;
      case 'already-resolved':
        // Stale copies first: a failed private reply must not leave buttons behind.
        await update(outcome.request, clicked);
        await ephemeral(alreadyResolvedText(outcome.request, mention));
        return;
      case 'resolved':
        return update(outcome.request, clicked);
    }
  }

  /**
   * The secrets tool's prompt: an ephemeral message (only the requester sees it) in the
   * conversation, or a message in their DM, with a button; the click opens a modal (views.open
   * needs the click's trigger_id).
   */
  async function askSecret(target: ReplyTarget, prompt: { id: string; name: string; reason: string; requesterId: string }): Promise<void> {
    const text = secretPromptText(prompt);
    const blocks = [
      { type: 'section', text: { type: 'plain_text', text } },
      { type: 'actions', block_id: 'secret', elements: [{ type: 'button', action_id: secretButtonId(prompt.id), value: prompt.id, style: 'primary', text: { type: 'plain_text', text: `Enter ${prompt.name}`.slice(0, 75) } }] },
    ];
    if (target.dmUserId || target.channelId.startsWith('D')) {
      const channel = target.dmUserId ? await dmChannelOf(target.dmUserId) : target.channelId;
      await web().chat.postMessage({ channel, text, blocks });
      return;
    }
    await web().chat.postEphemeral({ channel: target.channelId, user: prompt.requesterId, text, blocks, ...(target.threadId ? { thread_ts: target.threadId } : {}) });
  }

  /** The owners' pairing card, in each owner's DM: Approve and Deny buttons, decided as `/pair` is. */
  async function askPairing(request: PairingCardRequest): Promise<void> {
    const text = pairingCardText(request);
    const blocks = [
      { type: 'section', text: { type: 'plain_text', text } },
      {
        type: 'actions',
        block_id: 'pairing',
        elements: [
          { type: 'button', style: 'primary', text: { type: 'plain_text', text: 'Approve' }, action_id: pairingButtonId('approve', request.code), value: pairingButtonId('approve', request.code) },
          { type: 'button', style: 'danger', text: { type: 'plain_text', text: 'Deny' }, action_id: pairingButtonId('deny', request.code), value: pairingButtonId('deny', request.code) },
        ],
      },
    ];
    let posted = 0;
    for (const ownerId of request.ownerIds) {
      try {
        await web().chat.postMessage({ channel: await dmChannelOf(ownerId), text, blocks });
        posted++;
      } catch (err) {
        logger.warn({ err, ownerId }, 'could not post a pairing card');
      }
    }
    if (posted === 0) throw new Error('no pairing card could be posted on Slack');
  }

  /** A click on a pairing card: a decision replaces the card with the outcome; anything else is said privately. */
  async function onPairingClick({ ack, body, action, client }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> {
    await ack();
    const channel = body.channel?.id ?? body.container?.channel_id;
    const privately = async (text: string) => {
      if (channel) await client.chat.postEphemeral({ channel, user: body.user.id, text });
    };
    const decoded = decodePairingButton(action.action_id);
    const decide = deps.pairingClicks;
    if (!decoded || !decide) return privately(INVALID_ACTION_TEXT);
    const outcome = await decide({ ...decoded, userId: body.user.id });
    if (!outcome.final) return privately(outcome.text);
    const text = `${outcome.text} (by <@${body.user.id}>)`;
    if (channel && body.message?.ts) await client.chat.update({ channel, ts: body.message.ts, text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] });
  }

  async function onSecretClick({ ack, body, action, client }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> {
    await ack();
    const handlers = deps.secretPrompts;
    const id = secretRequestId(action.action_id, SECRET_BUTTON_PREFIX);
    const channel = body.channel?.id ?? body.container?.channel_id;
    const privately = async (text: string) => {
      if (channel) await client.chat.postEphemeral({ channel, user: body.user.id, text });
    };
    if (!handlers || !id) return privately(INVALID_ACTION_TEXT);
    const origin = slackClickOrigin(body);
    const opened = await handlers.open({ id, userId: body.user.id, origin });
    if (!opened.ok) return privately(opened.text);
    await client.views.open({
      trigger_id: body.trigger_id,
      view: {
        type: 'modal',
        callback_id: secretModalId(id),
        // Where the button was: the submission is judged by it (Slack sends no channel with a view).
        private_metadata: JSON.stringify({ origin }),
        title: { type: 'plain_text', text: 'Secret' },
        submit: { type: 'plain_text', text: 'Save' },
        close: { type: 'plain_text', text: 'Cancel' },
        blocks: [{ type: 'input', block_id: 'secret', label: { type: 'plain_text', text: opened.name.slice(0, 2000) }, element: { type: 'plain_text_input', action_id: SECRET_FIELD, max_length: SECRET_MAX_CHARS } }],
      },
    });
  }

  async function onSecretSubmit({ ack, body, view }: SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs): Promise<void> {
    const handlers = deps.secretPrompts;
    const id = secretRequestId(view.callback_id, SECRET_MODAL_PREFIX);
    const value = view.state.values.secret?.[SECRET_FIELD]?.value ?? '';
    const outcome = handlers && id ? await handlers.submit({ id, userId: body.user.id, value, origin: originFromMetadata(view.private_metadata) }) : { ok: false, text: INVALID_ACTION_TEXT };
    // The modal shows the outcome in place; the value is in no answer.
    await ack({ response_action: 'update', view: { type: 'modal', title: { type: 'plain_text', text: 'Secret' }, close: { type: 'plain_text', text: 'Close' }, blocks: [{ type: 'section', text: { type: 'plain_text', text: outcome.text } }] } });
  }

  /** ask_user: one message per question in the conversation, a button per option and "Other…". */
  async function askUser(target: ReplyTarget, prompt: UserQuestionPrompt): Promise<void> {
    const channel = target.dmUserId ? await dmChannelOf(target.dmUserId) : target.channelId;
    for (const [i, q] of prompt.questions.entries()) {
      const text = askQuestionText(prompt, i, `<@${prompt.requesterId}>`);
      const elements = [
        ...q.options.map((o, j) => ({ type: 'button' as const, action_id: askButtonId(prompt.id, i, j), value: String(j), text: { type: 'plain_text' as const, text: o.label }, ...(j === 0 ? { style: 'primary' as const } : {}) })),
        { type: 'button' as const, action_id: askOtherId(prompt.id, i), value: 'other', text: { type: 'plain_text' as const, text: 'Other…' } },
      ];
      await web().chat.postMessage({ channel, text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }, { type: 'actions', block_id: `ask-${i}`, elements }], ...(target.threadId ? { thread_ts: target.threadId } : {}) });
    }
  }

  const messageActions = slackMessageActions(web, { token: () => config.botToken!, fileHosts, polls: deps.polls });

  /** A click on a poll's button: a vote, or refused quietly (poll.ts). */
  async function onPollClick({ ack, body, action }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> {
    await ack();
    const click = { actionId: action.action_id, value: action.value, channelId: body.channel?.id ?? body.container?.channel_id, messageId: body.message?.ts ?? body.container?.message_ts, userId: body.user.id };
    if (!deps.polls) {
      logger.info({ userId: click.userId }, 'poll click refused: no poll store here');
      return;
    }
    await votePollClick(click, { polls: deps.polls, web: web(), channelKind: (channel) => messageActions.channelKind(channel), logger });
  }

  async function onAskClick({ ack, body, action, client }: SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs): Promise<void> {
    await ack();
    const handlers = deps.userQuestions;
    const channel = body.channel?.id ?? body.container?.channel_id;
    const privately = async (text: string) => {
      if (channel) await client.chat.postEphemeral({ channel, user: body.user.id, text });
    };
    const choice = decodeAskId(action.action_id, ASK_BUTTON_PREFIX);
    const other = decodeAskId(action.action_id, ASK_OTHER_PREFIX);
    if (!handlers || (!choice && !other)) return privately(INVALID_ACTION_TEXT);
    if (choice) {
      const outcome = await handlers.choose({ id: choice.id, question: choice.question, option: choice.option, userId: body.user.id, origin: slackClickOrigin(body) });
      if (!outcome.ok) return privately(outcome.text);
      // The buttons give way to what was chosen (and by whom).
      const text = `${outcome.summary} (by <@${body.user.id}>)`;
      if (channel && body.message?.ts) await client.chat.update({ channel, ts: body.message.ts, text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] });
      return;
    }
    const origin = slackClickOrigin(body);
    const opened = await handlers.open({ id: other!.id, question: other!.question, userId: body.user.id, origin });
    if (!opened.ok) return privately(opened.text);
    await client.views.open({
      trigger_id: body.trigger_id,
      view: {
        type: 'modal',
        callback_id: askModalId(other!.id, other!.question),
        // Where the button was: the answer is judged by it (Slack sends no channel with a view).
        private_metadata: JSON.stringify({ origin }),
        title: { type: 'plain_text', text: opened.title.slice(0, 24) },
        submit: { type: 'plain_text', text: 'Answer' },
        close: { type: 'plain_text', text: 'Cancel' },
        blocks: [{ type: 'input', block_id: 'ask', label: { type: 'plain_text', text: 'Your answer' }, element: { type: 'plain_text_input', action_id: ASK_FIELD, multiline: true, max_length: ASK_MAX_CHARS } }],
      },
    });
  }

  async function onAskSubmit({ ack, body, view }: SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs): Promise<void> {
    const handlers = deps.userQuestions;
    const form = decodeAskId(view.callback_id, ASK_MODAL_PREFIX);
    const value = view.state.values.ask?.[ASK_FIELD]?.value ?? '';
    const outcome = handlers && form ? await handlers.submit({ id: form.id, question: form.question, userId: body.user.id, value, origin: originFromMetadata(view.private_metadata) }) : { ok: false as const, text: INVALID_ACTION_TEXT };
    const text = outcome.ok ? `${outcome.text}\n${outcome.summary}` : outcome.text;
    await ack({ response_action: 'update', view: { type: 'modal', title: { type: 'plain_text', text: 'Question' }, close: { type: 'plain_text', text: 'Close' }, blocks: [{ type: 'section', text: { type: 'plain_text', text } }] } });
  }

  /**
   * A slash command: acknowledged at once (Slack allows 3 s; the router may wait minutes for
   * an approval before `/exec` answers), then handed to the router as its typed form. The
   * answer comes back through `send` with the trigger id and goes to the response_url.
   */
  async function onCommand(
    { command, ack, respond, client }: SlackCommandMiddlewareArgs & AllMiddlewareArgs,
    onMessage: (message: InboundMessage) => Promise<void>,
  ): Promise<void> {
    const parsed = slackCommandText(command.command, command.text, skillCommands);
    if (!parsed.ok) {
      await ack({ response_type: 'ephemeral', text: parsed.message });
      return;
    }
    await ack();
    const now = Date.now();
    for (const [id, entry] of invocations) if (now - entry.at > RESPONSE_URL_MS) invocations.delete(id);
    invocations.set(command.trigger_id, { respond, ephemeral: answersPrivately(parsed.name), at: now });
    const isDm = command.channel_id.startsWith('D');
    const inbound = inboundFromSlackCommand(command, parsed.text, isDm ? undefined : await channelName(client, command.channel_id));
    // Not awaited, as for messages: the listener must not hold Bolt's request for the turn.
    onMessage(inbound).catch((err: unknown) => logger.error({ err, command: parsed.name }, 'slash command failed'));
  }

  /**
   * Whether a delivery is new: this process's memory first (every key recorded), then the
   * store's log shared by the instances. A store that cannot be reached does not stop the
   * message: this process's answer stands (a retry reaching another instance meanwhile may be
   * handled there too), and the failure is logged.
   */
  async function firstDelivery(keys: readonly string[]): Promise<boolean> {
    const fresh = keys.map((key) => seen.firstTime(key)).every(Boolean);
    if (!fresh || !deps.deliveries) return fresh;
    try {
      return await deps.deliveries.firstTime(keys);
    } catch (err) {
      logger.warn({ err, keys }, 'shared delivery log unreachable; this instance alone decided the delivery is new');
      return true;
    }
  }

  function build(onMessage: (message: InboundMessage) => Promise<void>): App {
    // No conversation store: Bolt's default one (`context.conversation`, which Warden does not
    // read) looks every event's conversation up and makes an Error for each one it does not find.
    const common = { token: config.botToken!, logger: boltLogger(), clientOptions, convoStore: false as const };
    if (mode === 'socket') {
      socketReceiver = new SocketModeReceiver({ appToken: config.appToken!, logger: common.logger, installerOptions: { clientOptions } });
      app = new App({ ...common, receiver: socketReceiver, socketMode: true });
    } else {
      // The signature is checked in front of the receiver (signature.ts), by Bolt's rules with a
      // cheaper constant-time comparison; the receiver's own check would repeat it.
      const receiver = new HTTPReceiver({ signingSecret: config.signingSecret!, signatureVerification: false, logger: common.logger });
      receiver.requestListener = signedOnly(receiver.requestListener, config.signingSecret!, common.logger);
      app = new App({ ...common, receiver });
    }
    const a = app;
    // Slack redelivers an event (same event_id) when the first delivery was not acknowledged in
    // time, and a mention in a channel arrives twice (as `message` and as `app_mention`): one
    // turn, not two — on any instance, when several share the store (Bolt acknowledged the
    // event already, so the store's round trip holds no one up).
    // The checks run side by side, but their answers are taken in arrival order: a quicker
    // answer for a later message must not hand it on before an earlier one (a conversation's
    // messages reach the router in the order this instance got them).
    let previousDecision: Promise<unknown> = Promise.resolve();
    const handle = async (event: SlackMessageEvent, teamId: string | undefined, client: WebClient, userId: string | undefined, botId?: string) => {
      botUserId ??= userId;
      const isDm = event.channel_type === 'im';
      const inbound = inboundFromSlack(event, { teamId, botUserId, botId, channelName: isDm ? undefined : await channelName(client, event.channel), files: { token: config.botToken!, hosts: fileHosts } });
      if (!inbound) return;
      // Not awaited: the turn may take minutes, and the listener must not hold Bolt's ack path.
      onMessage(inbound).catch((err: unknown) => logger.error({ err, ts: event.ts }, 'inbound message failed'));
    };
    /** The Events API callbacks the adapter follows: messages, mentions, renames and user group changes. */
    const onEvent = async (event: slackTypes.SlackEvent, body: { team_id?: string }, client: WebClient, context: { botUserId?: string; botId?: string }): Promise<void> => {
      switch (event.type) {
        case 'message':
        case 'app_mention':
          return handle(event as unknown as SlackMessageEvent, body.team_id, client, context.botUserId, context.botId);
        // A channel's name is cached; a rename replaces it, so a scope keyed by name follows the
        // rename from the next message on (a stale name would keep or miss a name key's restrictions).
        case 'channel_rename':
        case 'group_rename':
          channelNames.set(event.channel.id, event.channel.name);
          return;
        // A group's members changed: the next message reads them again.
        case 'subteam_members_changed':
        case 'subteam_updated':
        case 'subteam_created':
          usergroups.invalidate();
          return;
      }
    };
    // Events are handed on here, in the app's one middleware, and go no further: Bolt runs every
    // listener's middleware, with its own copy of the event's arguments, for every event it
    // receives, so each listener adds a share to every message's cost (17 listeners once cost
    // about 8 % of the HTTP path's CPU per message). Clicks, forms and commands go on to their
    // listeners below; no event reaches them. Bolt's own `ignoreSelf` ran before this.
    a.use(async (args) => {
      const { body, next, context } = args;
      const keys = deliveryKeys(body);
      if (keys.length > 0) {
        const check = firstDelivery(keys);
        const before = previousDecision;
        const decided = before.then(() => check);
        previousDecision = decided;
        if (!(await decided)) {
          logger.info({ eventId: (body as { event_id?: unknown }).event_id, retryNum: context.retryNum }, 'redelivered event skipped');
          return;
        }
      }
      const event = (args as { event?: slackTypes.SlackEvent }).event;
      if (event !== undefined) return onEvent(event, body as { team_id?: string }, args.client, context);
      await next();
    });
    // One listener per kind of payload, each handing on by id. The handlers are chosen exactly
    // as their own listeners did.
    type ActionArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>> & AllMiddlewareArgs;
    type ViewArgs = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;
    const actions: readonly (readonly [RegExp, (args: ActionArgs) => Promise<void>])[] = [
      [APPROVAL_ACTION_PATTERN, onClick],
      [new RegExp(`^${PAIRING_BUTTON_PREFIX}`), (args) => onPairingClick(args).catch((err: unknown) => logger.error({ err }, 'pairing card click failed'))],
      [new RegExp(`^${SECRET_BUTTON_PREFIX}`), (args) => onSecretClick(args).catch((err: unknown) => logger.error({ err }, 'secret prompt click failed'))],
      [new RegExp(`^(${ASK_BUTTON_PREFIX}|${ASK_OTHER_PREFIX})`), (args) => onAskClick(args).catch((err: unknown) => logger.error({ err }, 'question click failed'))],
      [new RegExp(`^${POLL_ACTION_PREFIX}`), (args) => onPollClick(args).catch((err: unknown) => logger.error({ err }, 'poll click failed'))],
    ];
    const views: readonly (readonly [RegExp, (args: ViewArgs) => Promise<void>])[] = [
      [new RegExp(`^${SECRET_MODAL_PREFIX}`), (args) => onSecretSubmit(args).catch((err: unknown) => logger.error({ err: (err as Error).message }, 'secret submission failed'))],
      [new RegExp(`^${ASK_MODAL_PREFIX}`), (args) => onAskSubmit(args).catch((err: unknown) => logger.error({ err }, 'question answer form failed'))],
      [new RegExp(`^${REASON_VIEW_ID}$`), onReason],
    ];
    // Every handler whose pattern matches runs, as every matching listener did.
    a.action<BlockAction<ButtonAction>>(anyOf(actions), async (args) => void (await Promise.all(actions.filter(([p]) => p.test(args.action.action_id)).map(([, h]) => h(args)))));
    a.view<ViewSubmitAction>(anyOf(views), async (args) => void (await Promise.all(views.filter(([p]) => p.test(args.view.callback_id)).map(([, h]) => h(args)))));
    a.command(SLACK_COMMAND_PATTERN, (args) => onCommand(args, onMessage));
    a.error(async (err) => void logger.error({ err }, 'slack app error'));
    return a;
  }

  return {
    provider: 'slack',
    mode,
    get eventsUrl() {
      const address = server?.address() as AddressInfo | null | undefined;
      return address ? `http://${address.address}:${address.port}/slack/events` : undefined;
    },
    async start(onMessage) {
      if (app) throw new Error('the Slack adapter is already started');
      const a = build(onMessage);
      if (mode === 'socket') await a.start();
      else server = (await a.start({ port: config.port, host: config.host })) as Server;
      logger.info({ mode, url: server ? (server.address() as AddressInfo).port : undefined }, 'slack adapter ready');
    },
    // Socket mode: the WebSocket to Slack is open; HTTP mode: the receiver listens.
    connected: () => (mode === 'socket' ? (socketReceiver?.client.websocket?.isActive() ?? false) : (server?.listening ?? false)),
    send,
    streamTo,
    memberships: usergroups,
    attachmentFrom: (ref) => slackAttachment(ref, { token: config.botToken!, hosts: fileHosts }),
    setSkillCommands(specs) {
      skillCommands = [...specs];
    },
    // Slack offers bot tokens no typing indicator outside assistant threads; nothing to show.
    typing: () => () => undefined,
    ...(deps.secretPrompts ? { askSecret } : {}),
    ...(deps.pairingClicks ? { askPairing } : {}),
    ...(deps.userQuestions ? { askUser } : {}),
    messageActions,
    approvals: { provider: 'slack', show, update: (request) => update(request), escalate },
    async stop() {
      const a = app;
      if (!a) return;
      const socket = socketReceiver?.client;
      // Wait for the socket's close handshake, or the process lingers on a half-closed socket.
      const disconnected = socket ? new Promise<void>((resolve) => socket.once('disconnected', () => resolve())) : undefined;
      await a.stop();
      await disconnected;
      app = undefined;
      server = undefined;
      invocations.clear();
      socketReceiver = undefined;
    },
  };
}

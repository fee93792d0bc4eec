import { discordMessageActions } from './message-actions.js';
import { once } from 'node:events';
import { bareDiscordToken } from '../../src/config/platform-tokens.js';
import {
  Client,
  ComponentType,
  TextInputStyle,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Partials,
  Routes,
  type APIMessage,
  type ButtonInteraction,
  type ModalMessageModalSubmitInteraction,
  type ChatInputCommandInteraction,
  type Interaction,
  type Message,
  type ModalSubmitInteraction,
  type RawFile,
  type RESTOptions,
} from 'discord.js';
import type { ApprovalRequest } from '../../src/approvals/types.js';
import { ConfigError } from '../../src/config/errors.js';
import type { DiscordAdapterConfig as DiscordConfig } from '../../src/config/schema/channels.js';
import type { ChatAdapter, ClickOutcome, InboundMessage, OutboundFile, OutboundMessage, ReplyTarget, SentMessage, UserQuestionPrompt } from '../../src/gateway/types.js';
import { fitFiles, withNotes } from '../common/outbound-files.js';
import type { SkillCommandSpec } from '../../src/skills/commands.js';
import type { StreamSurface } from '../../src/gateway/reply-stream.js';
import { log } from '../../src/log/log.js';
import { cardDestinations, type AdapterDeps } from '../common/adapter-deps.js';
import {
  alreadyResolvedText,
  CLICK_FAILED_TEXT,
  decodeApprovalAction,
  decodeReasonAction,
  encodeReasonAction,
  INVALID_ACTION_TEXT,
  isApprovalAction,
  NOT_APPROVER_TEXT,
  NOT_FOUND_TEXT,
  REASON_FIELD,
  REASON_MAX,
} from '../common/approval-card.js';
import { memoryCardStore } from '../../src/gateway/approval-card-store.js';
import { chunkText } from '../../src/gateway/chunk-text.js';
import { answersPrivately, isCommandName } from '../common/native-commands.js';
import { discordCard, mention } from './card.js';
import { registerCommands } from './commands.js';
import { clickOriginOf, DISCORD_FILE_HOSTS, discordAttachment, inboundFromCommand, inboundFromDiscord } from './inbound.js';
import { shardClientOptions, watchShards } from './shards.js';
import { discordRestRequest } from './rest-request.js';
import { background } from '../../src/util/background.js';
import { decodePairingButton, PAIRING_BUTTON_PREFIX, pairingButtonId } from '../common/pairing-card.js';
import { pairingCardText, type PairingCardRequest } from '../../src/gateway/pairing-decision.js';
import { ASK_BUTTON_PREFIX, ASK_FIELD, ASK_MAX_CHARS, ASK_MODAL_PREFIX, ASK_OTHER_PREFIX, askButtonId, askModalId, askOtherId, askQuestionText, decodeAskId } from '../common/ask-user-prompt.js';
import { SECRET_BUTTON_PREFIX, SECRET_FIELD, SECRET_MAX_CHARS, SECRET_MODAL_PREFIX, secretButtonId, secretModalId, secretPromptText, secretRequestId } from '../common/secret-prompt.js';

/** Discord rejects message content over 2,000 characters. */
export const DISCORD_MESSAGE_LIMIT = 2_000;
/** Replies longer than this go out as a file with a short note instead of a wall of messages. */
export const DISCORD_LONG_REPLY = 8_000;
/** Least time between two writes of a streamed reply. */
export const DISCORD_STREAM_INTERVAL_MS = 1_000;
/** Discord's upload limit for a server without boosts (10 MiB), and its attachments per message. */
export const DISCORD_FILE_LIMIT = 10 * 1024 * 1024;
const DISCORD_MAX_FILES = 10;
/** Discord shows "typing" for about 10 s per call. */
const TYPING_REFRESH_MS = 8_000;
/** An interaction token is valid for 15 minutes; later answers go to the channel instead. */
const INTERACTION_TOKEN_MS = 14 * 60_000;

export const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.DirectMessages,
];

export interface DiscordAdapter extends ChatAdapter {
  readonly provider: 'discord';
  /** The bot's own user id, known once started. */
  readonly botUserId: string | undefined;
}

const attach = (file: { name: string; content: string }): RawFile => ({ name: file.name, data: Buffer.from(file.content, 'utf8') });
const rawFile = (file: OutboundFile): RawFile => {
  const data = Buffer.alloc(file.data.length);
  file.data.copy(data);
  return { name: file.name, data, contentType: file.mimeType };
};

/**
 * The Discord adapter: discord.js for the gateway, its REST client for posting. Normalises
 * guild, thread and DM messages, chunks replies, renders approval cards and turns clicks into
 * calls of the router's `onApprovalClick`.
 */
export function createDiscordAdapter(
  config: DiscordConfig,
  deps: AdapterDeps,
  /** discord.js client options layered over the adapter's own; for tests and benchmarks. */
  clientOverrides: { rest?: Partial<RESTOptions> } = {},
  options: {
    /** Register the slash commands at start (default on); off when another process manages them. */
    registerCommands?: boolean;
  } = {},
): DiscordAdapter {
  // A pasted `Bot ` prefix is stripped (start and doctor warn about it, src/config/platform-tokens.ts).
  const token = config.token === undefined ? undefined : bareDiscordToken(config.token);
  if (!token) throw new ConfigError(undefined, [{ path: 'channels.discord.token', message: 'required to start the Discord adapter' }]);
  const cards = deps.cards ?? memoryCardStore();
  const dmChannels = new Map<string, string>();
  const logger = log.child({ adapter: 'discord' });
  let client: Client | undefined;
  let shards: ReturnType<typeof watchShards> | undefined;
  /** The skill commands registered beside the built-ins; they follow the skill files. */
  let skillCommands: readonly SkillCommandSpec[] = [];
  /** Registrations run one after another, each with the latest set. */
  let registration: Promise<void> = Promise.resolve();
  const registers = options.registerCommands !== false;

  function register(): Promise<void> {
    registration = registration.then(async () => {
      const c = client;
      if (!c?.application) return;
      // Typed commands keep working if registration fails; the log says why the picker is empty.
      await registerCommands(c.rest, c.application.id, skillCommands).then(
        (outcome) => logger.info({ outcome, skillCommands: skillCommands.map((s) => s.name) }, 'slash commands checked'),
        (err: unknown) => logger.warn({ err }, 'could not register slash commands; typed commands still work'),
      );
    });
    return registration;
  }

  // Discord's file hosts, and the configured REST host (a proxy or the test fake) serving them.
  const fileHosts = [...DISCORD_FILE_HOSTS, ...(config.apiBaseUrl ? [new URL(config.apiBaseUrl).host] : [])];

  const rest = () => {
    if (!client) throw new Error('the Discord adapter is not started');
    return client.rest;
  };

  async function dmChannelOf(userId: string): Promise<string> {
    const known = dmChannels.get(userId);
    if (known) return known;
    const channel = (await rest().post(Routes.userChannels(), { body: { recipient_id: userId } })) as { id: string };
    dmChannels.set(userId, channel.id);
    return channel.id;
  }

  const channelOf = (target: ReplyTarget): Promise<string> | string =>
    target.dmUserId ? dmChannelOf(target.dmUserId) : (target.threadId ?? target.channelId);

  const post = (channelId: string, body: object, files?: RawFile[]) =>
    rest().post(Routes.channelMessages(channelId), { body, ...(files ? { files } : {}) }) as Promise<APIMessage>;

  /** Slash commands whose deferred reply still waits for the router's answer, by interaction id. */
  const invocations = new Map<string, { interaction: ChatInputCommandInteraction; ephemeral: boolean; at: number }>();

  function replyChunks(message: OutboundMessage): { chunks: string[]; file: { name: string; content: string } | undefined } {
    let text = message.text;
    let file = message.attachment;
    if (!file && text.length > DISCORD_LONG_REPLY) {
      file = { name: 'reply.md', content: text };
      text = `The reply is ${text.length.toLocaleString('en-US')} characters, so it is attached as reply.md.`;
    }
    const chunks = chunkText(text, DISCORD_MESSAGE_LIMIT);
    if (chunks.length === 0 && file) chunks.push('');
    return { chunks, file };
  }

  /**
   * Answers a slash command through its interaction: the first chunk fills the deferred reply,
   * the rest follow up with the same visibility. One answer per invocation; false when the
   * invocation is unknown or its token has run out, and the caller posts to the channel.
   */
  async function answerInvocation(invocationId: string, message: OutboundMessage): Promise<boolean> {
    const pending = invocations.get(invocationId);
    invocations.delete(invocationId);
    if (!pending || Date.now() - pending.at > INTERACTION_TOKEN_MS) return false;
    const { interaction, ephemeral } = pending;
    const { fit, notes } = fitFiles(message.files, { maxBytes: DISCORD_FILE_LIMIT, maxFiles: DISCORD_MAX_FILES });
    const { chunks, file } = replyChunks({ ...message, text: withNotes(message.text, notes) });
    // A deferred reply left empty would show "thinking…" until the token runs out.
    if (chunks.length === 0) chunks.push('(no reply)');
    const allowedMentions = { parse: ['users' as const] };
    let sent = 0;
    try {
      for (const [i, content] of chunks.entries()) {
        const files =
          i === chunks.length - 1 ? [...(file ? [{ attachment: Buffer.from(file.content, 'utf8'), name: file.name }] : []), ...fit.map((f) => ({ attachment: f.data, name: f.name }))] : [];
        if (i === 0) await interaction.editReply({ content, allowedMentions, files });
        else await interaction.followUp({ content, allowedMentions, files, ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}) });
        sent++;
      }
    } catch (err) {
      logger.warn({ err, invocationId, sent }, 'could not answer a slash command through its interaction');
    }
    // Only an answer that never started is posted again in the channel; a partial one is not repeated.
    return sent > 0;
  }

  async function send(target: ReplyTarget, message: OutboundMessage): Promise<void | SentMessage> {
    if (target.invocationId !== undefined && !target.dmUserId && (await answerInvocation(target.invocationId, message))) return;
    const channelId = await channelOf(target);
    // Model output may contain @everyone or role mentions; only user mentions may notify.
    const safeMentions = { allowed_mentions: { parse: ['users'] } };
    // An approval's outcome replies to its card when the card is in this channel.
    const card = message.linkedApproval ? (await cards.get(message.linkedApproval)).find((r) => r.channelId === channelId) : undefined;
    const reference = card ? { message_reference: { message_id: card.messageId, fail_if_not_exists: false } } : {};
    const { fit, notes } = fitFiles(message.files, { maxBytes: DISCORD_FILE_LIMIT, maxFiles: DISCORD_MAX_FILES });
    const { chunks, file } = replyChunks({ ...message, text: withNotes(message.text, notes) });
    if (chunks.length === 0 && fit.length > 0) chunks.push('');
    // One at a time: the order of the chunks is the order of the text; the files go with the last.
    let first: string | undefined;
    for (const [i, content] of chunks.entries()) {
      const last = i === chunks.length - 1;
      const files = last ? [...(file ? [attach(file)] : []), ...fit.map(rawFile)] : [];
      const posted = await post(channelId, { content, ...safeMentions, ...(i === 0 ? reference : {}) }, files.length > 0 ? files : undefined);
      first ??= posted.id;
    }
    return { messageId: first };
  }

  /**
   * A reply streamed into one message edited in place, continued in the next at the length
   * limit. Discord allows about five edits per five seconds in a channel: one write a second
   * leaves room for the rest of the conversation. A slash command's answer goes through its
   * interaction instead (`send`), so it is not streamed.
   */
  function streamTo(target: ReplyTarget): StreamSurface | undefined {
    if (target.invocationId !== undefined && !target.dmUserId) return undefined;
    const safeMentions = { allowed_mentions: { parse: ['users'] } };
    return {
      limit: DISCORD_MESSAGE_LIMIT,
      minIntervalMs: DISCORD_STREAM_INTERVAL_MS,
      async post(text) {
        return (await post(await channelOf(target), { content: text, ...safeMentions })).id;
      },
      async edit(id, text) {
        await rest().patch(Routes.channelMessage(await channelOf(target), id), { body: { content: text, ...safeMentions } });
      },
      async remove(id) {
        await rest().delete(Routes.channelMessage(await channelOf(target), id));
      },
    };
  }

  /** Typing indicators still running; stopping the adapter ends them all. */
  const typingStops = new Set<() => void>();

  function typing(target: ReplyTarget): () => void {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      typingStops.delete(stop);
    };
    const beat = async () => {
      if (stopped) return;
      try {
        await rest().post(Routes.channelTyping(await channelOf(target)));
      } catch (err) {
        logger.debug({ err }, 'typing indicator failed');
      }
      if (!stopped) timer = setTimeout(() => background(beat(), 'typing indicator not refreshed', { log: logger }), TYPING_REFRESH_MS);
    };
    typingStops.add(stop);
    background(beat(), 'typing indicator not sent', { log: logger });
    return stop;
  }

  async function show(request: ApprovalRequest): Promise<void> {
    const { body, fullText } = discordCard(request);
    const dest = cardDestinations(request, 'discord', deps);
    const failures: unknown[] = [];
    const deliver = async (channelId: Promise<string> | string) => {
      try {
        const id = await channelId;
        const posted = await post(id, body, fullText ? [attach(fullText)] : undefined);
        await cards.add(request.id, { channelId: id, messageId: posted.id });
      } catch (err) {
        failures.push(err);
        logger.warn({ err, approvalId: request.id }, 'could not post an approval card');
      }
    };
    if (dest.channel) await deliver(dest.channel.threadId ?? dest.channel.channelId);
    for (const userId of dest.dmUserIds) await deliver(dmChannelOf(userId));
    const posted = (dest.channel ? 1 : 0) + dest.dmUserIds.length - failures.length;
    if (posted <= 0) throw new Error(`approval ${request.id}: no card could be posted on Discord`, { cause: failures[0] });
  }

  /**
   * Undecided in time (its rule's `escalateAfterSec`): the card is posted again to each
   * `escalateTo` entry — `channel:<id>` in that channel, `role:<id>` in the card's own channel
   * with the role mentioned, a user id (`user:<id>`) by DM — each copy decidable and linking the
   * original. The original is edited by the service to say it was escalated.
   */
  async function escalate(request: ApprovalRequest): Promise<void> {
    const original = (await cards.get(request.id))[0];
    const guildId = original ? (client?.channels.cache.get(original.channelId) as { guildId?: string } | undefined)?.guildId : undefined;
    const link = original ? `https://discord.com/channels/${guildId ?? '@me'}/${original.channelId}/${original.messageId}` : undefined;
    const { body } = discordCard(request);
    const intro = (who: string) => `Escalated to ${who}: nobody decided this in time.${link ? ` Original: ${link}` : ''}`;
    for (const raw of request.escalateTo ?? []) {
      const target = raw.trim();
      try {
        let channelId: string;
        let content: string;
        let mentions: { parse: []; roles?: string[] } = { parse: [] };
        if (target.startsWith('channel:') || target.startsWith('#')) {
          channelId = target.startsWith('#') ? target.slice(1) : target.slice('channel:'.length);
          content = intro(`<#${channelId}>`);
        } else if (target.startsWith('role:')) {
          const role = target.slice('role:'.length);
          if (!original) continue;
          channelId = original.channelId;
          content = intro(`<@&${role}>`);
          // The role is pinged: escalation exists to reach them.
          mentions = { parse: [], roles: [role] };
        } else {
          const userId = target.startsWith('user:') ? target.slice('user:'.length) : target;
          channelId = await dmChannelOf(userId);
          content = intro(`<@${userId}>`);
        }
        const posted = await post(channelId, { ...body, content, allowed_mentions: mentions });
        await cards.add(request.id, { channelId, messageId: posted.id });
      } catch (err) {
        logger.warn({ err, approvalId: request.id, target }, 'could not escalate an approval card');
      }
    }
  }

  /** Edits every copy of the card; `skipMessageId` is the copy a click already edited. */
  async function update(request: ApprovalRequest, skipMessageId?: string): Promise<void> {
    const { body } = discordCard(request);
    for (const ref of await cards.get(request.id)) {
      if (ref.messageId === skipMessageId) continue;
      try {
        await rest().patch(Routes.channelMessage(ref.channelId, ref.messageId), { body });
      } catch (err) {
        logger.warn({ err, approvalId: request.id, ref }, 'could not update an approval card');
      }
    }
  }

  /**
   * A slash command: acknowledged at once with a deferred reply (the router may wait minutes,
   * for an approval, before `/exec` answers), private for the commands that only concern the
   * sender, then handed to the router as its typed form. The router's answer comes back
   * through `send` with the invocation id and fills the deferred reply.
   */
  async function onCommand(interaction: ChatInputCommandInteraction, onMessage: (message: InboundMessage) => Promise<void>): Promise<void> {
    const inbound = await inboundFromCommand(interaction);
    // A command Warden does not have any more is answered by the router, privately.
    const known = isCommandName(interaction.commandName) || skillCommands.some((s) => s.name === interaction.commandName);
    const ephemeral = answersPrivately(interaction.commandName) || !known;
    await interaction.deferReply(ephemeral ? { flags: MessageFlags.Ephemeral } : {});
    const now = Date.now();
    for (const [id, entry] of invocations) if (now - entry.at > INTERACTION_TOKEN_MS) invocations.delete(id);
    invocations.set(interaction.id, { interaction, ephemeral, at: now });
    await onMessage(inbound);
  }

  /** The clicker's roles as the interaction's member object carries them (a `role:` approver entry reads them). */
  function rolesOf(interaction: ButtonInteraction | ModalSubmitInteraction): string[] | undefined {
    const member = interaction.member;
    if (!member) return undefined;
    const roles = member.roles;
    // A cached member lists @everyone (the guild's id) among its roles; the raw member does not. Neither names a role entry can mean.
    const ids = (Array.isArray(roles) ? [...roles] : [...roles.cache.keys()]).filter((id) => id !== interaction.guildId);
    return ids.length > 0 ? ids : undefined;
  }

  async function onClick(interaction: ButtonInteraction): Promise<void> {
    const reasonFor = decodeReasonAction(interaction.customId);
    if (reasonFor) {
      // "Deny with reason": the form asks for the reason; its submission decides (onReason).
      await interaction.showModal({
        custom_id: encodeReasonAction(reasonFor.approvalId),
        title: 'Deny with reason',
        components: [
          {
            type: ComponentType.ActionRow,
            components: [{ type: ComponentType.TextInput, custom_id: REASON_FIELD, label: 'Why is this denied?', style: TextInputStyle.Paragraph, required: true, max_length: REASON_MAX }],
          },
        ],
      });
      return;
    }
    const action = decodeApprovalAction(interaction.customId);
    if (!action) {
      await interaction.reply({ content: INVALID_ACTION_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    // Acknowledge first: the router may take longer than Discord's 3 s to decide.
    await interaction.deferUpdate();
    await decideFrom(interaction, { ...action, userId: interaction.user.id, roleIds: rolesOf(interaction), origin: clickOriginOf(interaction) });
  }

  /** The reason form of a card was submitted: a deny with that reason, decided like a click. */
  async function onReason(interaction: ModalSubmitInteraction): Promise<void> {
    const target = decodeReasonAction(interaction.customId);
    if (!target || !interaction.isFromMessage()) {
      await interaction.reply({ content: INVALID_ACTION_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    const reason = interaction.fields.getTextInputValue(REASON_FIELD);
    await interaction.deferUpdate();
    await decideFrom(interaction, { approvalId: target.approvalId, decision: 'deny', userId: interaction.user.id, roleIds: rolesOf(interaction), reason, origin: clickOriginOf(interaction) });
  }

  async function decideFrom(interaction: ButtonInteraction | ModalMessageModalSubmitInteraction, click: Parameters<typeof deps.onApprovalClick>[0]): Promise<void> {
    const ephemeral = (content: string) => interaction.followUp({ content, flags: MessageFlags.Ephemeral });
    let outcome: ClickOutcome;
    try {
      outcome = await deps.onApprovalClick(click);
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
      case 'resolved': {
        // The clicked message is a copy of this card even if the store forgot it (a restart
        // with an in-memory store): remember it so every copy reaches the final state.
        await cards.add(outcome.request.id, { channelId: interaction.message.channelId, messageId: interaction.message.id });
        const edited = await interaction.editReply(discordCard(outcome.request).body).then(
          () => true,
          (err: unknown) => (logger.warn({ err, approvalId: outcome.request.id }, 'could not edit the clicked card through the interaction'), false),
        );
        await update(outcome.request, edited ? interaction.message.id : undefined);
        if (outcome.kind === 'already-resolved') await ephemeral(alreadyResolvedText(outcome.request, mention));
        return;
      }
    }
  }

  /**
   * The secrets tool's prompt: in the requester's DM (only they read it), a button that opens a
   * modal. Discord cannot open a modal unprompted: a modal answers an interaction (the click).
   */
  async function askSecret(_target: ReplyTarget, prompt: { id: string; name: string; reason: string; requesterId: string }): Promise<void> {
    const channelId = await dmChannelOf(prompt.requesterId);
    await post(channelId, {
      content: secretPromptText(prompt),
      components: [{ type: 1, components: [{ type: 2, style: 1, label: `Enter ${prompt.name}`.slice(0, 80), custom_id: secretButtonId(prompt.id) }] }],
      allowed_mentions: { parse: [] },
    });
  }

  async function onSecretClick(interaction: ButtonInteraction): Promise<void> {
    const handlers = deps.secretPrompts;
    const id = secretRequestId(interaction.customId, SECRET_BUTTON_PREFIX);
    if (!handlers || !id) {
      await interaction.reply({ content: INVALID_ACTION_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    const opened = await handlers.open({ id, userId: interaction.user.id, origin: clickOriginOf(interaction) });
    if (!opened.ok) {
      await interaction.reply({ content: opened.text, flags: MessageFlags.Ephemeral });
      return;
    }
    await interaction.showModal({
      custom_id: secretModalId(id),
      title: `Secret ${opened.name}`.slice(0, 45),
      components: [{ type: 1, components: [{ type: 4, custom_id: SECRET_FIELD, label: opened.name.slice(0, 45), style: 1, required: true, min_length: 1, max_length: SECRET_MAX_CHARS }] }],
    });
  }

  async function onSecretSubmit(interaction: ModalSubmitInteraction): Promise<void> {
    const handlers = deps.secretPrompts;
    const id = secretRequestId(interaction.customId, SECRET_MODAL_PREFIX);
    if (!handlers || !id) {
      await interaction.reply({ content: INVALID_ACTION_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    const outcome = await handlers.submit({ id, userId: interaction.user.id, value: interaction.fields.getTextInputValue(SECRET_FIELD), origin: clickOriginOf(interaction) });
    await interaction.reply({ content: outcome.text, flags: MessageFlags.Ephemeral });
  }

  /** The owners' pairing card, in each owner's DM: Approve and Deny buttons, decided as `/pair` is. */
  async function askPairing(request: PairingCardRequest): Promise<void> {
    const body = {
      content: pairingCardText(request),
      components: [
        {
          type: 1,
          components: [
            { type: 2, style: 3, label: 'Approve', custom_id: pairingButtonId('approve', request.code) },
            { type: 2, style: 4, label: 'Deny', custom_id: pairingButtonId('deny', request.code) },
          ],
        },
      ],
      allowed_mentions: { parse: [] },
    };
    let posted = 0;
    for (const ownerId of request.ownerIds) {
      try {
        await post(await dmChannelOf(ownerId), body);
        posted++;
      } catch (err) {
        logger.warn({ err, ownerId }, 'could not post a pairing card');
      }
    }
    if (posted === 0) throw new Error('no pairing card could be posted on Discord');
  }

  /**
   * A click on a pairing card: acknowledged at once; a decision edits the clicked card to the
   * outcome without buttons, anything else (not an owner, already decided) is said privately.
   */
  async function onPairingClick(interaction: ButtonInteraction): Promise<void> {
    const action = decodePairingButton(interaction.customId);
    const decide = deps.pairingClicks;
    if (!action || !decide) {
      await interaction.reply({ content: INVALID_ACTION_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    await interaction.deferUpdate();
    const outcome = await decide({ ...action, userId: interaction.user.id });
    if (outcome.final) await interaction.editReply({ content: `${outcome.text} (by <@${interaction.user.id}>)`, components: [], allowedMentions: { parse: [] } });
    else await interaction.followUp({ content: outcome.text, flags: MessageFlags.Ephemeral });
  }

  /** ask_user: one message per question in the conversation, a button per option and "Other…". */
  async function askUser(target: ReplyTarget, prompt: UserQuestionPrompt): Promise<void> {
    const channelId = await channelOf(target);
    for (const [i, q] of prompt.questions.entries()) {
      const options = q.options.map((o, j) => ({ type: 2, style: j === 0 ? 1 : 2, label: o.label, custom_id: askButtonId(prompt.id, i, j) }));
      await post(channelId, {
        content: askQuestionText(prompt, i, mention(prompt.requesterId)),
        components: [
          { type: 1, components: options },
          { type: 1, components: [{ type: 2, style: 2, label: 'Other…', custom_id: askOtherId(prompt.id, i) }] },
        ],
        // The person asked is pinged; nobody else is.
        allowed_mentions: { users: [prompt.requesterId] },
      });
    }
  }

  async function onAskClick(interaction: ButtonInteraction): Promise<void> {
    const handlers = deps.userQuestions;
    const choice = decodeAskId(interaction.customId, ASK_BUTTON_PREFIX);
    const other = decodeAskId(interaction.customId, ASK_OTHER_PREFIX);
    if (!handlers || (!choice && !other)) {
      await interaction.reply({ content: INVALID_ACTION_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    if (choice) {
      const outcome = await handlers.choose({ id: choice.id, question: choice.question, option: choice.option, userId: interaction.user.id, origin: clickOriginOf(interaction) });
      // Refusals are private; an accepted answer replaces the buttons with what was chosen.
      if (!outcome.ok) await interaction.reply({ content: outcome.text, flags: MessageFlags.Ephemeral });
      else await interaction.update({ content: `${outcome.summary} (by ${mention(interaction.user.id)})`, components: [], allowedMentions: { parse: [] } });
      return;
    }
    const opened = await handlers.open({ id: other!.id, question: other!.question, userId: interaction.user.id, origin: clickOriginOf(interaction) });
    if (!opened.ok) {
      await interaction.reply({ content: opened.text, flags: MessageFlags.Ephemeral });
      return;
    }
    await interaction.showModal({
      custom_id: askModalId(other!.id, other!.question),
      title: opened.title.slice(0, 45),
      components: [{ type: 1, components: [{ type: 4, custom_id: ASK_FIELD, label: 'Your answer', style: 2, required: true, min_length: 1, max_length: ASK_MAX_CHARS }] }],
    });
  }

  async function onAskSubmit(interaction: ModalSubmitInteraction): Promise<void> {
    const handlers = deps.userQuestions;
    const form = decodeAskId(interaction.customId, ASK_MODAL_PREFIX);
    if (!handlers || !form) {
      await interaction.reply({ content: INVALID_ACTION_TEXT, flags: MessageFlags.Ephemeral });
      return;
    }
    const outcome = await handlers.submit({ id: form.id, question: form.question, userId: interaction.user.id, value: interaction.fields.getTextInputValue(ASK_FIELD), origin: clickOriginOf(interaction) });
    await interaction.reply({ content: outcome.ok ? `${outcome.text}\n${outcome.summary}` : outcome.text, flags: MessageFlags.Ephemeral });
  }

  const adapter: DiscordAdapter = {
    provider: 'discord',
    get botUserId() {
      return client?.user?.id;
    },
    attachmentFrom: (ref) => discordAttachment(ref, fileHosts),
    async start(onMessage: (message: InboundMessage) => Promise<void>) {
      if (client) throw new Error('the Discord adapter is already started');
      client = new Client({
        intents: DISCORD_INTENTS,
        // Without the partial, DMs and messages in threads the client never saw are dropped.
        partials: [Partials.Channel],
        // Every shard runs in this client: one handler, one store, one command registration.
        ...shardClientOptions(config.shards, config.shardCount),
        // discord.js's undici strategy, and Node's fetch for file uploads (rest-request.ts).
        rest: { makeRequest: discordRestRequest, ...(config.apiBaseUrl ? { api: config.apiBaseUrl } : {}), ...clientOverrides.rest },
      });
      const c = client;
      shards = watchShards(c);
      c.on(Events.MessageCreate, (message: Message) => {
        const botId = c.user?.id;
        if (!botId) return;
        inboundFromDiscord(message, botId, fileHosts)
          .then((inbound) => (inbound ? onMessage(inbound) : undefined))
          .catch((err: unknown) => logger.error({ err, messageId: message.id }, 'inbound message failed'));
      });
      c.on(Events.InteractionCreate, (interaction: Interaction) => {
        if (interaction.isChatInputCommand()) {
          onCommand(interaction, onMessage).catch((err: unknown) => logger.error({ err, command: interaction.commandName }, 'slash command failed'));
          return;
        }
        if (interaction.isModalSubmit() && interaction.customId.startsWith(SECRET_MODAL_PREFIX)) {
          // The value is never logged: only the modal's id on failure.
          onSecretSubmit(interaction).catch((err: unknown) => logger.error({ err: (err as Error).message, customId: interaction.customId }, 'secret submission failed'));
          return;
        }
        if (interaction.isButton() && interaction.customId.startsWith(PAIRING_BUTTON_PREFIX)) {
          onPairingClick(interaction).catch((err: unknown) => logger.error({ err, customId: interaction.customId }, 'pairing card click failed'));
          return;
        }
        if (interaction.isButton() && interaction.customId.startsWith(SECRET_BUTTON_PREFIX)) {
          onSecretClick(interaction).catch((err: unknown) => logger.error({ err, customId: interaction.customId }, 'secret prompt click failed'));
          return;
        }
        if (interaction.isModalSubmit() && interaction.customId.startsWith(ASK_MODAL_PREFIX)) {
          onAskSubmit(interaction).catch((err: unknown) => logger.error({ err, customId: interaction.customId }, 'question answer form failed'));
          return;
        }
        if (interaction.isButton() && (interaction.customId.startsWith(ASK_BUTTON_PREFIX) || interaction.customId.startsWith(ASK_OTHER_PREFIX))) {
          onAskClick(interaction).catch((err: unknown) => logger.error({ err, customId: interaction.customId }, 'question click failed'));
          return;
        }
        if (interaction.isModalSubmit() && decodeReasonAction(interaction.customId)) {
          onReason(interaction).catch((err: unknown) => logger.error({ err, customId: interaction.customId }, 'approval reason form failed'));
          return;
        }
        if (!interaction.isButton() || !(isApprovalAction(interaction.customId) || decodeReasonAction(interaction.customId))) return;
        onClick(interaction).catch((err: unknown) => logger.error({ err, customId: interaction.customId }, 'approval click failed'));
      });
      c.on(Events.Error, (err) => logger.error({ err }, 'discord client error'));
      const ready = once(c, Events.ClientReady);
      await c.login(token);
      await ready;
      logger.info({ user: c.user?.tag, shards: c.ws.shards.size }, 'discord adapter ready');
      // Once for the application, after every shard is ready: commands are global, not per shard.
      if (registers) await register();
    },
    setSkillCommands(specs) {
      skillCommands = [...specs];
      if (registers && client?.isReady()) background(register(), 'skill slash commands not registered; typed commands still work', { log: logger });
    },
    // Every shard: a shard that is down leaves its guilds unanswered.
    connected: () => (client?.isReady() ?? false) && (shards?.states().every((s) => s.status === 'ready') ?? true),
    shards: () => (client && config.shards !== undefined ? (shards?.states() ?? []) : []),
    send,
    streamTo,
    typing,
    ...(deps.secretPrompts ? { askSecret } : {}),
    ...(deps.pairingClicks ? { askPairing } : {}),
    ...(deps.userQuestions ? { askUser } : {}),
    messageActions: discordMessageActions(() => client, fileHosts),
    approvals: { provider: 'discord', show, update: (request) => update(request), escalate },
    async stop() {
      for (const stopTyping of [...typingStops]) stopTyping();
      invocations.clear();
      const c = client;
      client = undefined;
      shards = undefined;
      await c?.destroy();
    },
  };
  return adapter;
}

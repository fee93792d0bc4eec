import type { AgentRuntime, TurnEvent, TurnInput, TurnRequest, TurnStart } from '../agent/types.js';
import type { WardenConfig } from '../config/index.js';
import type { HookBus } from '../hooks/bus.js';
import { messageHookContext } from '../hooks/context.js';
import { log } from '../log/log.js';
import { modelReadsImages } from '../models/vision.js';
import { NO_MODEL_HINT } from './commands.js';
import { takeInFiles } from './inbound-files.js';
import { ReplyStream, toolProgressLine, type StreamSurface } from './reply-stream.js';
import type { Route } from './router.js';
import { streamingFor } from './streaming-setting.js';
import type { ChatAdapter, OutboundFile, OutboundMessage } from './types.js';
import type { UsageService } from '../usage/service.js';

/**
 * A model turn for a routed message and the reply it makes: the message's files taken in
 * (images for the model, speech transcribed, the rest saved), the reply streamed where the
 * platform edits in place, and the files the turn's tools made posted with it. The gateway
 * decides when a turn runs (its queue); this decides what the turn is given and what it says.
 */

/** A turn Warden starts itself: subagent results arrived, or a deferred call's outcome. */
export type TurnOrigin = 'session' | 'approval' | undefined;

/** The gateway's current config and agent, as the turn starts. */
export interface TurnView {
  config: WardenConfig;
  agent: AgentRuntime | undefined;
}

/** What a turn's reply needs of the running gateway. */
export interface TurnReplyDeps {
  adapters: ReadonlyMap<string, ChatAdapter>;
  hooks?: HookBus | undefined;
  env?: Record<string, string | undefined> | undefined;
  workspaceOf?: ((agentId: string) => string) | undefined;
  /** Usage accounting and budgets for the media understanding calls a message's files take. */
  meter?: Pick<UsageService, 'admit' | 'settle'> | undefined;
}

/** One turn to run and reply to: what `turnReply` is asked. */
export interface TurnReplyRequest {
  route: Route;
  signal: AbortSignal;
  view: TurnView;
  /** Who started the turn: undefined for a person's message (only then are its files taken in). */
  origin?: TurnOrigin | undefined;
  runId?: string | undefined;
  /**
   * Where the conversation's previous replies are still going out while this turn runs (the
   * gateway overlaps the two), resolves once they are out; a streamed reply posts only after
   * that, so the platform shows the replies in order.
   */
  delivered?: ((sessionKey: string) => Promise<void>) | undefined;
  /** Only for a person's message (`origin` undefined). */
  start?: TurnStart | undefined;
  /** Only for a person's message (`origin` undefined). */
  written?: TurnRequest['written'] | undefined;
  rerunnable?: boolean | undefined;
}

export async function turnReply(deps: TurnReplyDeps, turn: TurnReplyRequest): Promise<OutboundMessage | undefined> {
  const { route, signal, view, origin, runId, delivered, start, written, rerunnable } = turn;
  const { agent } = view;
  if (!agent || route.context.model === undefined) return { text: NO_MODEL_HINT };
  // Files the message carried: images for the model, the rest saved under inbox/ and named.
  const workspace = route.attachments && origin === undefined ? deps.workspaceOf?.(route.agentId) : undefined;
  const inbound = workspace ? await takeInFiles(route.attachments, { workspaceDir: workspace, vision: modelReadsImages(view.config, route.context.model), signal, transcribe: transcriber(deps, route, view, workspace, signal) }) : undefined;
  const said = inbound && inbound.notes.length > 0 ? `${route.text}\n\n${inbound.notes.join('\n')}` : route.text;
  const sink = new TurnSink(streams(deps, route, view) ? { deps, route, delivered } : undefined);
  // Built field by field (no spreads): this runs for every message.
  let input: TurnInput;
  // An approval's outcome is Warden's own text (the call's output inside it is wrapped as untrusted).
  if (origin === 'approval') input = { text: route.text, origin: 'user' };
  else if (origin) input = { text: route.text, origin };
  else {
    input = { text: said, senderName: route.context.senderName };
    if (inbound && inbound.images.length > 0) input.images = inbound.images;
  }
  const request: TurnRequest = {
    onEvent: sink.onEvent,
    sessionKey: route.sessionKey,
    turn: route.context,
    input,
    signal,
    // Undecided approvals never hold the conversation: the call is deferred, the turn ends.
    deferApprovals: true,
  };
  if (sink.streams) request.onTextDelta = sink.onTextDelta;
  if (runId !== undefined) request.runId = runId;
  if (start && origin === undefined) request.start = start;
  if (written && origin === undefined) request.written = written;
  if (rerunnable === true) request.rerunnable = true;
  const outcome = await agent.runTurn(request);
  if (outcome.status === 'failed') log.warn({ sessionKey: route.sessionKey, error: outcome.error }, 'turn failed');
  const { stream, files } = sink;
  if (stream && (await stream.finish(outcome.reply))) {
    log.debug({ sessionKey: route.sessionKey, ...stream.stats }, 'reply streamed');
    streamSent(deps, route, outcome.reply);
    return files ? { text: '', files } : undefined;
  }
  return files ? { text: outcome.reply, files } : { text: outcome.reply };
}

/**
 * What a running turn reports back: the files its tools made (images, speech, screenshots) and,
 * where the reply streams, the stream. The surface and the stream are made when the turn first
 * writes or runs a tool, so a turn that only answers (an instant model) costs neither.
 */
class TurnSink {
  stream: ReplyStream | undefined;
  /** Files the turn's tools made for the people here; undefined while there are none. */
  files: OutboundFile[] | undefined;
  /** The adapter's surface once asked for (undefined: the adapter has none for this target). */
  private surface: { made: StreamSurface | undefined } | undefined;

  /** Handed to the agent (assigned here rather than as class fields: no function names to set per turn). */
  readonly onTextDelta: (delta: string) => void;
  readonly onEvent: (event: TurnEvent) => void;

  /** `streamTo`: where the reply would stream; undefined where it does not. */
  constructor(private readonly streamTo: StreamPlace | undefined) {
    this.onTextDelta = (delta) => this.live()?.append(delta);
    this.onEvent = (event) => {
      if (event.type === 'toolResult' && event.files && event.files.length > 0) (this.files ??= []).push(...event.files);
      if (!this.streamTo) return;
      if (event.type === 'toolCall') this.live()?.progress(toolProgressLine(event.tool));
      else if (event.type === 'modelCall' && event.round > 1) this.live()?.newRound();
    };
  }

  get streams(): boolean {
    return this.streamTo !== undefined;
  }

  private live(): ReplyStream | undefined {
    if (this.stream) return this.stream;
    if (!this.streamTo) return undefined;
    this.surface ??= { made: streamSurface(this.streamTo) };
    return this.surface.made ? (this.stream = new ReplyStream(this.surface.made)) : undefined;
  }
}

/**
 * Speech to text through the media understanding module, where `tools.media` is configured. The
 * module loads at the first file to transcribe: a bot that never gets one does not hold it.
 */
function transcriber(deps: TurnReplyDeps, route: Route, view: Pick<TurnView, 'config'>, workspaceDir: string, signal: AbortSignal) {
  if (!view.config.tools.media) return undefined;
  return async (file: { id: string; name: string; mimeType: string | undefined; data: Buffer }) => {
    const { formatUnderstanding, understandAttachments } = await import('../media-understanding/index.js');
    const [outcome] = await understandAttachments([{ id: file.id, name: file.name, contentType: file.mimeType, data: file.data }], {
      config: view.config,
      turn: route.context,
      sessionKey: route.sessionKey,
      workspaceDir,
      modelHasVision: modelReadsImages(view.config, route.context.model),
      signal,
      ...(deps.env ? { env: deps.env } : {}),
      ...(deps.meter ? { usage: deps.meter } : {}),
    });
    if (outcome?.status === 'understood') return { ok: true as const, text: formatUnderstanding([outcome]) };
    return { ok: false as const, why: outcome?.status === 'failed' ? `transcription failed (${outcome.attempts.map((a) => `${a.by}: ${a.error}`).join('; ')})` : (outcome?.reason ?? 'not understood') };
  };
}

/**
 * Whether this turn's reply streams: the platform can edit in place and `streaming` is on for
 * the conversation. Never with a message_sending hook: it may rewrite or cancel a reply, so it
 * must see the text before anyone does.
 */
function streams(deps: TurnReplyDeps, route: Route, view: Pick<TurnView, 'config'>): boolean {
  const adapter = deps.adapters.get(route.replyTo.provider);
  if (!adapter?.streamTo || deps.hooks?.has('message_sending')) return false;
  const c = route.context;
  return streamingFor(view.config, { provider: route.replyTo.provider, guildId: c.guildId, guildName: c.guildName, channelId: c.channelId, channelName: c.channelName });
}

/** Where a turn's reply streams, and what its first post waits for. */
interface StreamPlace {
  deps: TurnReplyDeps;
  route: Route;
  delivered: ((sessionKey: string) => Promise<void>) | undefined;
}

/** The adapter's surface for this turn's streamed reply, its first post behind the previous replies' delivery. */
function streamSurface({ deps, route, delivered }: StreamPlace): StreamSurface | undefined {
  const c = route.context;
  const surface = deps.adapters.get(route.replyTo.provider)?.streamTo?.(route.replyTo, { userId: c.senderId, teamId: c.guildId });
  if (!surface || !delivered) return surface;
  return {
    ...surface,
    post: async (text) => {
      await delivered(route.sessionKey);
      return surface.post(text);
    },
  };
}

/** message_sent for a streamed reply, as `sendWithHooks` fires it for a plain one. */
function streamSent(deps: TurnReplyDeps, route: Route, text: string): void {
  const hooks = deps.hooks;
  if (!hooks?.has('message_sent')) return;
  const target = route.replyTo;
  const to = target.dmUserId ? `dm:${target.dmUserId}` : target.channelId;
  hooks.fire('message_sent', { to, content: text, success: true, sessionKey: route.sessionKey }, messageHookContext(target, { sessionKey: route.sessionKey, turn: route.context }));
}

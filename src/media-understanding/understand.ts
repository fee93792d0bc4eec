import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { WardenConfig } from '../config/schema/index.js';
import type { MediaAudioConfig, MediaCapabilityConfig, MediaModelEntry, MediaUnderstandingConfig } from '../config/schema/media-understanding.js';
import type { ApprovalRequester } from '../approvals/types.js';
import type { Resolver } from '../net/index.js';
import type { TurnContext } from '../policy/context.js';
import type { ToolImplementation } from '../tools/types.js';
import { wrapUntrusted } from '../tools/untrusted.js';
import { TtlCache } from '../util/ttl-cache.js';
import { log as rootLog } from '../log/log.js';
import { capabilityOf, mediaType } from './capabilities.js';
import { runCliEntry } from './cli.js';
import { entryCapabilities, entryLabel, matchesPreferred, resolveClient } from './providers.js';
import { callMediaProvider, SYSTEM_PROMPT, type MediaAnswer } from './requests.js';
import { transcriptionUsage } from '../usage/estimate.js';
import type { UsageService } from '../usage/service.js';
import type { Attachment, AttachmentOutcome, MediaCapability } from './types.js';

/**
 * Media understanding: the attachments of one inbound message in, a transcript or description
 * per attachment out, before the turn runs (OpenClaw's `tools.media`). Entries of
 * `tools.media.models` are tried in order for each capability (`preferredModel` first); one
 * that fails, times out or cannot take the file's size hands over to the next.
 */
export interface UnderstandingContext {
  config: WardenConfig;
  /** The conversation the attachments arrived in: its agent's exec policy governs cli entries. */
  turn: TurnContext;
  sessionKey: string;
  workspaceDir: string;
  /** The answering model reads images itself: images are passed on, not described. */
  modelHasVision?: boolean | undefined;
  /** For cli entries the allowlist does not cover; without it such an entry is skipped. */
  approvals?: ApprovalRequester | undefined;
  /** The exec tool cli entries run through (built from the config when absent). */
  exec?: ToolImplementation | undefined;
  env?: Record<string, string | undefined> | undefined;
  signal?: AbortSignal | undefined;
  log?: Logger | undefined;
  /** Usage accounting and budgets (src/usage): a provider call is admitted first and recorded after, like a turn's. */
  usage?: Pick<UsageService, 'admit' | 'settle'> | undefined;
  /** Test seams for the guarded provider requests. */
  net?: { resolve?: Resolver | undefined; dial?: ((a: string) => string) | undefined } | undefined;
  cache?: TtlCache<string> | undefined;
}

/** OpenClaw's capability defaults. */
const DEFAULTS: Record<MediaCapability, { maxBytes: number; maxChars: number | undefined; timeoutSec: number; prompt: string }> = {
  image: { maxBytes: 10 * 1024 * 1024, maxChars: 500, timeoutSec: 60, prompt: 'Describe this image: what it shows, and any text in it verbatim.' },
  audio: { maxBytes: 20 * 1024 * 1024, maxChars: undefined, timeoutSec: 60, prompt: '' },
  video: { maxBytes: 50 * 1024 * 1024, maxChars: 500, timeoutSec: 120, prompt: 'Describe what happens in this video, and transcribe any speech or on-screen text.' },
};
/** Audio this small is empty or corrupt: not worth a transcription request. */
const MIN_AUDIO_BYTES = 1024;
const LABEL: Record<MediaCapability, string> = { image: 'Image', audio: 'Audio', video: 'Video' };

const sharedCache = new TtlCache<string>(500);
const CACHE_TTL_MS = 24 * 60 * 60_000;

type CapabilitySettings = MediaCapabilityConfig & Partial<Pick<MediaAudioConfig, 'echoTranscript' | 'echoFormat'>>;

/** The entries that may serve a capability, in the order they are tried. */
export function candidateEntries(media: MediaUnderstandingConfig, capability: MediaCapability, config: WardenConfig): MediaModelEntry[] {
  const settings = media[capability] as CapabilitySettings | undefined;
  const entries = media.models.filter((e) => entryCapabilities(e, config).includes(capability));
  const preferred = settings?.preferredModel;
  if (!preferred) return entries;
  return [...entries.filter((e) => matchesPreferred(e, preferred)), ...entries.filter((e) => !matchesPreferred(e, preferred))];
}

/** Which attachments of a capability are processed (`attachments.mode`, `maxAttachments`, `prefer`). */
export function selectAttachments<T>(items: T[], settings: CapabilitySettings | undefined): { chosen: T[]; left: T[] } {
  const policy = settings?.attachments;
  const ordered = policy?.prefer === 'last' ? [...items].reverse() : items;
  const max = policy?.mode === 'all' ? Math.min(policy.maxAttachments ?? ordered.length, 8) : Math.min(policy?.maxAttachments ?? 1, 1);
  return { chosen: ordered.slice(0, max), left: ordered.slice(max) };
}

/** Understands the attachments of one message. Never throws for a provider's failure; an abort propagates. */
export async function understandAttachments(attachments: readonly Attachment[], ctx: UnderstandingContext): Promise<AttachmentOutcome[]> {
  const media = ctx.config.tools.media;
  if (!media) return attachments.map(() => ({ status: 'skipped', capability: undefined, reason: 'media understanding is not configured (tools.media)' }));
  const outcomes: AttachmentOutcome[] = new Array(attachments.length);
  const byCapability = new Map<MediaCapability, number[]>();
  attachments.forEach((a, i) => {
    const capability = capabilityOf(a.contentType, a.data);
    if (!capability) outcomes[i] = { status: 'skipped', capability: undefined, reason: 'not an image, audio or video file' };
    else byCapability.set(capability, [...(byCapability.get(capability) ?? []), i]);
  });

  const work: Array<() => Promise<void>> = [];
  for (const [capability, indexes] of byCapability) {
    const settings = media[capability] as CapabilitySettings | undefined;
    if (settings?.enabled === false) {
      for (const i of indexes) outcomes[i] = { status: 'skipped', capability, reason: `tools.media.${capability}.enabled is false` };
      continue;
    }
    if (capability === 'image' && ctx.modelHasVision) {
      for (const i of indexes) outcomes[i] = { status: 'skipped', capability, reason: 'the model reads images itself' };
      continue;
    }
    const { chosen, left } = selectAttachments(indexes, settings);
    for (const i of left) outcomes[i] = { status: 'skipped', capability, reason: `not selected (tools.media.${capability}.attachments allows ${chosen.length})` };
    chosen.forEach((i, n) => work.push(async () => void (outcomes[i] = await understandOne(attachments[i]!, capability, n, ctx))));
  }
  await pool(work, media.concurrency);
  return outcomes;
}

async function pool(tasks: Array<() => Promise<void>>, size: number): Promise<void> {
  const queue = [...tasks];
  await Promise.all(Array.from({ length: Math.min(size, queue.length) }, async () => {
    for (let task = queue.shift(); task; task = queue.shift()) await task();
  }));
}

async function understandOne(attachment: Attachment, capability: MediaCapability, index: number, ctx: UnderstandingContext): Promise<AttachmentOutcome> {
  const media = ctx.config.tools.media!;
  const settings = media[capability] as CapabilitySettings | undefined;
  const env = ctx.env ?? process.env;
  const log = ctx.log ?? rootLog;
  const signal = ctx.signal ?? new AbortController().signal;
  const cache = ctx.cache ?? sharedCache;
  if (capability === 'audio' && attachment.data.length < MIN_AUDIO_BYTES) return { status: 'skipped', capability, reason: 'the audio is too short to hold speech (under 1 KB)' };
  const entries = candidateEntries(media, capability, ctx.config);
  if (entries.length === 0) return { status: 'skipped', capability, reason: `no tools.media.models entry handles ${capability}` };

  const { mime, ext } = mediaType(attachment.contentType, attachment.name, attachment.data);
  const digest = attachment.id ?? createHash('sha256').update(attachment.data).digest('hex');
  const attempts: Array<{ by: string; error: string }> = [];
  for (const entry of entries) {
    const by = entryLabel(entry);
    const maxBytes = entry.maxBytes ?? settings?.maxBytes ?? DEFAULTS[capability].maxBytes;
    if (attachment.data.length > maxBytes) {
      attempts.push({ by, error: `the file (${attachment.data.length} bytes) is over maxBytes ${maxBytes}` });
      continue;
    }
    const maxChars = entry.maxChars ?? settings?.maxChars ?? DEFAULTS[capability].maxChars;
    const prompt = withLimit(entry.prompt ?? settings?.prompt ?? DEFAULTS[capability].prompt, maxChars, capability);
    const timeoutSec = entry.timeoutSec ?? settings?.timeoutSec ?? DEFAULTS[capability].timeoutSec;
    const key = JSON.stringify([digest, capability, by, entry.baseUrl, prompt, maxChars, entry.language ?? settings?.language]);
    const cached = cache.get(key, CACHE_TTL_MS);
    if (cached !== undefined) return understood(capability, cached, by, true, settings);

    let answer: MediaAnswer;
    if (entry.type === 'cli') {
      const exec = ctx.exec ?? (await defaultExecTool(ctx.config));
      answer = await runCliEntry({ entry, data: attachment.data, ext, mime, index: index + 1, prompt, maxChars, timeoutSec, exec, ctx: execContext(ctx, signal, log) });
    } else {
      const client = resolveClient(entry, capability, ctx.config, env);
      if (!client.ok) {
        attempts.push({ by, error: client.why });
        continue;
      }
      const options = { ...(settings?.providerOptions?.[client.value.provider] ?? {}), ...(entry.providerOptions?.[client.value.provider] ?? {}) };
      const t = ctx.turn;
      const admission = ctx.usage
        ? await ctx.usage.admit({
            provider: client.value.provider,
            model: client.value.model,
            attribution: { agentId: t.agentId, sessionKey: ctx.sessionKey, platform: t.provider, senderId: t.senderId, senderName: t.senderName, channelId: t.channelId, threadId: t.threadId, guildId: t.guildId, purpose: `media-${capability}` },
            prompt: { chars: prompt.length + SYSTEM_PROMPT.length, bytes: Buffer.byteLength(prompt) + SYSTEM_PROMPT.length, images: capability === 'audio' ? 0 : 1 },
            maxOutputTokens: 1024,
          })
        : undefined;
      if (admission && !admission.ok) {
        attempts.push({ by, error: admission.refusal.message });
        continue;
      }
      let got: MediaAnswer | undefined;
      try {
        got = await callMediaProvider({
          client: client.value,
          capability,
          data: attachment.data,
          mime,
          ext,
          prompt,
          language: entry.language ?? settings?.language,
          options: Object.keys(options).length > 0 ? options : undefined,
          headers: { ...settings?.headers, ...entry.headers },
          timeoutMs: timeoutSec * 1000,
          signal,
          net: ctx.net,
        });
      } finally {
        // Answered without usage (a transcription billed by the minute): the documented estimate
        // (src/usage/estimate.ts) is recorded, so budgets count it. A failure: the hold is given back, nothing recorded.
        if (admission?.ok) await ctx.usage!.settle(admission.ticket, got?.ok ? (got.usage ?? transcriptionUsage(prompt, got.text)) : undefined);
      }
      answer = got;
    }
    if (!answer.ok) {
      log.info({ capability, by, error: answer.error }, 'media understanding entry failed; trying the next');
      attempts.push({ by, error: answer.error });
      continue;
    }
    const text = clip(answer.text.trim(), maxChars);
    cache.set(key, text, CACHE_TTL_MS);
    return understood(capability, text, by, false, settings);
  }
  return { status: 'failed', capability, attempts };
}

function understood(capability: MediaCapability, text: string, by: string, cached: boolean, settings: CapabilitySettings | undefined): AttachmentOutcome {
  const echo = capability === 'audio' && settings?.echoTranscript ? (settings.echoFormat ?? '📝 "{transcript}"').replaceAll('{transcript}', text) : undefined;
  return { status: 'understood', capability, text, by, cached, ...(echo !== undefined ? { echo } : {}) };
}

function withLimit(prompt: string, maxChars: number | undefined, capability: MediaCapability): string {
  if (capability === 'audio' || maxChars === undefined || !prompt) return prompt;
  return `${prompt} Answer in at most ${maxChars} characters.`;
}

function clip(text: string, maxChars: number | undefined): string {
  return maxChars !== undefined && text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}

function execContext(ctx: UnderstandingContext, signal: AbortSignal, log: Logger) {
  return {
    toolCallId: `media-${Date.now()}`,
    signal,
    turn: ctx.turn,
    sessionKey: ctx.sessionKey,
    workspaceDir: ctx.workspaceDir,
    log,
    // No one to ask: a command that needs an approval does not run.
    approvals: ctx.approvals ?? { request: async () => ({ id: 'none', outcome: 'cancelled' as const }) },
  };
}

const execTools = new WeakMap<WardenConfig, ToolImplementation>();
async function defaultExecTool(config: WardenConfig): Promise<ToolImplementation> {
  let tool = execTools.get(config);
  if (!tool) {
    const { createExecTool } = await import('../tools/core/exec/exec.js');
    tool = createExecTool({ config }) as unknown as ToolImplementation;
    execTools.set(config, tool);
  }
  return tool;
}

/**
 * The text a turn receives for its message: each understood attachment as an `[Audio]`,
 * `[Image 1/2]`, … block of untrusted data (media can carry instructions), the sender's caption
 * kept as `User text:`.
 */
export function formatUnderstanding(outcomes: readonly AttachmentOutcome[], caption?: string): string {
  const counts = new Map<MediaCapability, number>();
  for (const o of outcomes) if (o.status === 'understood') counts.set(o.capability, (counts.get(o.capability) ?? 0) + 1);
  const seen = new Map<MediaCapability, number>();
  const blocks: string[] = [];
  for (const o of outcomes) {
    if (o.status !== 'understood') continue;
    const n = (seen.get(o.capability) ?? 0) + 1;
    seen.set(o.capability, n);
    const total = counts.get(o.capability)!;
    const label = total > 1 ? `[${LABEL[o.capability]} ${n}/${total}]` : `[${LABEL[o.capability]}]`;
    const field = o.capability === 'audio' ? 'Transcript' : 'Description';
    blocks.push(`${label}\n${wrapUntrusted(`media:${o.by}`, `${field}: ${o.text}`)}`);
  }
  if (caption?.trim()) blocks.push(`User text:\n${caption.trim()}`);
  return blocks.join('\n\n');
}

import type { WardenConfig } from '../../../config/schema/index.js';
import { SPEECH_FORMATS } from '../../../config/schema/media.js';
import path from 'node:path';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { errorResult, guardResult, textResult } from '../fs/tool-result.js';
import { callMedia, mediaClient } from './media-client.js';
import { resolveMediaModel } from './media-model.js';
import { saveGenerated } from './generated-file.js';
import { speechUsage } from '../../../usage/estimate.js';
import type { UsageService } from '../../../usage/service.js';
import { ttsParameters as parameters, MAX_SPEECH_CHARS } from './media-schemas.js';

export { MAX_SPEECH_CHARS };

export interface TtsArgs {
  text: string;
  voice?: string;
  format?: (typeof SPEECH_FORMATS)[number];
  instructions?: string;
}

/** Larger audio than this is refused rather than written (about 4 hours of mp3). */
export const MAX_AUDIO_BYTES = 64 * 1024 * 1024;

/**
 * `tts`: speaks text with the configured Audio speech model and writes the audio under
 * `generated/` in the workspace, answering its path (the audio itself is no use to the
 * model). Voice channels never see this tool: the message-provider filter drops it.
 */
export function createTtsTool(config: WardenConfig, env: NodeJS.ProcessEnv = process.env, usage?: () => Pick<UsageService, 'admit' | 'settle'> | undefined): ToolImplementation<TtsArgs> {
  return {
    id: 'tts',
    parameters,
    async execute(args, ctx): Promise<ToolResult> {
      const resolved = resolveMediaModel(config, 'tts', env);
      const media = config.media?.tts;
      if (!resolved.ok || !media) return errorResult(`tts is unavailable: ${resolved.ok ? 'not configured' : resolved.why}`);
      const model = resolved.value;
      if (typeof args.text !== 'string' || args.text.trim() === '') return errorResult('text is empty: give the words to speak');
      const voice = args.voice ?? media.voice;
      const format = args.format ?? media.format;
      const client = mediaClient(model, media.timeoutSec * 1000);
      // Budgets are checked before the request, as for a model call; the speech endpoint reports
      // no usage, so the documented estimate is recorded (src/usage/estimate.ts).
      const meter = usage?.();
      const t = ctx.turn;
      const spoken = `${args.text}${args.instructions ?? ''}`;
      const admission = meter
        ? await meter.admit({
            provider: model.settings.provider,
            model: model.settings.model,
            attribution: { agentId: t.agentId, sessionKey: ctx.sessionKey, platform: t.provider, senderId: t.senderId, senderName: t.senderName, channelId: t.channelId, threadId: t.threadId, guildId: t.guildId, purpose: 'tts' },
            prompt: { chars: spoken.length, bytes: Buffer.byteLength(spoken), images: 0 },
            maxOutputTokens: 0,
          })
        : undefined;
      if (admission && !admission.ok) return errorResult(admission.refusal.message, { model: model.ref, voice, code: 'budget' });
      let answer: Awaited<ReturnType<typeof callMedia<Buffer>>> | undefined;
      try {
        answer = await callMedia(model, ctx.signal, async () => {
          const response = await client.audio.speech.create(
            { model: model.settings.model, input: args.text, voice, response_format: format, ...(args.instructions ? { instructions: args.instructions } : {}) },
            { signal: ctx.signal },
          );
          return Buffer.from(await response.arrayBuffer());
        });
      } finally {
        if (admission?.ok) await meter!.settle(admission.ticket, answer?.ok ? speechUsage(args.text, args.instructions) : undefined).catch((err: unknown) => ctx.log.error({ err }, 'speech usage could not be recorded'));
      }
      if (!answer.ok) return errorResult(answer.error, { model: model.ref, voice });
      const audio = answer.value;
      if (audio.length === 0) return errorResult(`${model.ref} returned no audio`, { model: model.ref, voice });
      if (audio.length > MAX_AUDIO_BYTES) return errorResult(`${model.ref} returned ${audio.length} bytes of audio, over the ${MAX_AUDIO_BYTES}-byte limit`, { model: model.ref, voice });
      const file = await saveGenerated(ctx.workspaceDir, 'speech', format, audio);
      if (!file.ok) return guardResult(file, { model: model.ref, voice });
      ctx.log.debug({ model: model.ref, path: file.rel, bytes: audio.length }, 'tts');
      const said = textResult(`Spoke ${args.text.length} characters with ${model.ref} (voice ${voice}); the ${format} audio is saved as ${file.rel} (${audio.length} bytes).`, {
        model: model.ref,
        voice,
        format,
        path: file.rel,
        bytes: audio.length,
      });
      // The people in the conversation get the audio itself.
      return { ...said, files: [{ name: path.basename(file.rel), mimeType: AUDIO_MIME[format] ?? 'application/octet-stream', data: audio, path: file.rel }] };
    },
  };
}

const AUDIO_MIME: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/L16' };

import type { ImageGenerateParamsNonStreaming as ImageGenerateParams, ImagesResponse } from 'openai/resources/images';
import type { WardenConfig } from '../../../config/schema/index.js';
import { IMAGE_SIZES } from '../../../config/schema/media.js';
import path from 'node:path';
import type { ToolContent, ToolFile, ToolImplementation, ToolResult } from '../../types.js';
import { sniffFileKind } from '../fs/file-kind.js';
import { errorResult, guardResult, textResult } from '../fs/tool-result.js';
import { MAX_IMAGE_BYTES } from './image.js';
import { callMedia, mediaClient } from './media-client.js';
import { resolveMediaModel } from './media-model.js';
import { saveGenerated } from './generated-file.js';
import { usageFromOpenAIImages } from '../../../models/usage.js';
import { imageUsage } from '../../../usage/estimate.js';
import type { UsageService } from '../../../usage/service.js';
import { imageGenerateParameters as parameters, MAX_PROMPT_CHARS, MAX_IMAGES } from './media-schemas.js';

export { MAX_IMAGES, MAX_PROMPT_CHARS };

export interface ImageGenerateArgs {
  prompt: string;
  size?: (typeof IMAGE_SIZES)[number];
  count?: number;
}

const EXTENSION: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

/**
 * gpt-image models always answer base64 and refuse `response_format`; dall-e and most
 * compatible servers answer a URL unless asked for base64. Warden never fetches a URL the
 * provider hands back, so it always asks for the data itself.
 */
export function imageRequest(model: string, args: ImageGenerateArgs, defaults: { size: string; quality?: string | undefined }): ImageGenerateParams {
  return {
    model,
    prompt: args.prompt,
    n: args.count ?? 1,
    size: (args.size ?? defaults.size) as ImageGenerateParams['size'],
    ...(defaults.quality ? { quality: defaults.quality as ImageGenerateParams['quality'] } : {}),
    ...(model.startsWith('gpt-image') ? {} : { response_format: 'b64_json' as const }),
  };
}

/**
 * `image_generate`: makes images from a prompt with the configured Images API model, saves
 * each under `generated/` in the workspace and shows them to the model. The provider and key
 * come from the operator's config and environment; the model supplies only the prompt.
 */
/** What one generated image may cost in output tokens, for the budget hold (gpt-image-1 at high quality, 1536 px: 6 240). */
const IMAGE_OUTPUT_BOUND_TOKENS = 8_000;

export function createImageGenerateTool(config: WardenConfig, env: NodeJS.ProcessEnv = process.env, usage?: () => Pick<UsageService, 'admit' | 'settle'> | undefined): ToolImplementation<ImageGenerateArgs> {
  return {
    id: 'image_generate',
    parameters,
    async execute(args, ctx): Promise<ToolResult> {
      const resolved = resolveMediaModel(config, 'imageGeneration', env);
      const media = config.media?.imageGeneration;
      if (!resolved.ok || !media) return errorResult(`image_generate is unavailable: ${resolved.ok ? 'not configured' : resolved.why}`);
      const model = resolved.value;
      if (typeof args.prompt !== 'string' || args.prompt.trim() === '') return errorResult('prompt is empty: describe the image to generate');
      const request = imageRequest(model.settings.model, args, media);
      const client = mediaClient(model, media.timeoutSec * 1000);
      // Budgets are checked before the request and the tokens the API reports are recorded (src/usage).
      const meter = usage?.();
      const t = ctx.turn;
      const admission = meter
        ? await meter.admit({
            provider: model.settings.provider,
            model: model.settings.model,
            attribution: { agentId: t.agentId, sessionKey: ctx.sessionKey, platform: t.provider, senderId: t.senderId, senderName: t.senderName, channelId: t.channelId, threadId: t.threadId, guildId: t.guildId, purpose: 'image-generation' },
            prompt: { chars: request.prompt.length, bytes: Buffer.byteLength(request.prompt), images: 0 },
            maxOutputTokens: IMAGE_OUTPUT_BOUND_TOKENS * (request.n ?? 1),
          })
        : undefined;
      if (admission && !admission.ok) return errorResult(admission.refusal.message, { model: model.ref, code: 'budget' });
      let answer: Awaited<ReturnType<typeof callMedia<ImagesResponse>>> | undefined;
      try {
        answer = await callMedia(model, ctx.signal, () => client.images.generate(request, { signal: ctx.signal }));
      } finally {
        // What the API reported; without it (dall-e-3), the documented estimate per image (src/usage/estimate.ts).
        const used = answer?.ok ? (usageFromOpenAIImages(answer.value.usage) ?? imageUsage(request.prompt, answer.value.data?.length ?? 0)) : undefined;
        if (admission?.ok) await meter!.settle(admission.ticket, used).catch((err: unknown) => ctx.log.error({ err }, 'image generation usage could not be recorded'));
      }
      if (!answer.ok) return errorResult(answer.error, { model: model.ref });

      const images = (answer.value.data ?? []).flatMap((d) => (d.b64_json ? [Buffer.from(d.b64_json, 'base64')] : []));
      if (images.length === 0) return errorResult(`${model.ref} returned no image data`, { model: model.ref });
      const saved: Array<{ path: string; mimeType: string; bytes: number }> = [];
      const shown: ToolContent[] = [];
      const posted: ToolFile[] = [];
      for (const data of images) {
        const kind = sniffFileKind(data);
        if (kind.kind !== 'image') return errorResult(`${model.ref} returned data that is not a PNG, JPEG, GIF or WebP image`, { model: model.ref, saved });
        const file = await saveGenerated(ctx.workspaceDir, 'image', EXTENSION[kind.mimeType]!, data);
        if (!file.ok) return guardResult(file, { model: model.ref, saved });
        saved.push({ path: file.rel, mimeType: kind.mimeType, bytes: data.length });
        posted.push({ name: path.basename(file.rel), mimeType: kind.mimeType, data, path: file.rel });
        // Too large to send back to a vision model; the file is still there for other tools.
        if (data.length <= MAX_IMAGE_BYTES) shown.push({ type: 'image', data: data.toString('base64'), mimeType: kind.mimeType });
      }
      ctx.log.debug({ model: model.ref, files: saved.map((s) => s.path) }, 'image_generate');
      const hidden = saved.length - shown.length;
      const text =
        `Generated ${saved.length === 1 ? 'an image' : `${saved.length} images`} with ${model.ref}, saved as ${saved.map((s) => s.path).join(', ')}.` +
        (hidden > 0 ? ` ${hidden} ${hidden === 1 ? 'is' : 'are'} over ${MAX_IMAGE_BYTES} bytes and not shown here.` : '');
      return { ...textResult(text, { model: model.ref, size: request.size, files: saved, revisedPrompts: (answer.value.data ?? []).flatMap((d) => (d.revised_prompt ? [d.revised_prompt] : [])) }, shown), files: posted };
    },
  };
}

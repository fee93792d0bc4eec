import type { Usage } from '../models/types.js';

/**
 * Units for the calls whose provider reports none, so a budget counts them too. Each is a
 * documented estimate (docs/usage-and-budgets.md), priced like any call at the model's
 * `models.providers.<p>.models[].cost` (or the built-in table); where the provider reports
 * its own usage, that is recorded instead. Text is counted at 4 characters a token, the same
 * rule the budget check uses for a prompt.
 */

/** Text tokens at 4 characters a token (at least 1 for any text). */
export const textTokens = (text: string): number => (text.length === 0 ? 0 : Math.ceil(text.length / 4));

/**
 * Speech (`tts`): the speech endpoint reports no usage. Input: the text and the delivery
 * instructions, as text tokens; output: none counted (a model billed per character, such as
 * `tts-1`, is priced per 4-character token: $15 per million characters is `input: 60`).
 */
export function speechUsage(text: string, instructions?: string | undefined): Usage {
  return { inputTokens: textTokens(text) + textTokens(instructions ?? ''), outputTokens: 0 };
}

/**
 * A transcription answered without usage (`whisper-1`, which bills by the minute; Deepgram):
 * the prompt as input tokens and the transcript as output tokens.
 */
export function transcriptionUsage(prompt: string, transcript: string): Usage {
  return { inputTokens: textTokens(prompt), outputTokens: textTokens(transcript) };
}

/**
 * An image model answering without usage (`dall-e-3`): the prompt as input tokens and, per
 * image, the output tokens of a medium-quality square `gpt-image-1` image (OpenAI's table).
 */
export const IMAGE_ESTIMATE_OUTPUT_TOKENS = 1_056;
export function imageUsage(prompt: string, images: number): Usage {
  return { inputTokens: textTokens(prompt), outputTokens: IMAGE_ESTIMATE_OUTPUT_TOKENS * images };
}

import type { Usage } from './types.js';

/**
 * Each API's own usage fields, read into Warden's one meaning of `Usage` (see its doc). The
 * streaming accumulators and every non-streaming caller read usage through these, so a token
 * is counted the same way whichever path the call took.
 */

type Fields = Record<string, unknown>;
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
const part = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : undefined);
const fields = (v: unknown): Fields => (v !== null && typeof v === 'object' ? (v as Fields) : {});

/** OpenAI Chat Completions `usage`: prompt_tokens already include cached ones; completion_tokens include reasoning. */
export function usageFromOpenAI(u: unknown): Usage {
  const o = fields(u);
  return compact({
    inputTokens: count(o.prompt_tokens),
    outputTokens: count(o.completion_tokens),
    cachedInputTokens: part(fields(o.prompt_tokens_details).cached_tokens),
    reasoningTokens: part(fields(o.completion_tokens_details).reasoning_tokens),
  });
}

/**
 * Anthropic Messages `usage`: input_tokens EXCLUDES the cache reads and writes, which come as
 * their own fields, so the prompt's total is their sum. Thinking is part of output_tokens.
 */
export function usageFromAnthropic(u: unknown): Usage {
  const o = fields(u);
  const read = count(o.cache_read_input_tokens);
  const write = count(o.cache_creation_input_tokens);
  return compact({
    inputTokens: count(o.input_tokens) + read + write,
    outputTokens: count(o.output_tokens),
    cachedInputTokens: part(read),
    cacheWriteTokens: part(write),
  });
}

/** Gemini `usageMetadata`: promptTokenCount includes cached content; thoughts are counted apart from candidates. */
export function usageFromGemini(m: unknown): Usage {
  const o = fields(m);
  const thoughts = count(o.thoughtsTokenCount);
  return compact({
    inputTokens: count(o.promptTokenCount),
    outputTokens: count(o.candidatesTokenCount) + thoughts,
    cachedInputTokens: part(o.cachedContentTokenCount),
    reasoningTokens: part(thoughts),
  });
}

/** OpenAI Images API `usage` (gpt-image-1): input_tokens (text and image), output_tokens (the image). Absent for dall-e. */
export function usageFromOpenAIImages(u: unknown): Usage | undefined {
  const o = fields(u);
  if (typeof o.input_tokens !== 'number' && typeof o.output_tokens !== 'number') return undefined;
  return compact({ inputTokens: count(o.input_tokens), outputTokens: count(o.output_tokens) });
}

function compact(u: Usage): Usage {
  const out: Usage = { inputTokens: u.inputTokens, outputTokens: u.outputTokens };
  if (u.cachedInputTokens !== undefined) out.cachedInputTokens = u.cachedInputTokens;
  if (u.cacheWriteTokens !== undefined) out.cacheWriteTokens = u.cacheWriteTokens;
  if (u.reasoningTokens !== undefined) out.reasoningTokens = u.reasoningTokens;
  return out;
}

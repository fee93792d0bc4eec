import { pieces, startFakeModelServer, writeSse, type Dialect, type FakeModelOptions, type FakeModelServer } from './server.js';

const STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

/** The Gemini API's `models/{model}:generateContent` and `:streamGenerateContent?alt=sse`. */
export const geminiDialect: Dialect = {
  basePath: '',
  matches: (path) => /^\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path),
  contextError: (tokens, limit) => `The input token count (${tokens}) exceeds the maximum number of tokens allowed (${limit}).`,
  writeError(res, status, message, headers) {
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify({ error: { code: status, message, status: STATUS[status] ?? 'UNKNOWN' } }));
  },
  async writeReply(res, reply, request) {
    const streaming = request.path.includes(':stream');
    const extra = reply.usage ?? {};
    // Gemini counts cached content inside promptTokenCount, thoughts apart from candidates.
    const usageMetadata = {
      promptTokenCount: request.tokens,
      candidatesTokenCount: Math.ceil((reply.text ?? '').length / 4) + 1,
      ...(extra.cachedInputTokens ? { cachedContentTokenCount: extra.cachedInputTokens } : {}),
      ...(extra.reasoningTokens ? { thoughtsTokenCount: extra.reasoningTokens } : {}),
    };
    request.reported = {
      inputTokens: usageMetadata.promptTokenCount,
      outputTokens: usageMetadata.candidatesTokenCount + (extra.reasoningTokens ?? 0),
      cachedInputTokens: extra.cachedInputTokens ?? 0,
      cacheWriteTokens: 0,
      reasoningTokens: extra.reasoningTokens ?? 0,
    };
    const callParts = (reply.toolCalls ?? []).map((c) => ({
      functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: typeof c.args === 'string' ? JSON.parse(c.args) : c.args },
    }));
    const candidate = (parts: unknown[], finishReason?: string) => ({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    });
    if (!streaming) {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...candidate([...(reply.text ? [{ text: reply.text }] : []), ...callParts], 'STOP'), usageMetadata }));
      return;
    }
    const events: Array<{ data: unknown }> = pieces(reply.text ?? '').map((p) => ({ data: candidate([{ text: p }]) }));
    events.push({ data: { ...candidate(callParts, 'STOP'), usageMetadata } });
    writeSse(res, events);
  },
};

export const startFakeGemini = (options?: FakeModelOptions): Promise<FakeModelServer> => startFakeModelServer(geminiDialect, options);

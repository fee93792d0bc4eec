import { argsText, pieces, startFakeModelServer, writePacedSse, writeSse, type Dialect, type FakeModelOptions, type FakeModelServer } from './server.js';

/** OpenAI Chat Completions (`POST /v1/chat/completions`), as OpenAI and compatible servers speak it. */
export const openaiDialect: Dialect = {
  basePath: '/v1',
  matches: (path) => path === '/v1/chat/completions',
  contextError: (tokens, limit) => `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens.`,
  writeError(res, status, message, headers) {
    const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ error: { message, type, param: null, code: null } }));
  },
  async writeReply(res, reply, request, stream) {
    const calls = (reply.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${request.body.messages.length}_${i}`, name: c.name, json: argsText(c.args) }));
    const finish = calls.length > 0 ? 'tool_calls' : 'stop';
    const extra = reply.usage ?? {};
    const usage = {
      prompt_tokens: request.tokens,
      completion_tokens: Math.ceil((reply.text ?? '').length / 4) + 1 + (extra.reasoningTokens ?? 0),
      total_tokens: 0,
      // OpenAI's subsets: cached prompt tokens are part of prompt_tokens, reasoning part of completion_tokens.
      ...(extra.cachedInputTokens ? { prompt_tokens_details: { cached_tokens: extra.cachedInputTokens } } : {}),
      ...(extra.reasoningTokens ? { completion_tokens_details: { reasoning_tokens: extra.reasoningTokens } } : {}),
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    request.reported = {
      inputTokens: usage.prompt_tokens,
      outputTokens: usage.completion_tokens,
      cachedInputTokens: extra.cachedInputTokens ?? 0,
      cacheWriteTokens: 0,
      reasoningTokens: extra.reasoningTokens ?? 0,
    };
    const base = { id: 'chatcmpl-fake', created: 0, model: request.body.model };
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              finish_reason: finish,
              message: {
                role: 'assistant',
                content: reply.text ?? null,
                ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.json } })) } : {}),
              },
            },
          ],
          usage,
        }),
      );
      return;
    }
    const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
      data: { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason }] },
    });
    const events: Array<{ data: unknown }> = [chunk({ role: 'assistant', content: '' })];
    for (const p of pieces(reply.text ?? '')) events.push(chunk({ content: p }));
    calls.forEach((c, index) => {
      events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
      for (const p of pieces(c.json, 11)) events.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
    });
    events.push(chunk({}, finish));
    if (request.body.stream_options?.include_usage) events.push({ data: { ...base, object: 'chat.completion.chunk', choices: [], usage } });
    events.push({ data: '[DONE]' });
    if (reply.pieceDelayMs) await writePacedSse(res, events, reply.pieceDelayMs, request);
    else writeSse(res, events);
  },
};

export const startFakeOpenAI = (options?: FakeModelOptions): Promise<FakeModelServer> => startFakeModelServer(openaiDialect, options);

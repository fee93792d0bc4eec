import { argsText, pieces, startFakeModelServer, writeSse, type Dialect, type FakeModelOptions, type FakeModelServer } from './server.js';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** The Anthropic Messages API (`POST /v1/messages`), streaming and not. */
export const anthropicDialect: Dialect = {
  basePath: '',
  matches: (path) => path === '/v1/messages',
  contextError: (tokens, limit) => `prompt is too long: ${tokens} tokens > ${limit} maximum`,
  writeError(res, status, message, headers) {
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify({ type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } }));
  },
  async writeReply(res, reply, request, stream) {
    const calls = (reply.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `toolu_${request.body.messages.length}_${i}`, name: c.name, json: argsText(c.args) }));
    const stopReason = calls.length > 0 ? 'tool_use' : 'end_turn';
    const extra = reply.usage ?? {};
    // Anthropic counts cache reads and writes apart from input_tokens.
    const usage = {
      input_tokens: request.tokens,
      output_tokens: Math.ceil((reply.text ?? '').length / 4) + 1,
      ...(extra.cachedInputTokens ? { cache_read_input_tokens: extra.cachedInputTokens } : {}),
      ...(extra.cacheWriteTokens ? { cache_creation_input_tokens: extra.cacheWriteTokens } : {}),
    };
    request.reported = {
      inputTokens: usage.input_tokens + (extra.cachedInputTokens ?? 0) + (extra.cacheWriteTokens ?? 0),
      outputTokens: usage.output_tokens,
      cachedInputTokens: extra.cachedInputTokens ?? 0,
      cacheWriteTokens: extra.cacheWriteTokens ?? 0,
      reasoningTokens: 0,
    };
    const model = request.body.model;
    if (!stream) {
      const content = [
        ...(reply.text ? [{ type: 'text', text: reply.text }] : []),
        ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.json) })),
      ];
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 'msg_fake', type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage }),
      );
      return;
    }
    const events: Array<{ event: string; data: unknown }> = [];
    const ev = (data: { type: string } & Record<string, unknown>) => events.push({ event: data.type, data });
    ev({
      type: 'message_start',
      message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    });
    let index = 0;
    if (reply.text) {
      ev({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const p of pieces(reply.text)) ev({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } });
      ev({ type: 'content_block_stop', index });
      index++;
    }
    for (const c of calls) {
      ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } });
      for (const p of pieces(c.json, 11)) ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } });
      ev({ type: 'content_block_stop', index });
      index++;
    }
    ev({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    ev({ type: 'message_stop' });
    writeSse(res, events);
  },
};

export const startFakeAnthropic = (options?: FakeModelOptions): Promise<FakeModelServer> => startFakeModelServer(anthropicDialect, options);

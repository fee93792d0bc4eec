import { httpUrl, plain } from './clean.js';
import { joinUrl, requestJson } from './http.js';
import type { ProviderCall, ProviderOutcome } from './types.js';

/**
 * Providers that answer with a synthesized text and the sources it rests on. An answer that
 * cites nothing is not a search result and is reported as an error, as OpenClaw does.
 */
const MAX_ANSWER_CHARS = 8_000;
const MAX_CITATIONS = 20;

type Citation = { url: string; title?: string | undefined };

function answer(content: string, raw: Array<{ url?: unknown; title?: unknown }>, provider: string): ProviderOutcome {
  const text = content.trim();
  if (!text) return { ok: false, error: `${provider} returned no answer` };
  const seen = new Set<string>();
  const citations: Citation[] = [];
  for (const c of raw) {
    const url = httpUrl(c.url);
    if (!url || seen.has(url)) continue;
    seen.add(url);
    const title = plain(c.title, 200);
    citations.push(title ? { url, title } : { url });
    if (citations.length >= MAX_CITATIONS) break;
  }
  if (citations.length === 0) return { ok: false, error: `${provider} answered without citing any source, so the answer is not grounded in a search; try again or use another provider` };
  return { ok: true, finding: { kind: 'answer', content: text.length > MAX_ANSWER_CHARS ? `${text.slice(0, MAX_ANSWER_CHARS)}…` : text, citations } };
}

/** Gemini with Google Search grounding: POST models/{model}:generateContent, tools [{google_search}]. */
export async function gemini(c: ProviderCall): Promise<ProviderOutcome> {
  type Body = {
    candidates?: Array<{ content?: { parts?: Array<{ text?: unknown }> }; groundingMetadata?: { groundingChunks?: Array<{ web?: { uri?: unknown; title?: unknown } }> }; finishReason?: string }>;
    error?: { message?: string; code?: number };
  };
  const got = await requestJson<Body>(
    c.provider,
    joinUrl(c.provider.baseUrl, `/models/${encodeURIComponent(c.provider.model ?? '')}:generateContent`),
    { headers: { 'x-goog-api-key': c.provider.apiKey ?? '' }, json: { contents: [{ role: 'user', parts: [{ text: c.query }] }], tools: [{ google_search: {} }] }, timeoutMs: c.timeoutMs, signal: c.signal },
    c.net,
  );
  if (!got.ok) return got;
  if (got.body.error) return { ok: false, error: `gemini answered an error${got.body.error.code ? ` (${got.body.error.code})` : ''}` };
  const candidate = got.body.candidates?.[0];
  const text = (candidate?.content?.parts ?? []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('\n');
  const chunks = candidate?.groundingMetadata?.groundingChunks ?? [];
  return answer(text, chunks.map((ch) => ({ url: ch.web?.uri, title: ch.web?.title })), 'gemini');
}

/** Grok through xAI's Responses API with the web_search tool; sources from url_citation annotations or `citations`. */
export async function grok(c: ProviderCall): Promise<ProviderOutcome> {
  type Annotation = { type?: string; url?: unknown; title?: unknown };
  type Body = { output?: Array<{ type?: string; content?: Array<{ type?: string; text?: unknown; annotations?: Annotation[] }> }>; output_text?: unknown; citations?: unknown[] };
  const got = await requestJson<Body>(
    c.provider,
    joinUrl(c.provider.baseUrl, '/responses'),
    {
      headers: { authorization: `Bearer ${c.provider.apiKey ?? ''}` },
      json: { model: c.provider.model, input: [{ role: 'user', content: c.query }], tools: [{ type: 'web_search' }], store: false },
      timeoutMs: c.timeoutMs,
      signal: c.signal,
    },
    c.net,
  );
  if (!got.ok) return got;
  const parts: string[] = [];
  const cited: Array<{ url?: unknown; title?: unknown }> = [];
  for (const item of got.body.output ?? []) {
    if (item.type !== 'message') continue;
    for (const block of item.content ?? []) {
      if (block.type !== 'output_text' || typeof block.text !== 'string') continue;
      parts.push(block.text);
      for (const a of block.annotations ?? []) if (a.type === 'url_citation') cited.push({ url: a.url, title: a.title });
    }
  }
  const text = parts.join('') || (typeof got.body.output_text === 'string' ? got.body.output_text : '');
  const top = (got.body.citations ?? []).map((u) => (typeof u === 'string' ? { url: u } : (u as { url?: unknown; title?: unknown })));
  return answer(text, [...top, ...cited], 'grok');
}

type ChatMessage = { role: string; content?: unknown; tool_calls?: Array<{ id?: string; type?: string; function?: { name?: string; arguments?: string } }>; tool_call_id?: string; name?: string };
type ChatBody = { choices?: Array<{ finish_reason?: string; message?: ChatMessage }>; citations?: unknown[]; search_results?: Array<{ url?: unknown; title?: unknown }> };

const URL_END = /[\s)]/g;

/**
 * The `[title](https://…)` links of a model's answer, as
 * `/\[([^\]]{1,200})\]\((https?:\/\/[^\s)]+)\)/g` finds them. Scanned by hand: that pattern
 * reads a URL to its end again from every `[…](http` before it, and the answer may quote a page.
 * Every scan resumes where the last one stopped when it starts before that point, as it then
 * meets the same `]` or the same end of URL.
 */
export function markdownLinks(text: string): Array<{ title: string; url: string }> {
  const links: Array<{ title: string; url: string }> = [];
  let close = -1;
  let stop = -1;
  for (let at = text.indexOf('['); at >= 0; at = text.indexOf('[', at + 1)) {
    if (close <= at) close = text.indexOf(']', at + 1);
    if (close < 0) break;
    const length = close - at - 1;
    if (length < 1 || length > 200 || text[close + 1] !== '(' || !text.startsWith('http', close + 2)) continue;
    const scheme = text[close + 6] === 's' ? close + 7 : close + 6;
    if (!text.startsWith('://', scheme)) continue;
    const host = scheme + 3;
    if (host >= stop) {
      URL_END.lastIndex = host;
      stop = URL_END.exec(text)?.index ?? text.length;
    }
    if (stop === host || text[stop] !== ')') continue;
    links.push({ title: text.slice(at + 1, close), url: text.slice(close + 2, stop) });
    at = stop;
  }
  return links;
}

/**
 * Kimi: Moonshot's chat API with its built-in `$web_search`. The model asks for the search, the
 * client hands the call's arguments back unchanged, and the second answer is grounded in what
 * Moonshot searched. An answer given without that round trip is refused.
 */
export async function kimi(c: ProviderCall): Promise<ProviderOutcome> {
  const url = joinUrl(c.provider.baseUrl, '/chat/completions');
  const headers = { authorization: `Bearer ${c.provider.apiKey ?? ''}` };
  const tools = [{ type: 'builtin_function', function: { name: '$web_search' } }];
  const messages: ChatMessage[] = [{ role: 'user', content: c.query }];
  let searched = false;
  for (let round = 0; round < 3; round++) {
    const got = await requestJson<ChatBody>(c.provider, url, { headers, json: { model: c.provider.model, messages, tools }, timeoutMs: c.timeoutMs, signal: c.signal }, c.net);
    if (!got.ok) return got;
    const choice = got.body.choices?.[0];
    const message = choice?.message;
    if (!message) return { ok: false, error: 'kimi returned no message' };
    const calls = (message.tool_calls ?? []).filter((t) => t.function?.name === '$web_search');
    if (choice.finish_reason === 'tool_calls' && calls.length > 0) {
      searched = true;
      messages.push({ role: 'assistant', content: message.content ?? '', tool_calls: message.tool_calls });
      for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, name: '$web_search', content: call.function?.arguments ?? '{}' });
      continue;
    }
    const text = typeof message.content === 'string' ? message.content : '';
    if (!searched) return { ok: false, error: 'kimi answered without running its web search, so the answer is not grounded; try again or use another provider' };
    const sources = [...(got.body.search_results ?? []), ...(got.body.citations ?? []).map((u) => ({ url: u })), ...markdownLinks(text)];
    return answer(text, sources, 'kimi');
  }
  return { ok: false, error: 'kimi kept asking to search without answering' };
}

/** Perplexity Sonar through an OpenAI-compatible chat API (OpenRouter by default); sources in `citations`. */
export async function sonar(c: ProviderCall): Promise<ProviderOutcome> {
  const got = await requestJson<ChatBody & { choices?: Array<{ message?: { annotations?: Array<{ type?: string; url_citation?: { url?: unknown; title?: unknown } }> } }> }>(
    c.provider,
    joinUrl(c.provider.baseUrl, '/chat/completions'),
    { headers: { authorization: `Bearer ${c.provider.apiKey ?? ''}` }, json: { model: c.provider.model, messages: [{ role: 'user', content: c.query }] }, timeoutMs: c.timeoutMs, signal: c.signal },
    c.net,
  );
  if (!got.ok) return got;
  const message = got.body.choices?.[0]?.message;
  const text = typeof message?.content === 'string' ? message.content : '';
  const annotated = (message?.annotations ?? []).filter((a) => a.type === 'url_citation').map((a) => ({ url: a.url_citation?.url, title: a.url_citation?.title }));
  const sources = [...(got.body.citations ?? []).map((u) => ({ url: u })), ...(got.body.search_results ?? []), ...annotated];
  return answer(text, sources, 'perplexity');
}

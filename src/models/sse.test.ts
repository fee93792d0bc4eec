import { _iterSSEMessages } from 'openai/core/streaming';
import { describe, expect, it } from 'vitest';
import { SseDecoder, type SseEvent } from './sse.js';

/** The OpenAI SDK's own parser over the same text: the reference the decoder is held to. */
async function sdkEvents(text: string): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of _iterSSEMessages(new Response(text), new AbortController())) out.push({ event: e.event, data: e.data });
  return out;
}

function decode(pieces: string[]): SseEvent[] {
  const d = new SseDecoder();
  return pieces.flatMap((p) => d.push(p));
}

const streams: Array<[string, string]> = [
  ['one event', 'data: {"a":1}\n\n'],
  ['two events, then [DONE]', 'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n'],
  ['CRLF line ends', 'data: one\r\n\r\ndata: two\r\n\r\n'],
  ['CR line ends', 'data: one\r\rdata: two\r\r'],
  ['mixed line ends', 'data: one\r\n\ndata: two\n\r\n'],
  ['several data lines are joined by a newline', 'data: a\ndata: b\ndata:c\n\n'],
  ['one leading space is dropped, a second kept', 'data:  two spaces\n\n'],
  ['comments and unknown fields are ignored', ': keep-alive\nid: 7\nretry: 10\ndata: x\n\n'],
  ['a named event', 'event: message\ndata: {"x":1}\n\n'],
  ['an event field alone is an event with empty data', 'event: ping\n\n'],
  ['blank lines without fields make no event', '\n\n\ndata: x\n\n\n\n'],
  ['a field without a colon', 'data\n\n'],
  ['an event the stream ends inside is dropped', 'data: kept\n\ndata: cut'],
  ['an event ended by one line end only is dropped', 'data: kept\n\ndata: cut\n'],
  ['text beyond ASCII', 'data: {"t":"héllo ✓ 🎉"}\n\n'],
  ['an empty stream', ''],
];

describe('SseDecoder parses as the OpenAI SDK parses', () => {
  it.each(streams)('%s: whole', async (_name, text) => {
    expect(decode([text])).toEqual(await sdkEvents(text));
  });

  it.each(streams)('%s: split in two at every position, and one character at a time', async (_name, text) => {
    const expected = await sdkEvents(text);
    for (let i = 0; i <= text.length; i++) expect(decode([text.slice(0, i), text.slice(i)])).toEqual(expected);
    expect(decode([...text])).toEqual(expected);
  });
});

/** One server-sent event: its `event` field (null when absent) and its `data` lines joined by "\n". */
export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * Server-sent events from text as it arrives, in any pieces. Parsed as the model SDKs parse
 * them (OpenAI's `SSEDecoder` and `LineDecoder`): a line ends at "\r\n", "\n" or "\r"; a blank
 * line ends an event (none when it had neither an `event` value nor `data`); a line starting with ":" is a
 * comment; a field's value loses one leading space; fields other than `event` and `data` are
 * ignored; an event the stream ends inside, without its blank line, is dropped. One pass over
 * each piece, no regular expression.
 */
export class SseDecoder {
  private partial = '';
  /** The previous piece ended with "\r": a "\n" opening this one belongs to that line end. */
  private afterCr = false;
  private event: string | null = null;
  private data: string[] = [];

  push(piece: string): SseEvent[] {
    const out: SseEvent[] = [];
    let from = 0;
    if (this.afterCr && piece.charCodeAt(0) === 10) from = 1;
    this.afterCr = false;
    for (let i = from; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.partial + piece.slice(from, i);
      this.partial = '';
      if (c === 13) {
        if (i + 1 < piece.length) {
          if (piece.charCodeAt(i + 1) === 10) i++;
        } else this.afterCr = true;
      }
      from = i + 1;
      const event = this.line(line);
      if (event) out.push(event);
    }
    if (from < piece.length) this.partial += piece.slice(from);
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      if (!this.event && this.data.length === 0) return undefined;
      const event = { event: this.event, data: this.data.join('\n') };
      this.event = null;
      this.data = [];
      return event;
    }
    if (line.charCodeAt(0) === 58) return undefined; // ":" a comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return undefined;
  }
}

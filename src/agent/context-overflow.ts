const NAMED = /context|too long|too many tokens/i;
const LINE_END = /[\n\r\u2028\u2029]/;

/** Whether `line` holds `word`, then `tokens` after it (`/word.*tokens/i` on one line). */
function thenTokens(line: string, word: RegExp): boolean {
  const found = word.exec(line);
  return found !== null && /tokens/i.test(line.slice(found.index + found[0].length));
}

/**
 * Whether a provider's 400 says the prompt is over the model's context: as
 * `/context|too long|too many tokens|maximum.*tokens|exceeds.*tokens/i` reads it, checked line by
 * line instead, since `maximum.*tokens` is retried from every `maximum` of the message to its
 * line's end and a message may echo what it was sent.
 */
export function saysContextOverflow(message: string): boolean {
  if (NAMED.test(message)) return true;
  return message.split(LINE_END).some((line) => thenTokens(line, /maximum/i) || thenTokens(line, /exceeds/i));
}

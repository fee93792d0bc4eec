/**
 * Text a tool writes for the model, shown to people: the instructions meant for the model
 * ("Do not retry this command.") and the untrusted-data wrapper tags are taken out, the facts
 * stay. Used wherever a tool's own words reach the chat — a deferred call's result under its
 * card, an `/exec` answer — never on what the model reads.
 */

// Each `\s*` that leads a pattern starts only where a whitespace run does (`(?<!\s)`): the same
// matches, but a long run of spaces in a tool's output is not retried from every space.

/** Sentences that tell the model what to do next; people have nothing to retry. */
const MODEL_DIRECTIVES: readonly RegExp[] = [
  /(?<!\s)\s*\bDo not retry(?: this command| this call| it| the same call)?(?: unless (?:they|the user) asks?)?\s*[.!]/gi,
  /(?<!\s)\s*\bDo not run the call again\./gi,
];

const POLL = /(?<!\s)\s*\bDo not poll (?:for it|it)/gi;

/**
 * `/\s*\bDo not poll (?:for it|it)[^.]*\./gi` taken out: each directive up to the next `.`, found
 * with indexOf, since `[^.]*` would be retried from every later directive to the text's end.
 */
function withoutPollDirectives(text: string): string {
  let out = '';
  let from = 0;
  POLL.lastIndex = 0;
  for (let m = POLL.exec(text); m; m = POLL.exec(text)) {
    const dot = text.indexOf('.', POLL.lastIndex);
    if (dot < 0) break;
    out += text.slice(from, m.index);
    from = dot + 1;
    POLL.lastIndex = from;
  }
  return out + text.slice(from);
}

/** `<untrusted-NONCE source="…">` and its closing tag, on lines of their own as `wrapUntrusted` writes them. */
const WRAPPER_TAG = /^[ \t]*<\/?untrusted-[0-9a-f]{32}(?:\s+source="[^"\n]*")?>[ \t]*(?:\r?\n|$)/gim;

export function forPeople(text: string): string {
  let out = text.replace(WRAPPER_TAG, '');
  for (const directive of MODEL_DIRECTIVES) out = out.replace(directive, '');
  out = withoutPollDirectives(out);
  return out.replace(/(?<![ \t])[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trimEnd();
}

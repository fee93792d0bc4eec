/**
 * Text a tool writes for the model, shown to people: the instructions meant for the model
 * ("Do not retry this command.") and the untrusted-data wrapper tags are taken out, the facts
 * stay. Used wherever a tool's own words reach the chat — a deferred call's result under its
 * card, an `/exec` answer — never on what the model reads.
 */

/** Sentences that tell the model what to do next; people have nothing to retry. */
const MODEL_DIRECTIVES: readonly RegExp[] = [
  /\s*\bDo not retry(?: this command| this call| it| the same call)?(?: unless (?:they|the user) asks?)?\s*[.!]/gi,
  /\s*\bDo not run the call again\./gi,
  /\s*\bDo not poll (?:for it|it)[^.]*\./gi,
];

/** `<untrusted-NONCE source="…">` and its closing tag, on lines of their own as `wrapUntrusted` writes them. */
const WRAPPER_TAG = /^[ \t]*<\/?untrusted-[0-9a-f]{32}(?:\s+source="[^"\n]*")?>[ \t]*(?:\r?\n|$)/gim;

export function forPeople(text: string): string {
  let out = text.replace(WRAPPER_TAG, '');
  for (const directive of MODEL_DIRECTIVES) out = out.replace(directive, '');
  return out.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trimEnd();
}

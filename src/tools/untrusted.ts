/**
 * Marks outside content (files, web pages, search results, other users, tool output) as data
 * for the model, not instructions:
 *
 *   <untrusted-NONCE source="web:https://example.com/">
 *   …content…
 *   </untrusted-NONCE>
 *
 * The guarantee rests on the nonce, not on spotting look-alikes: NONCE is 32 hex digits, fresh
 * for every wrapped block (64 random bits) followed by a MAC (HMAC-SHA256 under a key drawn at
 * process start, cut to 64 bits) over the random part, the source and the body. Content cannot
 * know the nonce of the block it sits in, so it cannot write that block's closing tag; a nonce
 * seen earlier (a previous block, one the model repeated into a file) belongs to another block.
 * The system prompt tells the model that only the closing tag with the nonce of its own
 * opening tag ends a block.
 *
 * As a second layer, anything in the content that reads as an `<untrusted…` or `</untrusted…`
 * tag once invisible characters, compatibility forms, look-alikes of `<` `/` and of the
 * letters, case and HTML entities are set aside is rewritten as the plain, visibly broken
 * `<\untrusted` / `<\/untrusted`, so the model is never shown a second tag-like line.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Signs the wrappers this process makes, so `isWrappedUntrusted` recognises only those. */
const MAC_KEY = randomBytes(32);
const RANDOM_HEX = 16;
const MAC_HEX = 16;

/** Unicode confusables (confusables.txt, MA) of `<` and `/`, and brackets a reader may take for `<`. */
const LESS_THAN = '<\u02c2\u1438\u16b2\u2039\u276e\u{1d236}\u27e8\u3008\u2329\u29fc\u00ab\u300a\u2991\u27ea\u1445\u2b80';
const SOLIDUS = '/\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u2cc6\u2f03\u3033\u30ce\u31d3\u4e3f\u{1d23a}\u29f6\u2afd\u2afb';

/**
 * Look-alikes (confusables.txt, MA) of the letters of "untrusted" that NFKC leaves alone
 * (Greek, Cyrillic, Armenian, Cherokee, Lisu, …); NFKC already folds fullwidth and
 * mathematical letters.
 */
const LETTER_LOOKALIKES: Record<string, string> = {
  u: '\u028b\u03c5\u054d\u057d\u1200\u144c\u1d1c\u222a\u22c3\ua4f4\ua79f\uab4e\uab52\u{104ce}\u{104f6}\u{118b8}\u{118d8}\u{16f42}\u{1d6d6}\u{1d710}\u{1d74a}\u{1d784}\u{1d7be}',
  n: '\u039d\u0578\u057c\u2c9a\ua4e0\u{10513}\u{1d6b4}\u{1d6ee}\u{1d728}\u{1d762}\u{1d79c}',
  t: '\u03a4\u0422\u13a2\u22a4\u27d9\u2ca6\ua4d4\u{10297}\u{102b1}\u{10315}\u{118bc}\u{16f0a}\u{1d6bb}\u{1d6f5}\u{1d72f}\u{1d769}\u{1d7a3}\u{1f768}\u03c4\u0442',
  r: '\u01a6\u0433\u13a1\u13d2\u1587\u1d26\u2c85\ua4e3\uab47\uab48\uab81\u{104b4}\u{16f35}\u{1d216}',
  s: '\u01bd\u0405\u0455\u054f\u13d5\u13da\ua4e2\ua731\uabaa\u{10296}\u{10420}\u{10448}\u{118c1}\u{16f3a}',
  e: '\u0395\u0415\u0435\u04bd\u13ac\u212e\u22ff\u2d39\ua4f0\uab32\u{10286}\u{118a6}\u{118ae}\u{1d6ac}\u{1d6e6}\u{1d720}\u{1d75a}\u{1d794}\u03b5',
  d: '\u0501\u13a0\u13e7\u146f\u15de\u15ea\ua4d2\ua4d3',
};

const FOLD = new Map<string, string>();
for (const c of LESS_THAN) FOLD.set(c, '<');
for (const c of SOLIDUS) FOLD.set(c, '/');
for (const [letter, alikes] of Object.entries(LETTER_LOOKALIKES)) for (const c of alikes) FOLD.set(c, letter);

/** Read as nothing: invisible characters, spaces, combining marks, controls and format characters. */
const SKIPPED = /^[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{M}\p{Cc}\p{Cf}]$/u;
/** `&lt;` `&#60;` `&#x3c;` `&sol;` `&#47;` `&#x2f;`, with or without the semicolon. */
const ENTITY = /&(?:(lt)|(sol)|#0*(60|47)|#x0*(3c|2f));?/iy;
/** Where a tag could start: `<`, its compatibility forms (＜ ﹤ ≮), its look-alikes, an entity. */
const TAG_START = new RegExp(`[&<\uff1c\ufe64\u226e${[...LESS_THAN].join('')}]`, 'gu');
const NAME = 'untrusted';

/** What the unit at `i` reads as (one code point or one entity), and where the next starts. */
function foldAt(text: string, i: number): { read: string; next: number } {
  if (text[i] === '&') {
    ENTITY.lastIndex = i;
    const entity = ENTITY.exec(text);
    if (entity) return { read: entity[1] || entity[3] === '60' || entity[4]?.toLowerCase() === '3c' ? '<' : '/', next: i + entity[0].length };
  }
  const ch = String.fromCodePoint(text.codePointAt(i)!);
  const next = i + ch.length;
  if (ch === '\u226e') return { read: '<', next };
  if (SKIPPED.test(ch)) return { read: '', next };
  const read = [...ch.normalize('NFKC')].map((c) => FOLD.get(c) ?? FOLD.get(c.toLowerCase()) ?? c.toLowerCase()).join('');
  return { read, next };
}

/**
 * If what follows the `<` ending at `i` reads as `untrusted` or `/untrusted` (gaps of invisible
 * characters and spaces allowed anywhere), where that ends and whether it had the slash.
 */
function tagAfter(text: string, i: number): { end: number; closing: boolean } | undefined {
  let want = '/' + NAME;
  let closing = false;
  let at = i;
  while (want.length > 0 && at < text.length) {
    const { read, next } = foldAt(text, at);
    for (const c of read) {
      if (want.startsWith('/')) {
        want = want.slice(1);
        if (c === '/') {
          closing = true;
          continue;
        }
      }
      if (c !== want[0]) return undefined;
      want = want.slice(1);
      if (want.length === 0) break;
    }
    at = next;
  }
  return want.length === 0 ? { end: at, closing } : undefined;
}

/** Rewrites everything in `text` that reads as an `<untrusted` or `</untrusted` tag as a plain, broken one. */
export function defangTags(text: string): string {
  let out = '';
  let copied = 0;
  for (const start of text.matchAll(TAG_START)) {
    const at = start.index;
    if (at < copied) continue;
    const first = foldAt(text, at);
    if (first.read !== '<') continue;
    const tag = tagAfter(text, first.next);
    if (!tag) continue;
    out += text.slice(copied, at) + (tag.closing ? '<\\/untrusted' : '<\\untrusted');
    copied = tag.end;
  }
  return out + text.slice(copied);
}

function escapeAttribute(value: string): string {
  return defangTags(value).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/[\r\n]/g, ' ');
}

function macOf(random: string, source: string, body: string): string {
  return createHmac('sha256', MAC_KEY).update(`${random}\0${source}\0`).update(body).digest('hex').slice(0, MAC_HEX);
}

/** Wraps `text` as untrusted data from `source` (e.g. `file:notes/todo.md`), under a fresh nonce. */
export function wrapUntrusted(source: string, text: string): string {
  const body = defangTags(text);
  const attribute = escapeAttribute(source);
  const random = randomBytes(RANDOM_HEX / 2).toString('hex');
  const tag = `untrusted-${random}${macOf(random, attribute, body)}`;
  return `<${tag} source="${attribute}">\n${body}\n</${tag}>`;
}

const WHOLE = new RegExp(`^<untrusted-([0-9a-f]{${RANDOM_HEX}})([0-9a-f]{${MAC_HEX}}) source="([^"\\r\\n]*)">\\n([\\s\\S]*)\\n</untrusted-\\1\\2>$`);

/**
 * Whether `text` is exactly one wrapper made by `wrapUntrusted` in this process, unchanged:
 * nothing before or after it, and the MAC in its nonce matches its source and body. Only then
 * may a caller skip wrapping it again. Text that merely looks like a wrapper (a command's
 * output, a page, a wrapper cut short or edited) is not, and gets wrapped.
 */
export function isWrappedUntrusted(text: string): boolean {
  const match = WHOLE.exec(text);
  if (!match) return false;
  const expected = Buffer.from(macOf(match[1]!, match[3]!, match[4]!));
  return timingSafeEqual(expected, Buffer.from(match[2]!));
}

/** The nonce of each wrapper in `text`, in order (tests and diagnostics). */
export function untrustedNonces(text: string): string[] {
  return [...text.matchAll(/<untrusted-([0-9a-f]{32}) source="/g)].map((m) => m[1]!);
}

/** A wrapper in a text: where its opening tag starts and ends, and where its closing tag starts and ends (the text's end when it has none). */
interface WrapperSpan {
  open: number;
  body: number;
  close: number;
  end: number;
  opening: string;
  closing: string;
}

const OPENING = new RegExp(`<untrusted-[0-9a-f]{${RANDOM_HEX + MAC_HEX}} source="[^"\\r\\n]*">\\n`, 'g');

/** Every wrapper-shaped block in `text`, in order; one without its closing tag runs to the end. */
function wrapperSpans(text: string): WrapperSpan[] {
  const spans: WrapperSpan[] = [];
  OPENING.lastIndex = 0;
  for (let m = OPENING.exec(text); m !== null; m = OPENING.exec(text)) {
    const opening = m[0];
    const closing = `\n</${opening.slice(1, opening.indexOf(' '))}>`;
    const body = m.index + opening.length;
    const at = text.indexOf(closing, body - 1);
    const close = at < 0 ? text.length : at;
    const end = at < 0 ? text.length : at + closing.length;
    spans.push({ open: m.index, body, close, end, opening, closing });
    OPENING.lastIndex = end;
  }
  return spans;
}

/**
 * `text.slice(start, end)` that never leaves half a wrapper: a cut inside a block's body
 * re-opens it (with its own tag) at the start and closes it at the end; a cut through an opening
 * or closing tag takes the tag whole or not at all. So a clipped transcript line, a pruned tool
 * result or a summary's input never shows untrusted text outside its block, an unterminated
 * block swallowing what follows, or a stray closing tag that seems to end a block early.
 */
export function sliceWrapped(text: string, start: number, end = text.length): string {
  let a = Math.max(0, Math.min(start, text.length));
  let b = Math.max(a, Math.min(end, text.length));
  const spans = wrapperSpans(text);
  // A block is cut at `pos` when pos lies strictly inside it, or anywhere after its opening tag
  // when it was never closed (its end is the text's end, so the text's end cuts it too).
  const cutAt = (pos: number) => spans.find((s) => s.open < pos && (pos < s.end || (s.close === s.end && pos <= s.end)));
  let head = '';
  let tail = '';
  const first = cutAt(a);
  if (first) {
    if (a < first.body) a = first.body; // inside the opening tag: take the tag whole
    if (a < first.close || first.close === first.end) head = first.opening;
    else a = first.end; // inside the closing tag: the block is over
  }
  const last = cutAt(b);
  if (last) {
    if (b < last.body) b = last.open; // inside the opening tag: leave the tag out
    else {
      if (b > last.close) b = last.close; // inside the closing tag: close it whole
      tail = last.closing;
    }
  }
  if (a >= b) return '';
  return head + text.slice(a, b) + tail;
}

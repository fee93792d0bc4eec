/**
 * The secret scrubber: every text that leaves Warden's hands — a tool result before the model
 * reads it, a transcript or audit row before it is stored, a reply or card before it is
 * posted, a log line — passes `scrubSecrets` (or `scrubDeep` for structured values).
 *
 * Two kinds of secret are hidden:
 * - **known** secrets, registered by the composition root (every configured credential, the
 *   `.env` values Warden loaded, the secret store's values): the exact value and its common
 *   encodings — base64 and base64url at every byte alignment, hex, URL-encoding, JSON escaping
 *   — also when a line wrap splits it. Each becomes a label, `[secret:NAME]`.
 * - **unknown** secrets of a high-confidence shape (provider key prefixes, JWTs, PEM private
 *   keys, AWS key pairs, Slack, Discord and GitHub tokens): `[secret:detected-KIND]`.
 *
 * A label is never content: `secretLabelIn` finds one in a tool's arguments, and the call
 * chain refuses the call (a model writing the placeholder back into a file would corrupt it).
 *
 * Everything here is a scan (a rolling hash over the text, with exact verification), linear
 * in the text whatever it holds: the text is often written by an attacker.
 */

export interface KnownSecret {
  /** What the label says: an environment variable's name or the config key's (`DISCORD_TOKEN`). */
  name: string;
  value: string;
}

/** Values shorter than this are not looked for inside text: "hunter" is in too many words. */
export const MIN_SECRET_CHARS = 6;
const WINDOW = MIN_SECRET_CHARS;
const BASE = 0x01000193;

export const labelFor = (name: string): string => `[secret:${name}]`;

/** A label's name: letters, digits, `_ - . :` (config paths and detected kinds). */
export function safeLabelName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_.:-]/g, '_');
  return cleaned === '' ? 'SECRET' : cleaned.slice(0, 80);
}

// ---------------------------------------------------------------------------------------------
// Encodings

function base64Cores(bytes: Buffer, url: boolean): string[] {
  const out: string[] = [];
  // The secret may start at any byte offset of the encoded stream: the characters that hold only
  // the secret's bits are the same whatever surrounds it.
  for (let k = 0; k < 3; k++) {
    const padded = Buffer.concat([Buffer.alloc(k), bytes]);
    let enc = padded.toString('base64');
    while (enc.endsWith('=')) enc = enc.slice(0, -1);
    if (url) enc = enc.replace(/\+/g, '-').replace(/\//g, '_');
    const skip = Math.ceil((k * 8) / 6);
    const full = Math.floor(((k + bytes.length) * 8) / 6);
    const core = enc.slice(skip, full);
    if (core.length >= WINDOW) out.push(core);
  }
  return out;
}

/** Every form a secret is looked for in: the value and its encodings, each at least WINDOW characters. */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  forms.add(hex);
  forms.add(hex.toUpperCase());
  for (const core of base64Cores(bytes, false)) forms.add(core);
  for (const core of base64Cores(bytes, true)) forms.add(core);
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(uri.replace(/%20/g, '+'));
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  // Form encoding also escapes what encodeURIComponent leaves (`!'()*`).
  forms.add(uri.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
  const json = JSON.stringify(value).slice(1, -1);
  forms.add(json);
  forms.add(JSON.stringify(json).slice(1, -1));
  return [...forms].filter((f) => f.length >= WINDOW);
}

// ---------------------------------------------------------------------------------------------
// The matcher

interface Form {
  text: string;
  name: string;
}

function hashOf(s: string, from: number, n: number): number {
  let h = 0;
  for (let i = from; i < from + n; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

const slot = (h: number) => (h ^ (h >>> 16)) & 0xffff;
const isBreak = (c: number) => c === 10 || c === 13;

/**
 * Finds every form of every known secret in a text: a Rabin–Karp scan over the text with line
 * breaks skipped (a value split by a wrap is still found), verified character by character.
 */
export class KnownSecretMatcher {
  private readonly table = new Map<number, Form[]>();
  private readonly filter = new Uint8Array(0x10000);
  private readonly pow: number;
  readonly size: number;
  /** Values short enough to be hidden only where they are a whole string. */
  private readonly whole = new Map<string, string>();
  /** The scan's window of positions and characters, one pair for every call (a call runs to its end before the next). */
  private readonly ringPos = new Int32Array(WINDOW);
  private readonly ringChar = new Int32Array(WINDOW);

  constructor(secrets: readonly KnownSecret[]) {
    let pow = 1;
    for (let i = 1; i < WINDOW; i++) pow = Math.imul(pow, BASE);
    this.pow = pow;
    const seen = new Set<string>();
    for (const s of secrets) {
      if (s.value.length < MIN_SECRET_CHARS) {
        if (s.value.length >= 4) this.whole.set(s.value, s.name);
        continue;
      }
      for (const f of secretForms(s.value)) {
        if (seen.has(f)) continue;
        seen.add(f);
        const h = hashOf(f, 0, WINDOW);
        this.filter[slot(h)] = 1;
        const list = this.table.get(h) ?? [];
        list.push({ text: f, name: s.name });
        // Longest first: a secret that contains another is hidden whole.
        list.sort((a, b) => b.text.length - a.text.length);
        this.table.set(h, list);
      }
    }
    this.size = seen.size + this.whole.size;
  }

  /** The text with every form replaced by its label; the same string when nothing matched. */
  replace(text: string): string {
    if (this.size === 0) return text;
    const whole = this.whole.get(text);
    if (whole !== undefined) return labelFor(whole);
    if (this.table.size === 0 || text.length < WINDOW) return text;
    const ringPos = this.ringPos;
    const ringChar = this.ringChar;
    const filter = this.filter;
    const pow = this.pow;
    let out = '';
    let from = 0;
    let h = 0;
    let count = 0;
    let r = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 || c === 13) continue;
      if (count >= WINDOW) h = (h - Math.imul(ringChar[r]!, pow)) | 0;
      else count++;
      h = (Math.imul(h, BASE) + c) | 0;
      ringChar[r] = c;
      ringPos[r] = i;
      r = r + 1 === WINDOW ? 0 : r + 1;
      if (count < WINDOW || filter[(h ^ (h >>> 16)) & 0xffff] === 0) continue;
      const candidates = this.table.get(h);
      if (!candidates) continue;
      // The oldest position in the ring is the window's first character.
      const start = ringPos[r]!;
      for (const form of candidates) {
        const end = matchAt(text, start, form.text);
        if (end < 0) continue;
        out += text.slice(from, start) + labelFor(form.name);
        from = end;
        i = end - 1;
        h = 0;
        count = 0;
        r = 0;
        break;
      }
    }
    return from === 0 ? text : out + text.slice(from);
  }
}

/** Where `form` ends when it starts at `start`, line breaks inside skipped; -1 when it does not match. */
function matchAt(text: string, start: number, form: string): number {
  let i = start;
  for (let j = 0; j < form.length; j++, i++) {
    while (j > 0 && i < text.length && isBreak(text.charCodeAt(i))) i++;
    if (i >= text.length || text.charCodeAt(i) !== form.charCodeAt(j)) return -1;
  }
  return i;
}

// ---------------------------------------------------------------------------------------------
// Unknown secrets: credential shapes

const isDigit = (c: number) => c >= 48 && c <= 57;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;

/** Random-looking: digits and letters of both cases, as generated keys are; words and CSS class names are not. */
function looksRandom(s: string, minDigits = 2): boolean {
  let d = 0;
  let u = 0;
  let l = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) d++;
    else if (isUpper(c)) u++;
    else if (isLower(c)) l++;
  }
  return d >= minDigits && u >= 1 && l >= 1;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const URLSAFE = `${ALNUM}_-`;

interface Shape {
  kind: string;
  prefixes: readonly string[];
  chars: string;
  /** Characters after the prefix, at least. */
  min: number;
  /** Characters after the prefix, at most (a fixed-length id). */
  max?: number;
  /** An extra test of the part after the prefix. */
  test?: (rest: string) => boolean;
}

const SHAPES: readonly Shape[] = [
  { kind: 'github-token', prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], chars: ALNUM, min: 36, max: 255, test: (r) => looksRandom(r) },
  { kind: 'github-token', prefixes: ['github_pat_'], chars: `${ALNUM}_`, min: 60, test: (r) => looksRandom(r) },
  { kind: 'slack-token', prefixes: ['xoxa-', 'xoxb-', 'xoxe-', 'xoxo-', 'xoxp-', 'xoxr-', 'xoxs-', 'xapp-'], chars: `${ALNUM}-`, min: 20, test: (r) => looksRandom(r, 6) || /^\d+-\d+-/.test(r) },
  { kind: 'anthropic-key', prefixes: ['sk-ant-'], chars: URLSAFE, min: 32, test: (r) => looksRandom(r) },
  { kind: 'stripe-key', prefixes: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_'], chars: ALNUM, min: 20, test: (r) => looksRandom(r) },
  { kind: 'openai-key', prefixes: ['sk-'], chars: URLSAFE, min: 32, test: (r) => looksRandom(r, 3) },
  { kind: 'gitlab-token', prefixes: ['glpat-'], chars: URLSAFE, min: 20, test: (r) => looksRandom(r) },
  { kind: 'aws-access-key-id', prefixes: ['AKIA', 'ASIA'], chars: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', min: 16, max: 16 },
  { kind: 'google-api-key', prefixes: ['AIza'], chars: URLSAFE, min: 35, max: 35 },
  { kind: 'huggingface-token', prefixes: ['hf_'], chars: ALNUM, min: 34, test: (r) => looksRandom(r) },
  { kind: 'npm-token', prefixes: ['npm_'], chars: ALNUM, min: 36, test: (r) => looksRandom(r) },
];

/** A credential found in a text: `[start, end)` and what it looks like. */
export interface Detection {
  start: number;
  end: number;
  kind: string;
}

/** Characters a credential's run is made of (letters, digits, `_ . -`): a lookup table, not a regex (a scan is ~10× faster on 100 KB). */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of `${'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'}_.-`) TOKEN_CHAR[c.charCodeAt(0)] = 1;
/** First characters of every shape (prefixes, `eyJ`, a Discord token's M/N/O): other starts are skipped without a look. */
const START_CHAR = new Uint8Array(128);
for (const c of 'gxsrAehnMNO') START_CHAR[c.charCodeAt(0)] = 1;

function runLength(text: string, from: number, chars: string, max: number): number {
  let n = from;
  while (n < text.length && n - from < max && chars.includes(text[n]!)) n++;
  return n - from;
}

function shapeAt(run: string): { length: number; kind: string } | undefined {
  for (const shape of SHAPES) {
    const prefix = shape.prefixes.find((p) => run.startsWith(p));
    if (!prefix) continue;
    const n = runLength(run, prefix.length, shape.chars, shape.max ?? 1024);
    if (n < shape.min) continue;
    // A fixed-length id must end there (not be the start of a longer word).
    if (shape.max !== undefined && n === shape.max && prefix.length + n < run.length && shape.chars.includes(run[prefix.length + n]!)) continue;
    const rest = run.slice(prefix.length, prefix.length + n);
    if (shape.test && !shape.test(rest)) continue;
    return { length: prefix.length + n, kind: shape.kind };
  }
  return jwtAt(run) ?? discordTokenAt(run);
}

/** The first three dot-separated parts of a run (each bounded), without splitting the whole run. */
function threeParts(run: string, maxPart: number): [string, string, string] | undefined {
  const a = run.indexOf('.');
  if (a < 0 || a > maxPart) return undefined;
  const b = run.indexOf('.', a + 1);
  if (b < 0 || b - a - 1 > maxPart) return undefined;
  let c = b + 1;
  while (c < run.length && c - b - 1 <= maxPart && run[c] !== '.') c++;
  return [run.slice(0, a), run.slice(a + 1, b), run.slice(b + 1, c)];
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** A JWT: three base64url parts, the first two JSON objects (`eyJ`), a signature of some length. */
function jwtAt(run: string): { length: number; kind: string } | undefined {
  if (!run.startsWith('eyJ')) return undefined;
  const parts = threeParts(run, 8192);
  if (!parts || parts[0].length < 10 || !parts[1].startsWith('eyJ') || parts[1].length < 10 || parts[2].length < 16) return undefined;
  if (!parts.every((p) => B64URL.test(p))) return undefined;
  try {
    JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return { length: parts[0].length + parts[1].length + parts[2].length + 2, kind: 'jwt' };
}

/** A Discord bot token: base64 of the bot's snowflake id, a timestamp part, an HMAC part. */
function discordTokenAt(run: string): { length: number; kind: string } | undefined {
  const first = run.charCodeAt(0);
  if (first !== 77 && first !== 78 && first !== 79) return undefined; // M N O: base64 of a leading digit 1-9
  const parts = threeParts(run, 40);
  if (!parts) return undefined;
  const [id, ts, mac] = parts;
  if (id.length < 18 || id.length > 32 || ts.length < 6 || ts.length > 7 || mac.length < 27 || mac.length > 40) return undefined;
  if (!parts.every((p) => B64URL.test(p))) return undefined;
  const decoded = Buffer.from(id, 'base64url').toString('latin1');
  if (!/^\d{17,20}$/.test(decoded)) return undefined;
  return { length: id.length + ts.length + mac.length + 2, kind: 'discord-token' };
}

/** A 40-character AWS secret access key within the lines after an access key id. */
function awsSecretNear(text: string, from: number): Detection | undefined {
  const window = text.slice(from, from + 300);
  const re = /[A-Za-z0-9/+]{40}/g;
  for (let m = re.exec(window); m; m = re.exec(window)) {
    const before = window[m.index - 1];
    const after = window[m.index + 40];
    const boundary = (c: string | undefined) => c === undefined || !/[A-Za-z0-9/+=]/.test(c);
    if (boundary(before) && boundary(after) && looksRandom(m[0])) return { start: from + m.index, end: from + m.index + 40, kind: 'aws-secret-key' };
  }
  return undefined;
}

/** PEM private key blocks (to their END line, or to the end of the text). */
function pemKeys(text: string): Detection[] {
  const out: Detection[] = [];
  for (let begin = text.indexOf('-----BEGIN '); begin >= 0; ) {
    const headerEnd = text.indexOf('-----', begin + 11);
    if (headerEnd < 0) break;
    const header = text.slice(begin + 11, headerEnd);
    if (!header.endsWith('PRIVATE KEY') || header.length > 40) {
      begin = text.indexOf('-----BEGIN ', headerEnd + 5);
      continue;
    }
    const endLine = text.indexOf('-----END ', headerEnd + 5);
    const endClose = endLine < 0 ? -1 : text.indexOf('-----', endLine + 9);
    const stop = endClose < 0 ? text.length : endClose + 5;
    out.push({ start: begin, end: stop, kind: 'private-key' });
    begin = text.indexOf('-----BEGIN ', stop);
  }
  return out;
}

/**
 * The fewest characters any detected credential takes: a token run is at least this long, and a
 * PEM block (`-----BEGIN ` … `PRIVATE KEY-----`) longer still. A shorter text holds none.
 */
const SHORTEST_CREDENTIAL = 20;

/** Every high-confidence credential in a text, in order, not overlapping. */
export function detectCredentials(text: string): Detection[] {
  if (text.length < SHORTEST_CREDENTIAL) return [];
  const found: Detection[] = pemKeys(text);
  const n = text.length;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    if (c >= 128 || TOKEN_CHAR[c] === 0) {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < n) {
      const d = text.charCodeAt(end);
      if (d >= 128 || TOKEN_CHAR[d] === 0) break;
      end++;
    }
    if (end - i >= SHORTEST_CREDENTIAL) scanRun(text, i, end, found);
    i = end;
  }
  found.sort((a, b) => a.start - b.start);
  const merged: Detection[] = [];
  for (const d of found) {
    const last = merged.at(-1);
    if (last && d.start < last.end) {
      last.end = Math.max(last.end, d.end);
      continue;
    }
    merged.push({ ...d });
  }
  return merged;
}

/** Tries each place in the run `[from, to)` where a credential could begin: its start, and after each `. - _`. */
function scanRun(text: string, from: number, to: number, found: Detection[]): void {
  for (let at = from; at <= to - 20; ) {
    const c = text.charCodeAt(at);
    const prev = at === from ? 46 : text.charCodeAt(at - 1);
    if (START_CHAR[c] === 1 && (prev === 46 || prev === 45 || prev === 95)) {
      const hit = shapeAt(text.slice(at, Math.min(to, at + 9000)));
      if (hit) {
        found.push({ start: at, end: at + hit.length, kind: hit.kind });
        if (hit.kind === 'aws-access-key-id') {
          const secret = awsSecretNear(text, at + hit.length);
          if (secret) found.push(secret);
        }
        at += hit.length;
        continue;
      }
    }
    at++;
  }
}

/** The text with every detected credential replaced by `[secret:detected-KIND]`. */
export function replaceDetected(text: string): { text: string; found: Detection[] } {
  const found = detectCredentials(text);
  if (found.length === 0) return { text, found };
  let out = '';
  let from = 0;
  for (const d of found) {
    out += text.slice(from, d.start) + labelFor(`detected-${d.kind}`);
    from = d.end;
  }
  return { text: out + text.slice(from), found };
}

// ---------------------------------------------------------------------------------------------
// The process's known secrets

const sources = new Map<string, readonly KnownSecret[]>();
let matcher: KnownSecretMatcher | undefined;

/**
 * Registers (or replaces) one source's known secrets: the config's credentials, the `.env`
 * values, the secret store. The composition root calls it at start and on every change;
 * the returned function removes the source.
 */
export function registerKnownSecrets(source: string, secrets: readonly KnownSecret[]): () => void {
  sources.set(source, secrets.filter((s) => s.value !== ''));
  secretsChanged();
  return () => {
    if (sources.get(source) === undefined) return;
    sources.delete(source);
    secretsChanged();
  };
}

function secretsChanged(): void {
  matcher = undefined;
  clean.known.clear();
  clean.all.clear();
  clean.chars = 0;
}

function current(): KnownSecretMatcher {
  matcher ??= new KnownSecretMatcher([...sources.values()].flat());
  return matcher;
}

/**
 * Texts a scrub left as they were, under the secrets registered now: a turn scrubs its whole
 * transcript again before every model call (registry.ts), and a text found clean is clean until
 * the secrets change (both scans are pure functions of the text and the secrets). `all` holds
 * texts clean of known and detected credentials, `known` of known ones only. Only texts that
 * hold no secret are kept, and only up to CLEAN_CHARS characters in all; then it starts over.
 */
const clean = { known: new Set<string>(), all: new Set<string>(), chars: 0 };
const CLEAN_CHARS = 4_000_000;
/** Shorter texts cost less to scan than to remember. */
const CLEAN_MIN_CHARS = 64;

function remember(set: Set<string>, text: string): void {
  if (clean.chars + text.length > CLEAN_CHARS) {
    clean.known.clear();
    clean.all.clear();
    clean.chars = 0;
  }
  set.add(text);
  clean.chars += text.length;
}

/** The names of the known secrets registered now (never values). */
export function knownSecretNames(): string[] {
  return [...new Set([...sources.values()].flat().map((s) => s.name))].sort();
}

export interface ScrubOptions {
  /** Also hide unknown credentials of a known shape (default true). */
  detect?: boolean | undefined;
  /** scrubDeep: objects left whole (an image's base64 data is no text to scrub). */
  skip?: ((value: Record<string, unknown>) => boolean) | undefined;
}

/** One text with every known secret (and, by default, every detected credential) replaced by its label. */
export function scrubSecrets(text: string, options: ScrubOptions = {}): string {
  const detect = options.detect !== false;
  const memo = text.length >= CLEAN_MIN_CHARS;
  if (memo && (clean.all.has(text) || (!detect && clean.known.has(text)))) return text;
  const known = current().replace(text);
  const out = detect ? replaceDetected(known).text : known;
  if (memo && out === text) remember(detect ? clean.all : clean.known, text);
  return out;
}

/**
 * Every string in a JSON-like value scrubbed (keys too); arrays and plain objects are copied
 * only where something changed. Buffers, class instances and functions are left as they are.
 */
export function scrubDeep<T>(value: T, options: ScrubOptions = {}): T {
  return deep(value, options, 0) as T;
}

// A turn's whole transcript passes here before every model call, and almost all of it is
// unchanged: the copy is begun only at the first element or entry that changed, from the ones
// before it as they were.
function deep(v: unknown, options: ScrubOptions, depth: number): unknown {
  if (typeof v === 'string') return scrubSecrets(v, options);
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const y = deep(x, options, depth + 1);
      if (out) out.push(y);
      else if (y !== x) {
        out = v.slice(0, i);
        out.push(y);
      }
    }
    return out ?? v;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return v;
  const o = v as Record<string, unknown>;
  if (options.skip?.(o)) return v;
  const keys = Object.keys(o);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    const key = scrubSecrets(k, options);
    const y = deep(x, options, depth + 1);
    if (!out && (y !== x || key !== k)) {
      out = {};
      for (let j = 0; j < i; j++) put(out, keys[j]!, o[keys[j]!]);
    }
    if (out) put(out, key, y);
  }
  return out ?? v;
}

/**
 * An own key as JSON.parse makes it: assigning `__proto__` would set the copy's prototype (or do
 * nothing), and the key would vanish from what the model and the logs see.
 */
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** scrubDeep's `skip` for content blocks: an image's base64 data is pixels, not text (and scanning it costs). */
export const skipImages = (o: Record<string, unknown>): boolean => o.type === 'image';

/** The first `[secret:…]` label in a value's strings (a tool's arguments), or undefined. */
export function secretLabelIn(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') {
    for (let at = value.indexOf('[secret:'); at >= 0; at = value.indexOf('[secret:', at + 1)) {
      let end = at + 8;
      while (end < value.length && end - at < 100 && /[A-Za-z0-9_.:-]/.test(value[end]!)) end++;
      if (end > at + 8 && value[end] === ']') return value.slice(at, end + 1);
    }
    return undefined;
  }
  if (depth > 64 || value === null || typeof value !== 'object') return undefined;
  for (const x of Array.isArray(value) ? value : Object.values(value)) {
    const hit = secretLabelIn(x, depth + 1);
    if (hit) return hit;
  }
  return undefined;
}

/** Every distinct `[secret:…]` label in a text, in order. */
export function secretLabelsIn(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  for (let hit = secretLabelIn(rest); hit; hit = secretLabelIn(rest)) {
    if (!out.includes(hit)) out.push(hit);
    rest = rest.slice(rest.indexOf(hit) + hit.length);
  }
  return out;
}

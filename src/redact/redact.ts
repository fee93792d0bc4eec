/**
 * Redaction of configuration for display. Every place that shows config to a person, a model
 * or a log (the `gateway` tool's config.get, config.patch diffs on cards and in audit rows,
 * reload messages, `warden mcp`, logs) goes through this module, so a credential is hidden
 * the same way wherever it appears.
 *
 * Fails closed: a value is hidden when its key names a secret, when it sits in an env or
 * headers map (names shown, values hidden), when it follows a secret flag in an argument list,
 * when it is a URL's userinfo or a secret query parameter, when it has a well-known credential
 * shape, or when it equals (or contains) a value hidden elsewhere. Names are not values: a key
 * like `apiKeyEnv` holds the name of an environment variable and is shown.
 */

export const REDACTED = '[redacted]';

export interface RedactOptions {
  /**
   * The environment `*Env` keys name (`apiKeyEnv: OPENAI_API_KEY`): the values of those
   * variables are secrets wherever they appear in the config.
   */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** More values known to be secrets. */
  secrets?: readonly string[] | undefined;
}

// ---------------------------------------------------------------------------------------------
// Names

/** Words that make a key, flag or parameter name a secret's name. */
const SECRET_WORDS = new Set([
  'token', 'tokens', 'secret', 'secrets', 'password', 'passwords', 'passwd', 'passphrase', 'pwd', 'pass', 'passin', 'passout',
  'apikey', 'apikeys', 'key', 'keys', 'privatekey', 'credential', 'credentials', 'creds', 'auth', 'authorization',
  'cookie', 'cookies', 'bearer', 'signature', 'sig', 'dsn', 'pat', 'otp', 'totp', 'pin',
]);
/** `maxTokens`, `contextTokens`: counts of model tokens, not credentials. */
const COUNT_WORDS = new Set(['max', 'min', 'context', 'schema', 'input', 'output', 'reserve', 'limit', 'budget', 'count', 'per']);
/** Maps whose every value is hidden whatever its name: a process environment, HTTP headers. */
const VALUE_MAPS = new Set(['env', 'environment', 'envvars', 'headers', 'header', 'httpheaders']);

/**
 * The words of a name: `apiKeyEnv` → api key env, `X-Api-Key` → x api key, `GITHUB_TOKEN` →
 * github token. Percent-encoding is decoded first (`%74oken` is `token` to a server).
 */
export function nameWords(name: string): string[] {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    // Not valid percent-encoding: the raw name is what a reader sees.
  }
  // A scan, not a regex: an upper-case run before a capitalised word (`APIKey`) splits before
  // its last letter, and a name can be long text an attacker wrote (a query parameter).
  const words: string[] = [];
  let word = '';
  const isUpper = (c: string) => c >= 'A' && c <= 'Z';
  const isLower = (c: string) => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded[i]!;
    if (!isUpper(c) && !isLower(c)) {
      if (word) words.push(word);
      word = '';
      continue;
    }
    const prev = decoded[i - 1] ?? '';
    const next = decoded[i + 1] ?? '';
    if (word && isUpper(c) && (isLower(prev) || (isUpper(prev) && next >= 'a' && next <= 'z'))) {
      words.push(word);
      word = '';
    }
    word += c;
  }
  if (word) words.push(word);
  return words.map((w) => w.toLowerCase());
}

export type NameKind = 'secret' | 'env-name' | 'value-map' | 'plain';

/**
 * What a key (or flag, or query parameter) name says about its value. `*Env` names an
 * environment variable (shown); a count of tokens is plain; any secret word makes it secret.
 */
export function classifyName(name: string): NameKind {
  const words = nameWords(name);
  if (words.length === 0) return 'plain';
  const joined = words.join('');
  if (VALUE_MAPS.has(joined)) return 'value-map';
  const last = words[words.length - 1]!;
  if (last === 'env' && words.length > 1) return 'env-name';
  if ((last === 'token' || last === 'tokens') && words.slice(0, -1).some((w) => COUNT_WORDS.has(w))) return 'plain';
  if (words.some((w) => SECRET_WORDS.has(w)) || SECRET_WORDS.has(joined) || /apikey|accesskey|secretkey|privatekey|password|passwd|secret|token/.test(joined)) return 'secret';
  return 'plain';
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// ---------------------------------------------------------------------------------------------
// Text

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_DIGIT = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * Credentials with a shape of their own: a known prefix, then at least `min` characters of
 * `chars`. Tested by code on each run of token characters, so the test is linear whatever the
 * text (a regex alternation of these is more than the ReDoS checker can prove in time).
 */
const SHAPES: ReadonlyArray<{ prefixes: readonly string[]; chars: string; min: number }> = [
  { prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], chars: ALNUM, min: 16 },
  { prefixes: ['github_pat_'], chars: `${ALNUM}_`, min: 20 },
  { prefixes: ['xoxa-', 'xoxb-', 'xoxe-', 'xoxo-', 'xoxp-', 'xoxr-', 'xoxs-', 'xapp-'], chars: `${ALNUM}-`, min: 8 },
  { prefixes: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_'], chars: ALNUM, min: 16 },
  { prefixes: ['sk-'], chars: `${ALNUM}_-`, min: 16 },
  { prefixes: ['glpat-'], chars: `${ALNUM}_-`, min: 16 },
  { prefixes: ['AKIA', 'ASIA'], chars: UPPER_DIGIT, min: 16 },
  { prefixes: ['AIza'], chars: `${ALNUM}_-`, min: 30 },
  { prefixes: ['npm_', 'hf_'], chars: ALNUM, min: 30 },
  { prefixes: ['pypi-'], chars: `${ALNUM}_-`, min: 40 },
];
const TOKEN_RUN = /[A-Za-z0-9_.-]+/g;

/** How much of the start of `run` is a shaped credential (0: none). */
function shapedLength(run: string): number {
  for (const shape of SHAPES) {
    const prefix = shape.prefixes.find((p) => run.startsWith(p));
    if (!prefix) continue;
    let n = prefix.length;
    while (n < run.length && shape.chars.includes(run[n]!)) n++;
    if (n - prefix.length >= shape.min) return n;
  }
  // A JWT: three dot-separated base64url parts, the first two JSON objects (`eyJ`).
  if (run.startsWith('eyJ')) {
    const parts = run.split('.');
    if (parts.length >= 3 && parts[0]!.length >= 11 && parts[1]!.startsWith('eyJ') && parts[1]!.length >= 11) return parts.slice(0, 3).join('.').length;
  }
  return 0;
}

/** PEM private key blocks (`-----BEGIN … PRIVATE KEY-----` to its END line, or to the end of the text). */
function redactPemKeys(text: string, note: (v: string) => void): string {
  let out = '';
  let from = 0;
  for (let begin = text.indexOf('-----BEGIN '); begin >= 0; begin = text.indexOf('-----BEGIN ', from)) {
    const headerEnd = text.indexOf('-----', begin + 11);
    if (headerEnd < 0) break;
    if (!text.slice(begin + 11, headerEnd).includes('PRIVATE KEY')) {
      out += text.slice(from, headerEnd + 5);
      from = headerEnd + 5;
      continue;
    }
    const endLine = text.indexOf('-----END ', headerEnd + 5);
    const endClose = endLine < 0 ? -1 : text.indexOf('-----', endLine + 9);
    const stop = endClose < 0 ? text.length : endClose + 5;
    note(text.slice(begin, stop));
    out += `${text.slice(from, begin)}${REDACTED}`;
    from = stop;
  }
  return out + text.slice(from);
}

function redactShaped(text: string, note: (v: string) => void): string {
  return redactPemKeys(text, note).replace(TOKEN_RUN, (run) => {
    const n = shapedLength(run);
    if (n === 0) return run;
    note(run.slice(0, n));
    return `${REDACTED}${run.slice(n)}`;
  });
}

const BLANK_OR_QUOTE = /[\s"'<>`]/;
const AUTHORITY_END = /[/?#\\]/;

/**
 * Hides userinfo in every URL of `text` (after each `//`, with or without a scheme). The
 * authority ends where a URL parser ends it; when it has no `@` but its "port" is not a number
 * (`user:pa/ss@host`, a password with a slash), the text up to the next `@` is hidden too: a
 * client may read it that way, and a host is not worth guessing about.
 *
 * Long random-looking segments of the path are hidden as well: webhook URLs carry their secret
 * there (Discord `/api/webhooks/<id>/<token>`, Slack `/services/T…/B…/<secret>`, MCP URLs with
 * a key in the path). A segment of 20 or more letters, digits, `_` or `-` with both letters
 * and digits is hidden; snowflake ids (digits only) and words stay. A scan, not a regex: the
 * text may be an error message an attacker shaped.
 */
function redactUrls(text: string, found: Set<string> | undefined): string {
  if (!text.includes('//')) return text;
  let words: { lastAt: Int32Array } | undefined;
  let out = '';
  let from = 0;
  for (let slash = text.indexOf('//'); slash >= 0; slash = text.indexOf('//', Math.max(from, slash + 2))) {
    const start = slash + 2;
    let end = start;
    while (end < text.length && !AUTHORITY_END.test(text[end]!) && !BLANK_OR_QUOTE.test(text[end]!)) end++;
    const authority = text.slice(start, end);
    let cut = authority.lastIndexOf('@');
    if (cut < 0) {
      const hostPort = authority.startsWith('[') ? authority.slice(Math.max(0, authority.indexOf(']') + 1)) : authority;
      const colon = hostPort.indexOf(':');
      if (colon >= 0 && !/^\d*$/.test(hostPort.slice(colon + 1))) {
        words ??= wordIndex(text);
        const at = words.lastAt[start]!;
        // No `@` at all: `user:pa ss@db` split by a blank, or `user:pw\@db`. What looks like host:port
        // cannot be one, so it is hidden whole.
        cut = at >= 0 ? at - start : authority.length;
      }
    }
    let pathFrom = end;
    if (cut >= 0) {
      noteUserinfo(text.slice(start, start + cut), found);
      out += `${text.slice(from, start)}${REDACTED}`;
      from = start + cut;
      if (from > end) {
        // The userinfo ran past a `/`: the host starts after its `@`.
        pathFrom = from + 1;
        while (pathFrom < text.length && !AUTHORITY_END.test(text[pathFrom]!) && !BLANK_OR_QUOTE.test(text[pathFrom]!)) pathFrom++;
      }
    }
    // The path: `/segment/segment…` up to `?`, `#`, a blank, a quote or the next `//` (another URL, scanned next).
    if (text[pathFrom] === '/') {
      const nextUrl = text.indexOf('//', pathFrom + 1);
      let stop = pathFrom;
      while (stop < text.length && stop !== nextUrl && text[stop] !== '?' && text[stop] !== '#' && !BLANK_OR_QUOTE.test(text[stop]!)) stop++;
      const pathPart = text.slice(pathFrom, stop);
      const shown = pathPart
        .split('/')
        .map((seg) => {
          if (!RANDOM_SEGMENT.test(seg)) return seg;
          found?.add(seg);
          return REDACTED;
        })
        .join('/');
      if (shown !== pathPart) {
        out += `${text.slice(from, pathFrom)}${shown}`;
        from = stop;
      }
    }
  }
  return out + text.slice(from);
}

/** For each position, the last `@` from there to the end of its word (a blank or quote ends one), -1 for none. One backward pass. */
function wordIndex(text: string): { lastAt: Int32Array } {
  const lastAt = new Int32Array(text.length + 1).fill(-1);
  let at = -1;
  for (let i = text.length - 1; i >= 0; i--) {
    if (BLANK_OR_QUOTE.test(text[i]!)) at = -1;
    else if (text[i] === '@' && at < 0) at = i;
    lastAt[i] = at;
  }
  return { lastAt };
}

const RANDOM_SEGMENT = /^(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9_-]{20,}$/;

/** The whole userinfo and its password, raw and decoded, as values to hide wherever else they appear. */
function noteUserinfo(userinfo: string, found: Set<string> | undefined): void {
  if (!found || userinfo === '') return;
  found.add(userinfo);
  const colon = userinfo.indexOf(':');
  const password = colon >= 0 ? userinfo.slice(colon + 1) : userinfo;
  if (password) found.add(password);
  try {
    if (password) found.add(decodeURIComponent(password));
  } catch {
    // Not percent-encoding: the raw form is noted already.
  }
}

/**
 * `user:pass@host` without a scheme (Go's MySQL DSN `user:pw@tcp(db)/x`, rsync): in each word
 * (between blanks and quotes), the text before the first `@`, after the last of `( , = ;`, when
 * it holds a `:` with no `/` before it and no `//` after it. A scan, not a regex.
 */
const WORD = /[^\s"'`]+/g;
function redactBareUserinfo(text: string, found: Set<string> | undefined): string {
  return text.replace(WORD, (word) => {
    const at = word.indexOf('@');
    if (at <= 0 || at === word.length - 1) return word;
    const head = word.slice(0, at);
    let begin = 0;
    for (const d of ['(', ',', '=', ';']) begin = Math.max(begin, head.lastIndexOf(d) + 1);
    const userinfo = head.slice(begin);
    const colon = userinfo.indexOf(':');
    if (colon <= 0 || colon === userinfo.length - 1 || userinfo.slice(0, colon).includes('/') || userinfo.startsWith('//', colon + 1)) return word;
    if (userinfo.includes(REDACTED) || /[[\]]/.test(userinfo.slice(0, colon))) return word;
    noteUserinfo(userinfo, found);
    return `${word.slice(0, begin)}${REDACTED}${word.slice(at)}`;
  });
}
/** `name=value` in a query string, a fragment, a libpq conninfo, a cookie. */
const PAIR = /(^|[?&;#\s,"'{(])([^\s=&;?#"'{}(),]+)=([^&\s;#"',)}]*)/g;
/** `"name": value` / `name: value` inside a string (JSON or YAML text, a header line). */
const COLON_PAIR = /(^|[\s,{"'])(["']?)([A-Za-z_][\w.-]*)\2(\s*:\s*)(?:"([^"]*)"|'([^']*)'|((?:(?:Bearer|Basic|Digest|Token)\s+)?[^\s"',{}[\]]+))/gi;
/** `Bearer X`, `Basic X` anywhere (an Authorization header written out). */
const SCHEME_CREDENTIAL = /\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/=-]+)/gi;
/** `--flag value` or `--flag=value` inside a string (a command line written as one string). */
const INLINE_FLAG = /(^|\s)(-{1,2}[A-Za-z][\w.-]*)(=|\s+)("[^"]*"|'[^']*'|\S+)/g;

/**
 * Hides credentials in one string: shaped tokens, URL userinfo, secret query parameters and
 * `key=value` pairs, `name: value` pairs, `Bearer`/`Basic` credentials and secret flags
 * written inline. Pure; the same text always gives the same answer.
 */
export function redactText(text: string): string {
  return scrubText(text, undefined);
}

/** `redactText`, noting each value it hid in `found` (so it is hidden wherever else it appears). */
function scrubText(text: string, found: Set<string> | undefined): string {
  const note = (v: string) => {
    if (found && v && !v.includes(REDACTED)) found.add(v);
  };
  let s = text;
  s = redactShaped(s, note);
  s = redactUrls(s, found);
  s = redactBareUserinfo(s, found);
  s = s.replace(PAIR, (m, pre: string, name: string, value: string) => {
    if (!value || value.startsWith(REDACTED) || PLACEHOLDER.test(value) || classifyName(name) !== 'secret') return m;
    note(value);
    return `${pre}${name}=${REDACTED}`;
  });
  s = s.replace(COLON_PAIR, (m, pre: string, q: string, name: string, sep: string, dq?: string, sq?: string, bare?: string) => {
    const value = dq ?? sq ?? bare ?? '';
    if (!value || value.startsWith(REDACTED) || PLACEHOLDER.test(value) || classifyName(name) !== 'secret') return m;
    note(value);
    const shown = dq !== undefined ? `"${REDACTED}"` : sq !== undefined ? `'${REDACTED}'` : REDACTED;
    return `${pre}${q}${name}${q}${sep}${shown}`;
  });
  // After the pairs: `Authorization: Bearer x` is hidden whole there; a bare `Bearer x` here.
  s = s.replace(SCHEME_CREDENTIAL, (m, scheme: string, gap: string, value: string) => (value.startsWith(REDACTED) ? m : (note(value), `${scheme}${gap}${REDACTED}`)));
  s = s.replace(INLINE_FLAG, (m, pre: string, flag: string, sep: string, value: string) => {
    if (value.startsWith(REDACTED) || (value.startsWith('-') && sep !== '=') || PLACEHOLDER.test(value.replace(/^["']|["']$/g, ''))) return m;
    if (!isSecretFlag(flag)) return m;
    note(value.replace(/^["']|["']$/g, ''));
    return `${pre}${flag}${sep}${REDACTED}`;
  });
  return s;
}

// ---------------------------------------------------------------------------------------------
// Argument lists

/** Flags whose next element is an HTTP header line (`Name: value`). */
const HEADER_FLAGS = new Set(['-H', '--header', '--headers', '--http-header', '--proxy-header']);

/**
 * Short options that carry a password for a known client. Short options mean different
 * things to different programs (`-p` is psql's port and mysql's password), so they are
 * hidden only for the programs named here; long options are judged by their words for any
 * program. `attached`: the value may be glued on (`-pSECRET`); `next`: the next element.
 */
const PROGRAM_SHORT_FLAGS: Record<string, { attached: string[]; next: string[] }> = {
  mysql: { attached: ['-p'], next: ['-p'] },
  mysqldump: { attached: ['-p'], next: ['-p'] },
  mysqladmin: { attached: ['-p'], next: ['-p'] },
  mariadb: { attached: ['-p'], next: ['-p'] },
  'mariadb-dump': { attached: ['-p'], next: ['-p'] },
  mongo: { attached: [], next: ['-p'] },
  mongosh: { attached: [], next: ['-p'] },
  mongodump: { attached: [], next: ['-p'] },
  'redis-cli': { attached: [], next: ['-a'] },
  sshpass: { attached: ['-p'], next: ['-p'] },
  curl: { attached: ['-u', '-U'], next: ['-u', '-U', '--user', '--proxy-user'] },
  wget: { attached: [], next: ['--user', '--http-user', '--proxy-user'] },
  smbclient: { attached: ['-U'], next: ['-U'] },
};

function programName(command: string | undefined): string | undefined {
  if (!command) return undefined;
  return command.split(/[\\/]/).pop()!.replace(/\.(exe|cmd|bat)$/i, '').toLowerCase();
}

/**
 * Values that hold no secret whatever flag they follow: a glob (`deploy --token *` in an
 * allowlist pattern must show the approver its wildcard), a variable or template reference.
 */
const PLACEHOLDER = /^(?:[*?]+|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Z_][A-Z0-9_]*|\{\{\s*[\w.]+\s*\}\}|<[\w-]+>)$/;

const headerLine = (line: string) => {
  const colon = line.indexOf(':');
  return colon > 0 ? `${line.slice(0, colon + 1)} ${REDACTED}` : REDACTED;
};

/**
 * Hides secrets in an argument list: `--api-key X`, `--api-key=X`, `-token X` (Go flags),
 * header flags (`-H "Authorization: Bearer …"` keeps the header's name), a known client's
 * password options (`mysql -pX`, `redis-cli -a X`), and everything `redactText` hides in
 * each element. A secret flag's next element is hidden whatever it looks like (a password
 * may start with `-`); `--no-auth`-style switches take no value.
 */
export function redactArgv(args: readonly string[], command?: string | undefined): string[] {
  return scrubArgv(args, command, undefined);
}

function scrubArgv(args: readonly string[], command: string | undefined, found: Set<string> | undefined): string[] {
  const note = (v: string) => {
    if (found && v) found.add(v);
  };
  const program = PROGRAM_SHORT_FLAGS[programName(command) ?? ''];
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // A previous element that was itself a value (`-pSECRET`, a hidden value) is no flag.
    const prev = i > 0 && out[i - 1] === args[i - 1] ? args[i - 1]! : undefined;
    if (prev !== undefined && takesSecret(prev, program, a) && !PLACEHOLDER.test(a)) {
      note(HEADER_FLAGS.has(prev) ? a.slice(a.indexOf(':') + 1).trim() : a);
      out.push(HEADER_FLAGS.has(prev) ? headerLine(a) : REDACTED);
      continue;
    }
    const eq = a.indexOf('=');
    if (/^-{1,2}[A-Za-z]/.test(a) && eq > 0) {
      const flag = a.slice(0, eq);
      if (HEADER_FLAGS.has(flag)) {
        note(a.slice(a.indexOf(':', eq) + 1).trim());
        out.push(`${flag}=${headerLine(a.slice(eq + 1))}`);
        continue;
      }
      if ((isSecretFlag(flag) || program?.next.includes(flag)) && !PLACEHOLDER.test(a.slice(eq + 1))) {
        note(a.slice(eq + 1));
        out.push(`${flag}=${REDACTED}`);
        continue;
      }
    }
    const glued = program?.attached.find((f) => a.startsWith(f) && a.length > f.length && !a.startsWith(`${f}=`));
    if (glued) {
      note(a.slice(glued.length));
      out.push(`${glued}${REDACTED}`);
      continue;
    }
    out.push(scrubText(a, found));
  }
  return out;
}

function isSecretFlag(flag: string): boolean {
  if (!/^-{1,2}[A-Za-z]/.test(flag) || /^-+no-/i.test(flag)) return false;
  const name = flag.replace(/^-+/, '');
  // A one-letter option means what its program says; only the table above knows.
  return name.length > 1 && classifyName(name) === 'secret';
}

/** `-u me:pw`, `--user me:pw`, `-a me:pw` (curl, httpie, mongo…): a `user:password` after a user option, for any program. */
const USER_FLAGS = new Set(['-u', '--user', '-U', '--proxy-user', '-a', '--basic-auth', '--username']);

function takesSecret(flag: string, program: { next: string[] } | undefined, value: string): boolean {
  if (flag.includes('=')) return false;
  if (USER_FLAGS.has(flag) && value.includes(':') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return true;
  return HEADER_FLAGS.has(flag) || isSecretFlag(flag) || (program?.next.includes(flag) ?? false);
}

// ---------------------------------------------------------------------------------------------
// Config values

type Json = unknown;
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

interface Walk {
  /** Every value hidden by a rule on the way: hidden again wherever else it appears. */
  hidden: Set<string>;
  env: Readonly<Record<string, string | undefined>>;
}

/** A scalar that must not be shown: a non-empty string or a number. Booleans and null carry no secret. */
function hideScalar(v: unknown, walk: Walk): unknown {
  if (typeof v === 'string') {
    if (v === '') return v;
    walk.hidden.add(v);
    return REDACTED;
  }
  if (typeof v === 'number' || typeof v === 'bigint') {
    walk.hidden.add(String(v));
    return REDACTED;
  }
  return v;
}

/** Every leaf under `v` hidden, keys (names) kept. */
function hideAll(v: unknown, walk: Walk): unknown {
  if (Array.isArray(v)) return v.map((x) => hideAll(x, walk));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hideAll(x, walk)]));
  return hideScalar(v, walk);
}

function walkValue(v: unknown, key: string | undefined, siblings: Record<string, unknown> | undefined, walk: Walk): unknown {
  const kind = key === undefined ? 'plain' : classifyName(key);
  if (kind === 'value-map' && (isObject(v) || Array.isArray(v))) {
    // A header list written as lines (`["Authorization: Bearer …"]`) keeps the names.
    if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? (walk.hidden.add(x), headerLine(x)) : hideAll(x, walk)));
    return hideAll(v, walk);
  }
  if (kind === 'value-map' && typeof v === 'string') {
    walk.hidden.add(v);
    return headerLine(v);
  }
  if (kind === 'env-name' && typeof v === 'string') {
    if (!ENV_NAME.test(v)) return hideScalar(v, walk);
    const value = walk.env[v];
    if (value) walk.hidden.add(value);
    return v;
  }
  if (kind === 'secret') {
    // A secret-named key over nested blocks is a name (a channel called #secrets): its blocks are judged key by key.
    const nested = isObject(v) && Object.values(v).some((x) => isObject(x));
    if (!nested) return hideAll(v, walk);
  }
  if (Array.isArray(v)) {
    if (v.every((x) => typeof x === 'string')) {
      const command = typeof siblings?.command === 'string' ? siblings.command : undefined;
      return scrubArgv(v as string[], command, walk.hidden);
    }
    return v.map((x) => walkValue(x, undefined, undefined, walk));
  }
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walkValue(x, k, v, walk)]));
  if (typeof v === 'string') return scrubText(v, walk.hidden);
  return v;
}

/** Replaces every occurrence of a known secret (and its URL-encoded form) in the strings of `v`. */
function hideKnown(v: unknown, known: readonly string[]): unknown {
  if (known.length === 0) return v;
  if (typeof v === 'string') {
    if (v === REDACTED) return v;
    let s = v;
    for (const secret of known) {
      if (s === secret) return REDACTED;
      // Short values are hidden only where they are the whole string: "pw" is inside too many words.
      if (secret.length < 6) continue;
      for (const form of new Set([secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%20/g, '+')])) s = s.split(form).join(REDACTED);
    }
    return s;
  }
  if (Array.isArray(v)) return v.map((x) => hideKnown(x, known));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hideKnown(x, known)]));
  return v;
}

/**
 * The values of secret-named environment variables (`AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`,
 * `DISCORD_TOKEN`): a `${NAME}` reference, written by an operator or slipped into a patch,
 * puts them into the config under any key, and they are hidden there too.
 */
function envSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env).flatMap(([name, value]) => (value && classifyName(name) === 'secret' ? [value] : []));
}

function knownList(walk: Walk, extra: readonly string[] | undefined): string[] {
  extra = [...(extra ?? []), ...envSecrets(walk.env)];
  // Fewer than 4 characters is no credential worth the name, and hiding every "1" or "on" would hide ids and switches.
  const all = new Set([...walk.hidden, ...(extra ?? [])].filter((s) => s.length >= 4 && !s.includes(REDACTED)));
  // Longest first, so a secret that contains another is hidden whole.
  return [...all].sort((a, b) => b.length - a.length);
}

/**
 * The config (or any part of it) as it may be shown: same shape, same keys, every credential
 * replaced by `[redacted]`. Values hidden by one rule are hidden wherever else they appear.
 */
export function redactConfig<T = Json>(value: T, options: RedactOptions = {}): T {
  const walk: Walk = { hidden: new Set(), env: options.env ?? {} };
  const first = walkValue(value, undefined, undefined, walk);
  return hideKnown(first, knownList(walk, options.secrets)) as T;
}

/**
 * The secrets a config holds (every value `redactConfig` hides by a rule, and the values of
 * the environment variables its `*Env` keys name), longest first: for hiding them in text
 * built from the config (messages, errors) with `redactKnown`.
 */
export function configSecrets(value: unknown, options: RedactOptions = {}): string[] {
  const walk: Walk = { hidden: new Set(), env: options.env ?? {} };
  walkValue(value, undefined, undefined, walk);
  return knownList(walk, options.secrets);
}

/** A message, error or other text with its credentials hidden: the patterns of `redactText` and the secrets given. */
export function redactKnown(text: string, secrets: readonly string[] = []): string {
  return hideKnown(redactText(text), secrets) as string;
}

// ---------------------------------------------------------------------------------------------
// Changes

export interface ShownChange {
  /** The key path as error messages write it. */
  path: string;
  before: unknown;
  after: unknown;
}

/**
 * The rows of a config change as cards, audit rows and logs show them. Each side is read from
 * the whole redacted config, so a leaf is judged with its context (an `args` list with its
 * server's `command`, a value that is a secret elsewhere in either config).
 */
export function redactChanges(
  changes: ReadonlyArray<{ path: readonly string[]; before: unknown; after: unknown }>,
  before: unknown,
  after: unknown,
  dotted: (path: readonly string[]) => string,
  options: RedactOptions = {},
): ShownChange[] {
  const secrets = [...configSecrets(before, options), ...configSecrets(after, options)];
  const opts = { ...options, secrets };
  const shownBefore = redactConfig(before, opts);
  const shownAfter = redactConfig(after, opts);
  return changes.map((c) => ({ path: dotted(c.path), before: at(shownBefore, c.path) ?? null, after: at(shownAfter, c.path) ?? null }));
}

function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const p of path) {
    if (!isObject(v) || !Object.hasOwn(v, p)) return undefined;
    v = v[p];
  }
  return v;
}

// Attacker-written table: ways a known secret can leave in a tool's output, a message or a log
// line — the exact value and every encoding a command would give it (`base64`, `xxd -p`,
// `jq -R @uri`, JSON string escaping, `fold`) — and each must come out as its label. Then the
// look-alikes that must stay, the label refusal, and the linear-time promise on hostile text.
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { detectCredentials, registerKnownSecrets, scrubDeep, scrubSecrets, secretForms, secretLabelIn, secretLabelsIn } from '../../src/redact/scrub.js';

const TOKEN = 'MTE4NzY1NDMyMTA5ODc2NTQzMg.GhJkLm.Pl4nt3dD1sc0rdT0k3nV4lu3XyZ09';
const PASSWORD = 'pg-p@ss w0rd/"quoted"\\slash';
let off: (() => void) | undefined;
afterEach(() => off?.());
const plant = () => {
  off = registerKnownSecrets('test', [
    { name: 'DISCORD_TOKEN', value: TOKEN },
    { name: 'STORE_URL_PASSWORD', value: PASSWORD },
  ]);
};

const sh = (script: string, input: string) => execFileSync('sh', ['-c', script], { input }).toString();

describe('a known secret in every form a command prints it', () => {
  const cases: Array<[string, (v: string) => string]> = [
    ['exact', (v) => `token=${v}`],
    ['base64 (GNU base64, wrapped at 76)', (v) => sh('base64', v)],
    ['base64 of a larger blob, offset 1', (v) => sh('base64 -w0', `x${v}y`)],
    ['base64 of a larger blob, offset 2', (v) => sh('base64 -w0', `xy${v}`)],
    ['base64url', (v) => Buffer.from(`zz${v}`).toString('base64url')],
    ['hex (xxd -p)', (v) => sh('xxd -p', v)],
    ['hex upper case', (v) => Buffer.from(v).toString('hex').toUpperCase()],
    ['URL-encoded', (v) => `https://x.test/?q=${encodeURIComponent(v)}`],
    ['form-encoded', (v) => new URLSearchParams({ q: v }).toString()],
    ['JSON string', (v) => JSON.stringify({ v })],
    ['JSON inside JSON', (v) => JSON.stringify(JSON.stringify({ v }))],
    ['split by fold -w 10', (v) => sh('fold -w 10', v)],
    ['split by a CRLF wrap', (v) => `${v.slice(0, 17)}\r\n${v.slice(17)}`],
    ['env output line', (v) => `HOME=/root\nDISCORD_TOKEN=${v}\nPATH=/bin`],
  ];
  for (const [secretName, value] of [['DISCORD_TOKEN', TOKEN], ['STORE_URL_PASSWORD', PASSWORD]] as const) {
    it.each(cases)(`${secretName}: %s`, (_what, encode) => {
      plant();
      const printed = encode(value);
      const out = scrubSecrets(printed, { detect: false });
      for (const form of secretForms(value)) expect(out.replace(/\r?\n/g, '')).not.toContain(form);
      expect(out).toContain(`[secret:${secretName}]`);
    });
  }
  it('structured values: every string, keys too, without copying what did not change', () => {
    plant();
    const value = { a: [`x ${TOKEN}`], [TOKEN]: 1, n: 2, same: { s: 'plain' } };
    const out = scrubDeep(value);
    expect(JSON.stringify(out)).not.toContain(TOKEN);
    expect(out.same).toBe(value.same);
  });
  it('structured values: a copy keeps the elements and entries before and after the one that changed, in order', () => {
    plant();
    const first = { type: 'text', text: 'before' };
    const last = { type: 'text', text: 'after' };
    const value = { role: 'user', content: [first, { type: 'text', text: `x ${PASSWORD}` }, last], tail: 'plain', [PASSWORD]: 3 };
    const out = scrubDeep(value);
    expect(out).not.toBe(value);
    expect(Object.keys(out)).toEqual(['role', 'content', 'tail', '[secret:STORE_URL_PASSWORD]']);
    expect(out.content).toHaveLength(3);
    expect(out.content[0]).toBe(first);
    expect(out.content[1]).toEqual({ type: 'text', text: 'x [secret:STORE_URL_PASSWORD]' });
    expect(out.content[2]).toBe(last);
    expect(value.content[1]!.text).toBe(`x ${PASSWORD}`);
    const clean = { role: 'user', content: [first, last] };
    expect(scrubDeep(clean)).toBe(clean);
  });
  it.each([
    ['before the entry that changed', `{"__proto__":{"polluted":1},"t":"x TOKEN"}`],
    ['after it', `{"t":"x TOKEN","__proto__":"kept"}`],
    ['as the entry that changed', `{"__proto__":"x TOKEN"}`],
  ])('a key named __proto__ (as JSON.parse makes it) is copied as a key, %s, and sets no prototype', (_where, json) => {
    plant();
    const value = JSON.parse(json.replace('TOKEN', TOKEN)) as Record<string, unknown>;
    const out = scrubDeep(value);
    expect(out).not.toBe(value);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(Object.keys(value));
    expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse(JSON.stringify(value).replace(TOKEN, '[secret:DISCORD_TOKEN]')));
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
  });
  it.each([
    ['a known secret of the shortest length looked for', 'abc123', 'k=abc123', 'k=[secret:SHORT]'],
    ['a text of 19 characters holding it', 'abc123', 'xxxxxxxxxxxxxabc123', 'xxxxxxxxxxxxx[secret:SHORT]'],
  ])('short texts are still scanned for known secrets: %s', (_what, secret, text, expected) => {
    off = registerKnownSecrets('test', [{ name: 'SHORT', value: secret }]);
    expect(scrubSecrets(text)).toBe(expected);
    expect(scrubSecrets(text)).toBe(expected);
  });
  it('nothing registered, nothing changed', () => {
    expect(scrubSecrets(`x ${TOKEN.slice(0, 10)} y`, { detect: false })).toBe(`x ${TOKEN.slice(0, 10)} y`);
  });
});

describe('a text found clean is remembered only until the secrets change', () => {
  // Long enough to be remembered (short texts are scanned every time).
  const text = `the build log says: password is ${PASSWORD}, and nothing else of note here at all`;
  it('a secret registered after the text was found clean is hidden in it', () => {
    expect(scrubSecrets(text, { detect: false })).toBe(text);
    expect(scrubSecrets(text)).toBe(text);
    plant();
    expect(scrubSecrets(text, { detect: false })).toContain('[secret:STORE_URL_PASSWORD]');
    expect(scrubSecrets(text)).toContain('[secret:STORE_URL_PASSWORD]');
    expect(JSON.stringify(scrubDeep({ m: [{ t: text }] }))).not.toContain(PASSWORD);
  });
  it('clean of known secrets is not clean of detected credentials', () => {
    const withToken = `a message quoting a bot token ${TOKEN} that nobody registered as a secret`;
    expect(detectCredentials(withToken)).not.toHaveLength(0);
    expect(scrubSecrets(withToken, { detect: false })).toBe(withToken);
    expect(scrubSecrets(withToken)).not.toContain(TOKEN);
    expect(scrubSecrets(withToken)).not.toContain(TOKEN);
  });
  it('a secret removed is shown again, as before the memo', () => {
    plant();
    expect(scrubSecrets(text)).not.toContain(PASSWORD);
    off?.();
    off = undefined;
    expect(scrubSecrets(text)).toBe(text);
  });
});

describe('a label is never content', () => {
  it.each([
    [{ path: 'a.txt', content: 'key=[secret:DISCORD_TOKEN]\n' }, '[secret:DISCORD_TOKEN]'],
    [{ command: 'echo [secret:detected-github-token] > f' }, '[secret:detected-github-token]'],
    [{ edits: [{ old: 'a', new: 'pw: [secret:STORE_URL_PASSWORD]' }] }, '[secret:STORE_URL_PASSWORD]'],
  ])('found in %j', (args, label) => {
    expect(secretLabelIn(args)).toBe(label);
  });
  it.each([[{ text: 'a [secret] b' }], [{ text: '[secret:]' }], [{ text: 'secret:X' }], [{ n: 1 }]])('not in %j', (args) => {
    expect(secretLabelIn(args)).toBeUndefined();
  });
  it('lists each label once', () => {
    expect(secretLabelsIn('[secret:A] and [secret:B] and [secret:A]')).toEqual(['[secret:A]', '[secret:B]']);
  });
});

describe('linear on hostile text', () => {
  const hostile: Array<[string, string]> = [
    ['a run of JWT starts', 'eyJ.'.repeat(50_000)],
    ['a run of separators', 'a-'.repeat(100_000)],
    ['a long token run', 'A'.repeat(200_000)],
    ['Discord-like prefixes', 'MTE4NzY1NDMyMTA5ODc2NTQzMg.'.repeat(8_000)],
    ['PEM headers without end', '-----BEGIN PRIVATE KEY-----'.repeat(8_000)],
    ['near-miss of a known secret', TOKEN.slice(0, -1).repeat(4_000)],
  ];
  // ~200 KB each: a polynomial scan takes minutes here; a linear one well under a second even
  // on a loaded two-core machine (about 50 ms idle).
  it.each(hostile)('%s: under 1 s', (_what, text) => {
    plant();
    const started = performance.now();
    scrubSecrets(text);
    detectCredentials(text);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

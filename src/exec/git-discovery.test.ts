import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecVerdict, SegmentVerdict } from './decide.js';
import { judgeRepository, needsGitListing, parseListing, repositoryAt, withGitDiscovery } from './git-discovery.js';

const root = mkdtempSync(path.join(tmpdir(), 'warden-git-discovery-'));
const ws = path.join(root, 'ws');
const repo = path.join(ws, 'repo');
mkdirSync(path.join(repo, '.git'), { recursive: true });
mkdirSync(path.join(ws, 'plain', 'deep'), { recursive: true });
writeFileSync(path.join(repo, '.git', 'in.cfg'), '');
symlinkSync('/nonexistent/out.cfg', path.join(repo, '.git', 'out.cfg'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const N = 'f'.repeat(32);

describe('repositoryAt: is there a repository git would find, from the working directory up to the workspace', () => {
  it.each<[string, string, string | null]>([
    ['the repository itself', repo, repo],
    ['a directory inside it', path.join(repo, 'src'), repo],
    ['inside its .git', path.join(repo, '.git'), path.join(repo, '.git')],
    ['no repository up to the workspace', path.join(ws, 'plain', 'deep'), null],
    ['the workspace itself', ws, null],
  ])('%s', (_what, cwd, expected) => {
    expect(repositoryAt(cwd, ws)).toBe(expected);
  });
});

describe('parseListing: frames only the nonce can make', () => {
  const frame = (dir: string, r: string, c: string, l: string, status = [0, 0, 0]) =>
    `${N} D\n${r}\n${N} R ${status[0]}\n${c}\n${N} C ${status[1]}\n${l}\n${N} L ${status[2]}\n`;
  it('reads one frame per directory', () => {
    const out = `${frame('/a', '/a/.git\n/a/.git\n/a\n', 'file:.git/config\0core.bare\nfalse\0', '')}${N} E\n`;
    const r = parseListing(out, N, ['/a']);
    expect(r.ok && r.repos[0]).toMatchObject({ dir: '/a', revParse: { status: 0 }, config: { status: 0, text: 'file:.git/config\0core.bare\nfalse\0' } });
  });
  it.each<[string, string]>([
    ['no end marker (killed, cut)', frame('/a', '', '', '')],
    ['a frame missing', `${N} E\n`],
    ['a marker with another nonce', `${'0'.repeat(32)} D\n${N} E\n`],
    ['the directory could not be entered', `${N} D\n${N} X\n${N} E\n`],
  ])('%s: not a listing', (_what, out) => {
    expect(parseListing(out, N, ['/a']).ok).toBe(false);
  });
});

describe('judgeRepository: is the listing what git reads when the command runs', () => {
  const listed = (config: string, revParse = `${repo}/.git\n${repo}/.git\n${repo}\n`, status = 0) => ({
    dir: repo,
    revParse: { status, text: revParse },
    config: { status: 0, text: config },
    files: { status: 0, text: '' },
  });
  const entry = (key: string, value: string, origin = 'file:.git/config') => `${origin}\0${key}\n${value}\0`;
  it.each<[string, ReturnType<typeof listed>, RegExp | null]>([
    ['a plain listing', listed(entry('filter.evil.clean', 'x')), null],
    ['our own command-scope entries', listed(entry('core.pager', 'cat', 'command line:')), null],
    ['an include inside .git', listed(entry('include.path', 'in.cfg')), null],
    ['includeIf gitdir:', listed(entry('includeif.gitdir:/x/.path', 'in.cfg')), null],
    ['includeIf gitdir/i:', listed(entry('includeIf.gitdir/i:/x/.path', 'in.cfg')), null],
    ['no repository opened', listed('', 'fatal: not a git repository\n', 128), /does not open the repository.*not a git repository/],
    ['a git directory outside the workspace', listed('', `/tmp/x.git\n/tmp/x.git\n${repo}\n`), /git directory of .* is \/tmp\/x\.git, outside/],
    ['a common directory outside the workspace', listed('', `${repo}/.git\n/srv/common\n${repo}\n`), /common git directory/],
    ['configuration read from outside', listed(entry('a.b', 'c', 'file:/etc/elsewhere')), /reads configuration from \/etc\/elsewhere/],
    ['include of ~', listed(entry('include.path', '~/x.cfg')), /includes ~\/x\.cfg, outside/],
    ['include of %(prefix)', listed(entry('include.path', '%(prefix)/x.cfg')), /outside/],
    ['include that is missing', listed(entry('include.path', 'later.cfg')), /does not exist yet/],
    ['include that links out', listed(entry('include.path', 'out.cfg')), /does not exist yet|outside/],
    ['include of an absolute path outside', listed(entry('include.path', '/etc/hostname')), /outside the workspace/],
    ['includeIf onbranch:', listed(entry('includeif.onbranch:main.path', 'in.cfg')), /condition the command can change \(onbranch:main\)/],
    ['includeIf hasconfig:', listed(entry('includeIf.hasconfig:remote.*.url:x.path', 'in.cfg')), /condition the command can change/],
    ['a key that was not UTF-8', listed(entry('filter.ev\ufffdil.clean', 'x')), /not valid UTF-8/],
  ])('%s', (_what, input, blind) => {
    const judged = judgeRepository(input, ws);
    if (blind === null) expect(judged.blind).toBeNull();
    else expect(judged.blind).toMatch(blind);
  });
  it('lists gitlinks inside the top level only', () => {
    const judged = judgeRepository({ ...listed(''), files: { status: 0, text: `160000 ${'a'.repeat(40)} 0\tsub\x00100644 ${'b'.repeat(40)} 0\tf\x00160000 ${'c'.repeat(40)} 0\t../up\0` } }, ws);
    expect(judged.gitlinks).toEqual([path.join(repo, 'sub')]);
  });
});

describe('withGitDiscovery: a blind listing asks where the command would have run', () => {
  const seg = (matchedBy: SegmentVerdict['matchedBy']): SegmentVerdict => ({ argv: ['git'], effectiveArgv: ['git'], resolved: '/usr/bin/git', matchedBy });
  const verdict = (decision: ExecVerdict['decision'], ...segments: SegmentVerdict[]): ExecVerdict => ({
    decision,
    reason: 'r',
    segments,
    rewritten: null,
    fallbackScript: 'x',
    analysis: { ok: true },
    satisfied: true,
    askReasons: [],
    inlineEval: null,
    allowAlways: { offered: true, entries: [] },
    changedSinceApproval: [],
  });
  const blind = { neutralisations: [], blind: 'b' };
  const seen = { neutralisations: [], blind: null };
  const policy = { security: 'allowlist' as const, ask: 'on-miss' as const };
  it.each<[string, ExecVerdict, typeof blind | typeof seen, typeof policy | { security: 'full'; ask: 'off' }, string]>([
    ['listing sees: unchanged', verdict('allow', seg('allowlist')), seen, policy, 'allow'],
    ['blind, an allowlist entry: asks', verdict('allow', seg('allowlist')), blind, policy, 'ask'],
    ['blind, an allow-always grant: asks', verdict('allow', seg('allow-always')), blind, policy, 'ask'],
    ['blind, ask off: denied', verdict('allow', seg('allowlist')), blind, { ...policy, ask: 'off' } as never, 'deny'],
    ['blind, read-only and safe bins only: runs', verdict('allow', seg('read-only'), seg('safe-bin'), seg('safe-builtin')), blind, policy, 'allow'],
    ['blind, read-only and an entry: asks', verdict('allow', seg('read-only'), seg('allowlist')), blind, policy, 'ask'],
    ['blind, asks anyway: asks', verdict('ask', seg(null)), blind, policy, 'ask'],
    ['blind, denied anyway: denied', verdict('deny', seg(null)), blind, policy, 'deny'],
    ['blind, security full: unchanged', verdict('allow', seg(null)), blind, { security: 'full', ask: 'off' }, 'allow'],
  ])('%s', (_what, v, discovery, p, decision) => {
    const out = withGitDiscovery(v, discovery, p);
    expect(out.decision).toBe(decision);
    if (discovery.blind !== null && decision !== v.decision) {
      expect(out.allowAlways.offered).toBe(false);
      expect(out.fallbackScript).toBeNull();
      expect(out.reason).toMatch(/cannot be neutralised: b/);
    }
  });

  it.each<[string, ExecVerdict, boolean]>([
    ['an allowlisted git', verdict('allow', seg('allowlist')), true],
    ['the read-only list, safe bins and builtins', verdict('allow', seg('read-only'), seg('safe-bin'), seg('safe-builtin')), false],
    ['a read-only command that asks (environment overrides)', verdict('ask', seg('read-only')), true],
    ['a denied command', verdict('deny', seg(null)), false],
  ])('needsGitListing: %s → %s', (_what, v, needed) => {
    expect(needsGitListing(v)).toBe(needed);
  });
});

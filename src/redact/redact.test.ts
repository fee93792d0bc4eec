import { describe, expect, it } from 'vitest';
import { dotted } from '../control/config-diff.js';
import { classifyName, configSecrets, redactArgv, redactChanges, redactConfig, redactKnown, redactText } from './redact.js';

describe('classifyName: what a key, flag or parameter name says about its value', () => {
  it.each([
    ['token', 'secret'],
    ['botToken', 'secret'],
    ['signingSecret', 'secret'],
    ['apiKey', 'secret'],
    ['API_KEY', 'secret'],
    ['X-Api-Key', 'secret'],
    ['PRIVATE-TOKEN', 'secret'],
    ['access_token', 'secret'],
    ['%74oken', 'secret'],
    ['passwd', 'secret'],
    ['Authorization', 'secret'],
    ['cookie', 'secret'],
    ['sig', 'secret'],
    ['key', 'secret'],
    ['clientSecretValue', 'secret'],
    ['apiKeyEnv', 'env-name'],
    ['TOKEN_ENV', 'env-name'],
    ['env', 'value-map'],
    ['headers', 'value-map'],
    ['maxTokens', 'plain'],
    ['maxOutputTokens', 'plain'],
    ['contextTokens', 'plain'],
    ['schemaTokens', 'plain'],
    ['baseUrl', 'plain'],
    ['keyboard', 'plain'],
    ['passthrough', 'plain'],
    ['allowPrivateNetwork', 'plain'],
  ])('%s → %s', (name, kind) => expect(classifyName(name)).toBe(kind));
});

describe('redactText: what is kept around a hidden credential', () => {
  it.each([
    ['postgres://warden:pw@db:5432/warden', 'postgres://[redacted]@db:5432/warden'],
    ['https://api.example.com/v1?token=abc&region=eu', 'https://api.example.com/v1?token=[redacted]&region=eu'],
    ['host=db password=pw sslmode=require', 'host=db password=[redacted] sslmode=require'],
    ['Authorization: Bearer abc', 'Authorization: [redacted]'],
    ['{"apiKey":"x1","maxTokens":100}', '{"apiKey":"[redacted]","maxTokens":100}'],
    ['deploy --token abc --verbose', 'deploy --token [redacted] --verbose'],
    // Nothing to hide: hosts, ports, ssh remotes, paths with @, snowflake ids.
    ['http://[::1]:8080/x', 'http://[::1]:8080/x'],
    ['git@github.com:org/repo.git', 'git@github.com:org/repo.git'],
    ['https://medium.example/@someone/post', 'https://medium.example/@someone/post'],
    ['https://discord.com/api/webhooks/123456789012345678', 'https://discord.com/api/webhooks/123456789012345678'],
    ['localhost:5432', 'localhost:5432'],
    ['--no-auth --port 1', '--no-auth --port 1'],
  ])('%s', (text, shown) => expect(redactText(text)).toBe(shown));

  it('runs in linear time on text an attacker shaped (an error message, a child\'s stderr)', () => {
    const attacks = [
      'A'.repeat(100_000) + 'A//',
      '//a:b/'.repeat(30_000),
      '//x/'.repeat(30_000) + '@',
      'eyJ0000000-'.repeat(15_000) + '\x00eyJ0ee0J0J0.eyJe0ey',
      '/' + '(\x00:/'.repeat(25_000) + '\t',
      'a:b@'.repeat(30_000),
      '-----BEGIN '.repeat(20_000),
      'token='.repeat(30_000),
      '--token '.repeat(30_000),
      'A'.repeat(60_000) + 'a=1',
      '--' + 'A'.repeat(60_000) + 'a x',
    ];
    for (const text of attacks) {
      const t0 = performance.now();
      redactText(text);
      expect(performance.now() - t0, text.slice(0, 20)).toBeLessThan(1500);
    }
  });

  it('is idempotent', () => {
    const once = redactText('postgres://u:p@db/x?password=y Authorization: Bearer z --token=t');
    expect(redactText(once)).toBe(once);
  });
});

describe('redactArgv', () => {
  it.each<[string | undefined, string[], string[]]>([
    [undefined, ['--api-key', 'k', '--token=t', '-v'], ['--api-key', '[redacted]', '--token=[redacted]', '-v']],
    [undefined, ['-H', 'X-Id: 1', '--header=Cookie: a=b'], ['-H', 'X-Id: [redacted]', '--header=Cookie: [redacted]']],
    // A one-letter option means what its program says: psql's -p is a port, mysql's a password.
    ['psql', ['-p', '5432', '-U', 'warden'], ['-p', '5432', '-U', 'warden']],
    ['mysql', ['-pSECRET', '-u', 'me'], ['-p[redacted]', '-u', 'me']],
    ['/usr/local/bin/redis-cli', ['-a', 'pw', '-p', '6379'], ['-a', '[redacted]', '-p', '6379']],
    ['curl', ['-u', 'me:pw', 'https://x/'], ['-u', '[redacted]', 'https://x/']],
  ])('%s %j', (command, args, shown) => expect(redactArgv(args, command)).toEqual(shown));
});

describe('redactConfig', () => {
  it('hides values, not names: env and header names, *Env variable names, token counts stay', () => {
    const shown = redactConfig(
      { a: { apiKeyEnv: 'OPENAI_API_KEY', maxTokens: 10, env: { GH_TOKEN: 'v1' }, headers: { 'X-Id': 'v2' }, token: 'v3', enabled: true, nothing: null } },
      { env: { OPENAI_API_KEY: 'sk-value' } },
    );
    expect(shown).toEqual({ a: { apiKeyEnv: 'OPENAI_API_KEY', maxTokens: 10, env: { GH_TOKEN: '[redacted]' }, headers: { 'X-Id': '[redacted]' }, token: '[redacted]', enabled: true, nothing: null } });
  });

  it('a secret-named key over nested blocks is a name (a channel called #secrets): its blocks are judged key by key', () => {
    expect(redactConfig({ channels: { secrets: { tools: { allow: ['read'] }, token: 't1' } } })).toEqual({ channels: { secrets: { tools: { allow: ['read'] }, token: '[redacted]' } } });
  });

  it('an args list is judged with its sibling command', () => {
    expect(redactConfig({ s: { command: 'mysql', args: ['-pSECRET'] }, t: { command: 'psql', args: ['-p5432'] } })).toEqual({ s: { command: 'mysql', args: ['-p[redacted]'] }, t: { command: 'psql', args: ['-p5432'] } });
  });

  it('a value hidden once is hidden wherever it appears; the values named by *Env keys too', () => {
    const config = { s: { env: { T: 'tok-123456' } }, note: 'copy of tok-123456', k: { keyEnv: 'K' }, other: 'val-of-K-1' };
    expect(redactConfig(config, { env: { K: 'val-of-K-1' } })).toEqual({ s: { env: { T: '[redacted]' } }, note: 'copy of [redacted]', k: { keyEnv: 'K' }, other: '[redacted]' });
    expect(configSecrets(config, { env: { K: 'val-of-K-1' } })).toEqual(expect.arrayContaining(['tok-123456', 'val-of-K-1']));
    expect(redactKnown('failed with tok-123456', ['tok-123456'])).toBe('failed with [redacted]');
  });
});

describe('redactChanges', () => {
  it('shows each changed leaf with both sides redacted in context', () => {
    const before = { store: { url: 'postgres://u:old-pw@db/x' }, mcp: { s: { command: 'mysql', args: ['-pOLD'] } }, tools: { deny: ['exec'] } };
    const after = { store: { url: 'postgres://u:new-pw@db/x' }, mcp: { s: { command: 'mysql', args: ['-pNEW'] } }, tools: { deny: [] } };
    const changes = [
      { path: ['store', 'url'], before: before.store.url, after: after.store.url },
      { path: ['mcp', 's', 'args'], before: before.mcp.s.args, after: after.mcp.s.args },
      { path: ['tools', 'deny'], before: ['exec'], after: [] },
    ];
    expect(redactChanges(changes, before, after, dotted)).toEqual([
      { path: 'store.url', before: 'postgres://[redacted]@db/x', after: 'postgres://[redacted]@db/x' },
      { path: 'mcp.s.args', before: ['-p[redacted]'], after: ['-p[redacted]'] },
      { path: 'tools.deny', before: ['exec'], after: [] },
    ]);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { LOG_HOOKS } from '../log/log.js';
import { registerKnownSecrets } from '../redact/scrub.js';
import { configuredSecrets, credentialLike } from './known-secrets.js';

const config = (raw: unknown) => {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};

describe('the known secrets of a config', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-known-'));
  writeFileSync(path.join(dir, '.env'), 'ACME_KEY=acme-K3y-0099887766\nLOG_LEVEL=debug\nGREETING=hello world\n');
  const cfg = config({
    channels: { discord: { token: 'disc-T0ken-1234567890' }, slack: { botToken: 'xoxb-1-2-slackT0ken99', signingSecret: 'sign1ng-Secret-42' } },
    store: { url: 'postgres://warden:St0re-Passw0rd@db:5432/warden' },
    mcp: { servers: { docs: { url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer mcp-H3ader-777', Accept: 'application/json' } }, local: { command: 'x', env: { LOCAL_MODE: 'fast', API: 'loc4l-Api-Key-55' } } } },
    secrets: { grants: [{ name: 'DEPLOY_TOKEN', to: 'exec', commands: ['deploy *'] }] },
  });
  const found = configuredSecrets(cfg, { env: { OPENAI_API_KEY: 'sk-env-0123456789abcdef', HOME: '/root', PWD: '/srv/warden-start-dir', OLDPWD: '/home/ops', DB_PWD: 'db-Pwd-0123456789', DISCORD_TOKEN: 'disc-T0ken-1234567890' }, baseDir: dir, webToken: 'web-T0k3n-abcdef123456' });
  const byValue = new Map(found.map((s) => [s.value, s.name]));

  it.each([
    ['disc-T0ken-1234567890', 'DISCORD_TOKEN'],
    ['xoxb-1-2-slackT0ken99', 'SLACK_BOT_TOKEN'],
    ['sign1ng-Secret-42', 'SLACK_SIGNING_SECRET'],
    ['St0re-Passw0rd', 'STORE_URL_PASSWORD'],
    ['mcp-H3ader-777', 'DOCS_AUTHORIZATION'],
    ['loc4l-Api-Key-55', 'LOCAL_API'],
    ['sk-env-0123456789abcdef', 'OPENAI_API_KEY'],
    ['acme-K3y-0099887766', 'ACME_KEY'],
    ['web-T0k3n-abcdef123456', 'WEB_CHAT_TOKEN'],
    // `pwd` still names a password, except the shell's working directory below.
    ['db-Pwd-0123456789', 'DB_PWD'],
  ])('%s is known, named %s', (value, name) => {
    expect(byValue.get(value)).toBe(name);
  });

  it.each([['application/json'], ['fast'], ['debug'], ['hello world'], ['/root'], ['/srv/warden-start-dir'], ['/home/ops'], ['DEPLOY_TOKEN'], ['deploy *'], ['exec']])('%j is not a secret', (value) => {
    expect(byValue.has(value)).toBe(false);
  });

  it.each([
    ['a8Kd92jd', true],
    ['application/json', false],
    ['hello world 2', false],
    ['short1', false],
  ])('credentialLike(%j) = %s', (value, like) => {
    expect(credentialLike(value)).toBe(like);
  });
});

describe('log lines', () => {
  let off: (() => void) | undefined;
  afterEach(() => off?.());
  it('are scrubbed of known secrets and credential shapes, whatever field holds them', () => {
    off = registerKnownSecrets('log-test', [{ name: 'DISCORD_TOKEN', value: 'disc-T0ken-1234567890' }]);
    const lines: string[] = [];
    const out = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logger = pino({ hooks: LOG_HOOKS }, out);
    logger.info({ err: 'login failed with disc-T0ken-1234567890', url: 'https://x/?t=ghp_R2d2C3po8Luke9Leia0Han1Solo2Chewie3Yoda' }, 'oops');
    expect(lines.join('')).toContain('[secret:DISCORD_TOKEN]');
    expect(lines.join('')).toContain('[secret:detected-github-token]');
    expect(lines.join('')).not.toContain('disc-T0ken');
    expect(JSON.parse(lines[0]!).msg).toBe('oops');
  });
});

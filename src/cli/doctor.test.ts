import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { runDoctorChecks } from './doctor.js';

const configOf = (raw: unknown) => {
  const r = parseConfig(raw);
  if (!r.ok) throw r.error;
  return r.value.config;
};

describe('warden doctor', () => {
  it('names the missing model key and how to set it', async () => {
    const checks = await runDoctorChecks(configOf({ models: { default: 'anthropic/claude-sonnet-4-5' } }), '/tmp', {});
    const model = checks.find((c) => c.name === 'model anthropic/claude-sonnet-4-5');
    expect(model).toMatchObject({ ok: false, detail: 'none of ANTHROPIC_API_KEY is set', fix: 'export ANTHROPIC_API_KEY' });
  });

  it('accepts a present key and reports the web chat as the default without platform tokens', async () => {
    const checks = await runDoctorChecks(configOf({ models: { default: 'openai/gpt-5' } }), '/tmp', { OPENAI_API_KEY: 'x' });
    expect(checks.find((c) => c.name === 'model openai/gpt-5')?.ok).toBe(true);
    expect(checks.find((c) => c.name === 'web chat')?.detail).toBe('embedded default on http://127.0.0.1:3000');
  });

  it('warns, without failing, where Warden runs with less: no model configured', async () => {
    const checks = await runDoctorChecks(configOf({}), '/tmp', {});
    expect(checks.find((c) => c.name === 'model')).toMatchObject({ ok: true, warn: true, fix: 'set models.default, e.g. anthropic/claude-sonnet-4-5' });
    expect(checks.filter((c) => !c.ok)).toEqual([]);
  });

  it('flags a Slack config that can receive nothing', async () => {
    const checks = await runDoctorChecks(configOf({ channels: { slack: { botToken: 'xoxb-1' } } }), '/tmp', {}, { platforms: 'offline' });
    expect(checks.find((c) => c.name === 'slack')).toMatchObject({
      ok: false,
      detail: 'bot token present, no signing secret or app token; channels.slack has a bot token but neither signingSecret (HTTP events) nor appToken (Socket Mode): Slack could deliver nothing',
      fix: 'correct channels.slack',
    });
  });

  it('judges token shapes offline, as start does: a wrong kind fails, a "Bot " prefix warns', async () => {
    const checks = await runDoctorChecks(configOf({ channels: { discord: { token: 'Bot MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB' }, slack: { botToken: 'xoxp-1-2-abc', appToken: 'abc123' } } }), '/tmp', {}, { platforms: 'offline' });
    expect(checks.find((c) => c.name === 'discord')).toEqual({
      name: 'discord',
      ok: true,
      warn: true,
      detail: 'token present; channels.discord.token starts with "Bot ": that is the Authorization scheme, not part of the token; Warden strips it — remove it from the config',
      fix: 'correct channels.discord.token',
    });
    expect(checks.find((c) => c.name === 'slack')).toMatchObject({ ok: false, fix: 'correct channels.slack.botToken and channels.slack.appToken' });
  });

  it('an empty-token Discord block is "not configured", as start treats it (the web chat runs)', async () => {
    const checks = await runDoctorChecks(configOf({ channels: { discord: { token: '' } } }), '/tmp', {}, { platforms: 'offline' });
    expect(checks.find((c) => c.name === 'discord')).toEqual({ name: 'discord', ok: true, detail: 'not configured (channels.discord has no token; the web chat runs unless Slack is configured)' });
    expect(checks.find((c) => c.name === 'web chat')?.ok).toBe(true);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
  });

  it('reports an unwritable data dir without creating anything', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-doctor-'));
    writeFileSync(path.join(dir, 'file'), '');
    const checks = await runDoctorChecks(configOf({ dataDir: 'file/data' }), dir, {});
    expect(checks.find((c) => c.name === 'data dir')).toMatchObject({ ok: false, detail: expect.stringContaining('is not a directory') });
    expect(existsSync(path.join(dir, 'file', 'data'))).toBe(false);
  });

  it('in a container whose sandbox cannot start, says what the container must allow', async () => {
    const probe = { ok: false, identity: { uid: 1000, gid: 1000, staged: false }, checks: [], reason: 'bubblewrap could not start the sandbox: bwrap: No permissions to create new namespace' };
    const checks = await runDoctorChecks(configOf({}), '/tmp', {}, { probe, container: 'docker' });
    expect(checks.find((c) => c.name === 'container')).toMatchObject({ ok: true, warn: true, detail: expect.stringMatching(/^docker: docker refuses to create user namespaces/), fix: expect.stringContaining('seccomp=unconfined') });
  });

  it('in a container whose sandbox works, says so; outside one, says nothing', async () => {
    const probe = { ok: true, identity: { uid: 1000, gid: 1000, staged: false }, checks: [] };
    expect((await runDoctorChecks(configOf({}), '/tmp', {}, { probe, container: 'podman' })).find((c) => c.name === 'container')).toEqual({ name: 'container', ok: true, detail: 'podman: the sandbox works inside the container' });
    expect((await runDoctorChecks(configOf({}), '/tmp', {}, { probe, container: null })).find((c) => c.name === 'container')).toBeUndefined();
  });
});

describe('doctor: egress proxy (tools.exec.sandbox.network)', () => {
  const broken = { ok: false, detail: 'no node in a system directory (/usr/bin/node) to run the forwarder inside the sandbox' };
  it.each([
    ['mode none: a warning, not a failure', { mode: 'none' }, true, 'mode is none'],
    ['mode allowlist: a failure with the fix', { mode: 'allowlist', allow: ['git.test'] }, false, 'mode is allowlist (1 allowed, ask off)'],
    ['mode open: a failure', { mode: 'open' }, false, 'mode is open'],
  ])('%s', async (_what, network, ok, says) => {
    const checks = await runDoctorChecks(configOf({ tools: { exec: { host: 'sandbox', sandbox: { network } } } }), '/tmp', {}, { egress: broken, platforms: 'offline' });
    const check = checks.find((c) => c.name === 'egress proxy')!;
    expect(check.ok).toBe(ok);
    expect(check.detail).toContain(broken.detail);
    expect(check.detail).toContain(says);
    expect(check.fix).toContain('/usr/bin/node');
  });
  it('reports a working host as such', async () => {
    const checks = await runDoctorChecks(configOf({ tools: { exec: { host: 'sandbox', sandbox: { network: { mode: 'allowlist' } } } } }), '/tmp', {}, { egress: { ok: true, detail: 'own network namespace (only lo)' }, platforms: 'offline' });
    expect(checks.find((c) => c.name === 'egress proxy')).toMatchObject({ ok: true, detail: expect.stringContaining('only lo') });
  });
});

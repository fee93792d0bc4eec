import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { auditExec } from '../app/audit.js';

async function runCli(argv: string[], config: string) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-audit-'));
  writeFileSync(path.join(cwd, 'warden.config.yaml'), config);
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { cwd, env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

function audit(input: WardenConfigInput, hasBwrap = true) {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw parsed.error;
  return auditExec(parsed.value.config, { hasBwrap }).map((f) => `${f.severity} ${f.id}`);
}

const OWNERS = { owners: { web: ['op'], discord: ['111'] } };
const GUILD = { discord: { guilds: { '900': { channels: { dev: { tools: { allow: ['*'] } }, general: { tools: { deny: ['exec', 'process'] } } } } } } };

describe('auditExec', () => {
  it('is quiet for the safe default', () => {
    expect(audit({ ...OWNERS, channels: GUILD, tools: { profile: 'coding' } })).toEqual([]);
  });

  it('flags security=full when exec is reachable from a group channel (critical)', () => {
    const findings = audit({ ...OWNERS, channels: GUILD, tools: { profile: 'coding', exec: { security: 'full' } } });
    expect(findings).toContain('critical exec.security-full-in-groups');
  });

  it('flags an agent whose own tools.exec.security is full, naming its key', () => {
    const parsed = parseConfig({ ...OWNERS, channels: GUILD, agents: { list: [{ id: 'ops', tools: { profile: 'coding', exec: { security: 'full' } } }] } });
    if (!parsed.ok) throw parsed.error;
    const finding = auditExec(parsed.value.config, { hasBwrap: true }).find((f) => f.id === 'exec.security-full-in-groups');
    expect(finding?.message).toMatch(/^agents\.ops\.tools\.exec\.security is full/);
  });

  it('does not flag security=full when no group channel can reach exec', () => {
    const denied = { discord: { guilds: { '*': { tools: { deny: ['exec'] } } } } };
    expect(audit({ ...OWNERS, channels: denied, tools: { profile: 'coding', exec: { security: 'full' } } })).not.toContain('critical exec.security-full-in-groups');
    expect(audit({ ...OWNERS, tools: { profile: 'coding', exec: { security: 'full' } } })).not.toContain('critical exec.security-full-in-groups');
  });

  it('flags approvals nobody can give (critical), per configured provider', () => {
    expect(audit({ owners: { web: ['op'] }, channels: GUILD })).toContain('critical approvals.no-approvers');
    expect(audit({ ...OWNERS, approvals: { approvers: { discord: [] } }, channels: GUILD })).toContain('critical approvals.no-approvers');
    expect(audit({ ...OWNERS, channels: GUILD })).not.toContain('critical approvals.no-approvers');
    expect(audit({ channels: GUILD, tools: { exec: { ask: 'off' } } })).not.toContain('critical approvals.no-approvers');
  });

  it("counts the web chat's local user as the approver on web, as the running approval service does", () => {
    expect(audit({})).not.toContain('critical approvals.no-approvers');
    expect(audit({ approvals: { approvers: { web: [] } } })).not.toContain('critical approvals.no-approvers');
    expect(audit({ channels: GUILD })).toContain('critical approvals.no-approvers');
  });

  it('warns about an interpreter listed as a safe bin without a profile', () => {
    expect(audit({ ...OWNERS, tools: { exec: { safeBins: ['wc', 'python3', 'sh'] } } })).toEqual([
      'warn exec.safe-bin-interpreter',
      'warn exec.safe-bin-interpreter',
    ]);
    expect(audit({ ...OWNERS, tools: { exec: { safeBins: ['node'], safeBinProfiles: { node: { maxPositional: 0 } } } } })).toEqual([]);
  });

  it('warns about a group- or world-writable trusted dir', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-trusted-'));
    const open = path.join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const closed = path.join(dir, 'closed');
    mkdirSync(closed);
    chmodSync(closed, 0o755);
    expect(audit({ ...OWNERS, tools: { exec: { safeBinTrustedDirs: [open, closed] } } })).toEqual(['warn exec.trusted-dir-writable']);
  });

  it('notes a gateway host while bubblewrap is available, and a missing bubblewrap', () => {
    expect(audit({ ...OWNERS, tools: { exec: { host: 'gateway' } } }, true)).toEqual(['info exec.gateway-with-bubblewrap']);
    expect(audit({ ...OWNERS, tools: { exec: { host: 'gateway' } } }, false)).toEqual(['warn exec.no-bubblewrap']);
    expect(audit({ ...OWNERS, tools: { exec: { host: 'sandbox' } } }, false)).toEqual(['warn exec.sandbox-unavailable']);
  });
});

describe('warden audit', () => {
  it('exits 1 with a critical finding and prints the JSON contract', async () => {
    const config = 'owners: { web: [op], discord: ["111"] }\ntools:\n  profile: coding\n  exec: { security: full }\nchannels:\n  discord:\n    guilds:\n      "900": { channels: { dev: { tools: { allow: ["*"] } } } }\n';
    const { code, stdout } = await runCli(['audit', '--json'], config);
    expect(code).toBe(1);
    const { findings } = JSON.parse(stdout);
    expect(findings[0]).toEqual({ id: 'exec.security-full-in-groups', severity: 'critical', message: expect.stringContaining('guild 900'), fix: expect.any(String) });
  });
  it('exits 0 without critical findings', async () => {
    const { code, stdout } = await runCli(['audit'], 'owners: { web: [op] }\n');
    expect(code).toBe(0);
    expect(stdout === 'no findings' || !stdout.includes('CRITICAL')).toBe(true);
  });
});

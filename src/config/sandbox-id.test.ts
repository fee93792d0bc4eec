import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { effectiveExecConfig } from '../exec/effective-config.js';
import { sandboxIdentity } from '../exec/sandbox.js';
import { loadConfig } from './load.js';
import { DEFAULT_SANDBOX_ID, defaultSandboxId, sandboxIdSetting } from './sandbox-id.js';

const NOT_AN_ID = 'is not a sandbox id: expected a whole number from 1 to 4294967294';

describe('WARDEN_SANDBOX_ID as written', () => {
  it.each([
    ['unset: Warden\'s own id', undefined, { ok: true, id: 65533 }],
    ['blank: the same', '  ', { ok: true, id: 65533 }],
    ['an id', '65100', { ok: true, id: 65100 }],
    ['spaces around it', ' 65100 ', { ok: true, id: 65100 }],
    ['the highest id the kernel gives', '4294967294', { ok: true, id: 4294967294 }],
    ['root is never the sandbox', '0', { ok: false, error: `WARDEN_SANDBOX_ID="0" ${NOT_AN_ID}` }],
    ['the kernel\'s "no id"', '4294967295', { ok: false, error: `WARDEN_SANDBOX_ID="4294967295" ${NOT_AN_ID}` }],
    ['negative', '-1', { ok: false, error: `WARDEN_SANDBOX_ID="-1" ${NOT_AN_ID}` }],
    ['exponent', '6e4', { ok: false, error: `WARDEN_SANDBOX_ID="6e4" ${NOT_AN_ID}` }],
    ['hex', '0x10', { ok: false, error: `WARDEN_SANDBOX_ID="0x10" ${NOT_AN_ID}` }],
    ['a fraction', '65100.5', { ok: false, error: `WARDEN_SANDBOX_ID="65100.5" ${NOT_AN_ID}` }],
    ['a name, not a number', 'nobody', { ok: false, error: `WARDEN_SANDBOX_ID="nobody" ${NOT_AN_ID}` }],
    ['uid:gid is not a form it takes', '65100:65100', { ok: false, error: `WARDEN_SANDBOX_ID="65100:65100" ${NOT_AN_ID}` }],
  ] as const)('%s', (_case, given, want) => {
    expect(sandboxIdSetting(given)).toEqual(want);
  });

  it('a malformed value never turns into some other id where no config was loaded', () => {
    expect(() => defaultSandboxId({ WARDEN_SANDBOX_ID: 'abc' })).toThrow(NOT_AN_ID);
    expect(defaultSandboxId({})).toBe(DEFAULT_SANDBOX_ID);
  });
});

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-sandbox-id-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

describe('the sandbox identity a loaded config gives, as root', () => {
  const root = { uid: 0, gid: 0 };
  it.each([
    ['no file, no variable: 65533', {}, {}, { uid: 65533, gid: 65533 }],
    ['no file: the variable moves both ids', {}, { WARDEN_SANDBOX_ID: '65100' }, { uid: 65100, gid: 65100 }],
    ['an exec block without ids: the variable', { 'warden.config.yaml': 'tools:\n  exec: { host: sandbox }\n' }, { WARDEN_SANDBOX_ID: '65100' }, { uid: 65100, gid: 65100 }],
    ['ids in the file win over the variable', { 'warden.config.yaml': 'tools:\n  exec:\n    sandbox: { uid: 4000, gid: 4001 }\n' }, { WARDEN_SANDBOX_ID: '65100' }, { uid: 4000, gid: 4001 }],
    ['a uid alone in the file: the gid from the variable', { 'warden.config.yaml': 'tools:\n  exec:\n    sandbox: { uid: 4000 }\n' }, { WARDEN_SANDBOX_ID: '65100' }, { uid: 4000, gid: 65100 }],
    ['a .env file beside the config counts as the environment does', { 'warden.config.yaml': 'agents: {}\n', '.env': 'WARDEN_SANDBOX_ID=65101\n' }, {}, { uid: 65101, gid: 65101 }],
    ['an empty variable is no setting', {}, { WARDEN_SANDBOX_ID: '' }, { uid: 65533, gid: 65533 }],
  ] as const)('%s', (_case, files, env, want) => {
    // The process's own variable (the test run's id) must not leak into a load given its own env.
    const r = loadConfig({ cwd: dirWith(files), env: { ...env } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const configured = effectiveExecConfig(r.value.config).sandbox;
    const identity = sandboxIdentity({ uid: configured.uid ?? 65533, gid: configured.gid ?? 65533 }, root);
    expect({ uid: identity.uid, gid: identity.gid }).toEqual(want);
  });

  it('a malformed variable stops the load and names the variable and the key it stands for', () => {
    const r = loadConfig({ cwd: dirWith({}), env: { WARDEN_SANDBOX_ID: '-5' } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.problems).toEqual([{ path: 'tools.exec.sandbox.uid', message: `WARDEN_SANDBOX_ID="-5" ${NOT_AN_ID}` }]);
  });
});

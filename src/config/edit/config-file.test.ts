import { describe, expect, it } from 'vitest';
import JSON5 from 'json5';
import { parse as parseYaml } from 'yaml';
import { patchConfigText } from './config-file.js';
import { applyMergePatch } from './merge-patch.js';

const YAML_FILE = `# Warden for the team
owners:
  discord: ["1001"]   # the admins
channels:
  discord:
    token: \${DISCORD_TOKEN}
    guilds:
      "111":
        channels:
          dev: { tools: { allow: ["*"] } }  # builders
tools:
  profile: coding
  deny: [browser]
`;

const JSON5_FILE = `// Warden, JSON5 edition
{
  owners: { discord: ['1001'] }, // admins
  tools: {
    profile: 'coding',
    /* keep the browser away */
    deny: ['browser'],
  },
}
`;

const env = { DISCORD_TOKEN: 'tok' };

describe('a merge patch written into a config file', () => {
  it('keeps YAML comments, layout and ${NAME} references; only the patched nodes change', () => {
    const r = patchConfigText('/x/warden.config.yaml', YAML_FILE, { channels: { discord: { guilds: { '111': { channels: { general: { tools: { deny: ['exec'] } } } } } } } }, env);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.text).toContain('# Warden for the team');
    expect(r.text).toContain('# the admins');
    expect(r.text).toContain('# builders');
    expect(r.text).toContain('token: ${DISCORD_TOKEN}');
    expect(r.text).toContain('general:');
    expect(parseYaml(r.text).channels.discord.guilds['111'].channels.general.tools.deny).toEqual(['exec']);
    expect(r.loaded.config.channels.discord?.token).toBe('tok');
  });

  it('replaces a scalar in place and removes keys set to null', () => {
    const r = patchConfigText('/x/warden.config.yaml', YAML_FILE, { tools: { profile: 'minimal', deny: null } }, env);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.text).toContain('profile: minimal');
    expect(r.text).not.toContain('deny:');
    expect(r.text).toContain('# the admins');
  });

  it('refuses a patch the schema refuses, with the key path, and writes nothing', () => {
    const r = patchConfigText('/x/warden.config.yaml', YAML_FILE, { tools: { exec: { securty: 'full' } } }, env);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([{ path: 'tools.exec.securty', message: 'unknown key (did you mean "security"?)' }]);
  });

  it('refuses what is no merge patch', () => {
    for (const patch of [[1], 'x', {}, { a: { __proto__: 1 } }, JSON.parse('{"__proto__": {"x": 1}}')]) {
      expect(patchConfigText('/x/w.yaml', YAML_FILE, patch, env).ok).toBe(false);
    }
  });

  it('edits JSON5 keeping its comments, quoting and trailing commas', () => {
    const r = patchConfigText('/x/warden.config.json5', JSON5_FILE, { tools: { deny: ['browser', 'exec'], alsoAllow: ['cron'] }, owners: { slack: ['U1'] } }, env);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.text).toContain('// Warden, JSON5 edition');
    expect(r.text).toContain('/* keep the browser away */');
    expect(r.text).toContain('// admins');
    expect(JSON5.parse(r.text)).toEqual(applyMergePatch(JSON5.parse(JSON5_FILE), { tools: { deny: ['browser', 'exec'], alsoAllow: ['cron'] }, owners: { slack: ['U1'] } }));
  });

  it('removes JSON5 members, first, middle and last, and writes strict JSON for .json', () => {
    const text = '{\n  "a": 1,\n  "tools": { "profile": "coding", "deny": ["x"], "allow": ["read"] }\n}\n';
    for (const patch of [{ tools: { profile: null } }, { tools: { deny: null } }, { tools: { allow: null } }, { a: null }]) {
      const r = patchConfigText('/x/c.json', text.replace('"a": 1,\n  ', ''), patch, env);
      if (!r.ok) throw new Error(JSON.stringify(r.problems));
      expect(() => JSON.parse(r.text)).not.toThrow();
    }
    const added = patchConfigText('/x/c.json', '{}', { tools: { deny: ['exec'] } }, env);
    if (!added.ok) throw new Error(JSON.stringify(added.problems));
    expect(JSON.parse(added.text)).toEqual({ tools: { deny: ['exec'] } });
  });

  it('starts an absent or empty file', () => {
    const r = patchConfigText('/x/warden.config.yaml', '', { tools: { deny: ['exec'] } }, env);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(parseYaml(r.text)).toEqual({ tools: { deny: ['exec'] } });
  });
});

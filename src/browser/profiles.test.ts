import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { browserProfiles, profileFor } from './profiles.js';

const configOf = (input: WardenConfigInput) => {
  const r = parseConfig(input);
  if (!r.ok) throw r.error;
  return r.value.config;
};

describe('browser profiles', () => {
  it('has the default profile, headless, under <dataDir>/browser/<name>/user-data', () => {
    expect([...browserProfiles(configOf({}), '/srv/data').values()]).toEqual([{ name: 'warden', headless: true, userDataDir: '/srv/data/browser/warden/user-data' }]);
  });

  it('adds configured profiles, each with its own dir; a profile may override headless', () => {
    const config = configOf({ browser: { headless: false, defaultProfile: 'main', profiles: { research: { headless: true }, shop: {} } } });
    const profiles = browserProfiles(config, '/d');
    expect([...profiles.keys()]).toEqual(['main', 'research', 'shop']);
    expect(profiles.get('research')).toEqual({ name: 'research', headless: true, userDataDir: '/d/browser/research/user-data' });
    expect(profiles.get('shop')!.headless).toBe(false);
    expect(new Set([...profiles.values()].map((p) => p.userDataDir)).size).toBe(3);
  });

  it.each([
    [undefined, 'warden'],
    ['', 'warden'],
    ['extra', 'extra'],
  ])('profileFor(%j) → %s', (name, expected) => {
    const result = profileFor(configOf({ browser: { profiles: { extra: {} } } }), '/d', name);
    expect(result.ok && result.spec.name).toBe(expected);
  });

  it('refuses an unknown profile and names the known ones', () => {
    expect(profileFor(configOf({}), '/d', 'other')).toEqual({ ok: false, error: expect.stringContaining('Known profiles: warden') });
  });

  it.each(['../escape', 'a/b', 'UPPER', '', 'x'.repeat(33)])('the config refuses the profile name %j', (name) => {
    const r = parseConfig({ browser: { profiles: { [name]: {} } } });
    expect(r.ok).toBe(false);
  });
});

import path from 'node:path';
import type { WardenConfig } from '../config/index.js';

/** One browser profile: its own Chromium, its own user-data dir. */
export interface BrowserProfileSpec {
  name: string;
  headless: boolean;
  userDataDir: string;
}

/** Where a profile keeps cookies, storage and cache: never shared with another profile. */
export const userDataDirFor = (dataDir: string, profile: string): string => path.join(dataDir, 'browser', profile, 'user-data');

/** The default profile and every configured one, by name. */
export function browserProfiles(config: WardenConfig, dataDir: string): Map<string, BrowserProfileSpec> {
  const { browser } = config;
  const names = new Set([browser.defaultProfile, ...Object.keys(browser.profiles)]);
  return new Map(
    [...names].map((name) => [name, { name, headless: browser.profiles[name]?.headless ?? browser.headless, userDataDir: userDataDirFor(dataDir, name) }]),
  );
}

/** The profile a call names (the default when it names none); an unknown name is an error that lists the known ones. */
export function profileFor(
  config: WardenConfig,
  dataDir: string,
  name: string | undefined,
): { ok: true; spec: BrowserProfileSpec } | { ok: false; error: string } {
  const profiles = browserProfiles(config, dataDir);
  const wanted = name?.trim() || config.browser.defaultProfile;
  const spec = profiles.get(wanted);
  if (spec) return { ok: true, spec };
  return { ok: false, error: `Unknown browser profile "${wanted}". Known profiles: ${[...profiles.keys()].join(', ')} (configure more under browser.profiles).` };
}

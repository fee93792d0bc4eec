// Every config the README offers to copy and paste loads as written: the schema accepts it, its
// model resolves to a provider Warden can call (an OpenAI-compatible server without a key), and a
// platform block starts that platform — as `warden start` would read the file.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { plannedAdapters } from '../../src/config/planned-adapters.js';
import { platformTokenVerdicts } from '../../src/config/platform-tokens.js';
import { apiKeyFor, modelSettings } from '../../src/models/settings.js';

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const blocks = [...README.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

// Shaped like the real thing, made up.
const ENV = {
  DISCORD_TOKEN: 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB',
  SLACK_BOT_TOKEN: 'xoxb-1-2-abc',
  SLACK_APP_TOKEN: 'xapp-1-A1-2-abc',
};

function load(yaml: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-readme-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), yaml);
  const r = loadConfig({ cwd: dir, env: ENV });
  if (!r.ok) throw r.error;
  return r.value.config;
}

describe("the README's copy-paste configs", () => {
  it('offers one per provider and one per platform', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
  });

  it.each(blocks.map((b) => [b.split('\n')[1]?.trim() ?? b, b]))('%s … loads as written', (_first, yaml) => {
    const config = load(yaml);
    if (config.models.default) {
      const settings = modelSettings(config, config.models.default);
      expect(settings.ok, JSON.stringify(settings)).toBe(true);
      if (settings.ok && settings.value.baseUrl) expect(apiKeyFor(settings.value, {}).ok).toBe(true);
    }
    if (config.channels.discord || config.channels.slack) {
      expect(plannedAdapters(config)).not.toContain('web');
      expect(platformTokenVerdicts(config.channels).flatMap((v) => v.findings)).toEqual([]);
    }
  });
});

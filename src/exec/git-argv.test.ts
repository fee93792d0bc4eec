import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { KNOWN_CACHE_MAX, knownCache, knownGitCommands } from './git-argv.js';

describe('the git commands asked of each binary stay bounded over a long-lived process', () => {
  it('many binary paths (a config reloaded again and again) keep at most its bound; an evicted binary is asked again with the same answer', () => {
    const git = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const real = knownGitCommands(git);
    expect(real?.has('status')).toBe(true);
    // Paths that are not a git binary: asked once each, answered null (every subcommand unknown).
    for (let i = 0; i < 40; i++) expect(knownGitCommands(`/nonexistent/git-${i}`)).toBeNull();
    expect(knownCache.size).toBeLessThanOrEqual(KNOWN_CACHE_MAX);
    expect(knownCache.has(git)).toBe(false);
    expect(knownGitCommands(git)).toEqual(real);
  });
});

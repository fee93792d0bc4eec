// Skills: what a discovery scan and the prompt catalog cost per turn at the documented limits,
// against the baseline of rendering the full catalog with no limits applied.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig } from '../src/config/index.js';
import { buildSkillsPrompt, discoverSkills, takeSkillSnapshot } from '../src/skills/index.js';
import { type Bench, fmtMs, measure } from './harness.js';

const bench: Bench = async (report) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-skills-bench-'));
  const root = path.join(dir, 'workspace', 'skills');
  const description = 'Walks through a team workflow step by step; use when someone asks for it. '.repeat(3);
  for (let i = 0; i < 200; i++) {
    mkdirSync(path.join(root, `skill-${i}`), { recursive: true });
    writeFileSync(
      path.join(root, `skill-${i}`, 'SKILL.md'),
      `---\nname: skill-${i}\ndescription: ${description}\nmetadata: {"openclaw":{"requires":{"bins":["git"]}}}\n---\n# Steps\n${'- do it\n'.repeat(40)}`,
    );
  }
  try {
    const scan = await measure(() => discoverSkills([{ source: 'workspace', dir: root }]), { iterations: 30, warmup: 5 });
    report({ name: 'discover 200 skills in one root', value: fmtMs(scan.median), note: `p99 ${fmtMs(scan.p99)}` });

    const parsed = parseConfig({});
    if (!parsed.ok) throw parsed.error;
    const snapshot = takeSkillSnapshot(parsed.value.config, undefined, { baseDir: dir, homeDir: dir, bundledDir: path.join(dir, 'none') });
    if (!snapshot.ok) throw new Error(snapshot.error);
    const snap = await measure(() => takeSkillSnapshot(parsed.value.config, undefined, { baseDir: dir, homeDir: dir, bundledDir: path.join(dir, 'none') }), { iterations: 30, warmup: 5 });
    report({ name: 'snapshot (discover + eligibility + fingerprint), 200 skills', value: fmtMs(snap.median) });

    const eligible = { eligible: discoverSkills([{ source: 'workspace', dir: root }]).skills };
    const unlimited = buildSkillsPrompt(eligible, { maxSkillsInPrompt: 10_000, maxSkillsPromptChars: 10_000_000 });
    const limited = buildSkillsPrompt(eligible);
    const catalog = await measure(() => buildSkillsPrompt(eligible), { iterations: 200, warmup: 20 });
    report({ name: 'catalog at defaults (150 / 18,000), 200 skills', value: fmtMs(catalog.median), note: `p99 ${fmtMs(catalog.p99)}` });
    report({
      name: 'catalog size: unlimited vs defaults (chars)',
      value: `${limited.text.length}`,
      note: `unlimited ${unlimited.text.length}; included ${limited.included.length}/200, ${limited.format}${limited.descriptionMaxChars !== undefined ? ` (descriptions ≤ ${limited.descriptionMaxChars})` : ''}`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;

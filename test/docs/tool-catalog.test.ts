// docs/tool-catalog.md and the README's count of it are read back against Warden's own catalog:
// a tool marked "has" exists under OpenClaw's id, one marked "absent" does not, and the README's
// figures are the table's.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORE_TOOLS } from '../../src/policy/catalog.js';

const root = new URL('../../', import.meta.url);
const page = readFileSync(new URL('docs/tool-catalog.md', root), 'utf8');
const readme = readFileSync(new URL('README.md', root), 'utf8');

interface Row {
  n: number;
  id: string;
  status: string;
}

const rows: Row[] = page
  .split('\n')
  .map((line) => /^\| (\d+) \| `([a-z_]+)` \| [^|]+ \| (has|differs|absent) \|/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ n: Number(m[1]), id: m[2]!, status: m[3]! }));
const warden = new Set(CORE_TOOLS.map((t) => t.id));
const count = (status: string) => rows.filter((r) => r.status === status).length;

describe('the tool catalog page', () => {
  it("lists OpenClaw's 61 core tools once each, numbered in order", () => {
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 61 }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => r.id)).size).toBe(61);
  });

  it('"has" names a tool Warden has under that id; "absent" one it does not', () => {
    expect(rows.filter((r) => r.status === 'has' && !warden.has(r.id)).map((r) => r.id)).toEqual([]);
    expect(rows.filter((r) => r.status === 'absent' && warden.has(r.id)).map((r) => r.id)).toEqual([]);
  });

  it("the README's figures are the table's", () => {
    const has = count('has');
    const differs = count('differs');
    const sentence = readme.replace(/\s+/g, ' ');
    expect(sentence).toContain(`Of OpenClaw's 61 core tools Warden has ${has + differs} (${has} as they are, ${differs} under another id`);
    expect(sentence).toContain(`the other ${count('absent')} are`);
  });
});

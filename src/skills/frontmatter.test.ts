import { describe, expect, it } from 'vitest';
import { parseSkillMarkdown, quoteColonScalars } from './frontmatter.js';

const md = (frontmatter: string, body = '# Body\n') => `---\n${frontmatter}\n---\n${body}`;

function parsed(text: string, folder = 'folder') {
  const result = parseSkillMarkdown(text, folder);
  if (!result.ok) throw new Error(`expected a skill, got: ${result.error}`);
  return result.value;
}

function failure(text: string, folder = 'folder'): string {
  const result = parseSkillMarkdown(text, folder);
  if (result.ok) throw new Error('expected the SKILL.md to be rejected');
  return result.error;
}

describe('SKILL.md frontmatter', () => {
  it.each([
    ['name and description', 'name: review\ndescription: Review a diff', { name: 'review', description: 'Review a diff' }],
    ['name defaults to the folder', 'description: Triage an incident', { name: 'folder', description: 'Triage an incident' }],
    ['defaults for invocation', 'description: d', { userInvocable: true, disableModelInvocation: false }],
    ['user-invocable false', 'description: d\nuser-invocable: false', { userInvocable: false }],
    ['disable-model-invocation true', 'description: d\ndisable-model-invocation: true', { disableModelInvocation: true }],
    ['booleans written as strings', 'description: d\nuser-invocable: "no"\ndisable-model-invocation: "yes"', { userInvocable: false, disableModelInvocation: true }],
    ['snake_case spellings', 'description: d\ncommand_dispatch: tool\ncommand_tool: exec', { commandDispatch: { kind: 'tool', tool: 'exec', argMode: 'raw' } }],
    [
      'command dispatch with an unknown arg mode is raw',
      'description: d\ncommand-dispatch: tool\ncommand-tool: web_search\ncommand-arg-mode: parsed',
      { commandDispatch: { kind: 'tool', tool: 'web_search', argMode: 'raw' } },
    ],
    ['unquoted description containing ": "', 'name: deploy\ndescription: Use when: shipping a release', { description: 'Use when: shipping a release' }],
    ['multi-line folded description', 'description: >\n  First line\n  second line', { description: 'First line second line' }],
    ['unknown keys from other tools are ignored', 'description: d\nlicense: MIT\nallowed-tools: Bash', { name: 'folder' }],
  ])('%s', (_label, frontmatter, expected) => {
    expect(parsed(md(frontmatter))).toMatchObject(expected);
  });

  it.each([
    [
      'OpenClaw one-line JSON metadata',
      'name: github\ndescription: GitHub CLI\nmetadata: {"openclaw":{"emoji":"🐙","requires":{"bins":["gh"]},"primaryEnv":"GH_TOKEN"}}',
      { emoji: '🐙', primaryEnv: 'GH_TOKEN', requires: { bins: ['gh'], anyBins: [], env: [], config: [] } },
    ],
    [
      'OpenClaw multi-line JSON metadata with trailing commas',
      'name: x\ndescription: d\nmetadata:\n  {\n    "openclaw": { "os": ["darwin", "linux"], "requires": { "anyBins": ["rg", "grep"], }, },\n  }',
      { os: ['darwin', 'linux'], requires: { bins: [], anyBins: ['rg', 'grep'], env: [], config: [] } },
    ],
    [
      'metadata as a JSON5 string with comments and unquoted keys',
      "description: d\nmetadata: '{openclaw: {always: true, /* c */ requires: {env: [\"API_KEY\"]}}}'",
      { always: true, requires: { bins: [], anyBins: [], env: ['API_KEY'], config: [] } },
    ],
    [
      'a warden block as a YAML mapping',
      'description: d\nmetadata:\n  warden:\n    skillKey: notes\n    requires:\n      config: [tools.exec.security]\n      bins: "git, jq"',
      { skillKey: 'notes', requires: { bins: ['git', 'jq'], anyBins: [], env: [], config: ['tools.exec.security'] } },
    ],
    ['the legacy clawdbot key', 'description: d\nmetadata: {"clawdbot":{"always":true}}', { always: true }],
    ['warden wins over openclaw', 'description: d\nmetadata: {"openclaw":{"os":["darwin"]},"warden":{"os":["linux"]}}', { os: ['linux'] }],
    ['metadata for some other tool only', 'description: d\nmetadata: {"other":{"x":1}}', { always: false, os: [] }],
  ])('metadata: %s', (_label, frontmatter, expected) => {
    expect(parsed(md(frontmatter)).metadata).toMatchObject(expected);
  });

  it.each([
    ['no frontmatter at all', '# Just markdown\n', /missing YAML frontmatter/],
    ['unterminated frontmatter', '---\nname: x\ndescription: d\n', /not closed/],
    ['missing description', md('name: x'), /description is required/],
    ['empty description', md('name: x\ndescription: "  "'), /description is required/],
    ['empty name', md('name: ""\ndescription: d'), /name: must be a non-empty string/],
    ['a list instead of a mapping', md('- a\n- b'), /expected a YAML mapping/],
    ['broken YAML', md('name: [x\ndescription: d'), /invalid frontmatter/],
    ['duplicate keys', md('name: a\nname: b\ndescription: d'), /invalid frontmatter/],
    ['non-boolean flag', md('description: d\ndisable-model-invocation: maybe'), /disable-model-invocation: expected true or false/],
    ['dispatch without a tool', md('description: d\ncommand-dispatch: tool'), /command-tool: required/],
    ['unknown dispatch kind', md('description: d\ncommand-dispatch: agent\ncommand-tool: x'), /command-dispatch: expected "tool"/],
    ['metadata that is not JSON5', md("description: d\nmetadata: '{openclaw: '"), /metadata: not valid JSON5/],
    ['requires.config with an object entry', md('description: d\nmetadata: {"openclaw":{"requires":{"config":[{"path":"a"}]}}}'), /metadata\.openclaw\.requires\.config\[0\]: expected a string/],
    ['os that is not a list', md('description: d\nmetadata: {"openclaw":{"os":{"a":1}}}'), /metadata\.openclaw\.os: expected a list/],
  ])('rejects %s', (_label, text, pattern) => {
    expect(failure(text)).toMatch(pattern);
  });

  it('reports every problem of one file, not only the first', () => {
    const error = failure(md('name: ""\nuser-invocable: perhaps'));
    expect(error).toMatch(/name: must be a non-empty string/);
    expect(error).toMatch(/description is required/);
    expect(error).toMatch(/user-invocable: expected true or false/);
  });

  it('accepts CRLF line endings and a byte-order mark', () => {
    expect(parsed('\uFEFF---\r\nname: win\r\ndescription: d\r\n---\r\nbody').name).toBe('win');
  });
});

describe('quoteColonScalars', () => {
  /** The former line pattern, to hold the linear one to the same output. */
  const former = (block: string) =>
    block
      .split('\n')
      .map((line) => {
        const m = /^([A-Za-z][\w-]*):[ \t]+(.+)$/.exec(line);
        if (!m) return line;
        const value = m[2]!.trim();
        if (/^["'[{|>&*!#]/.test(value) || !/:\s/.test(value)) return line;
        return `${m[1]}: ${JSON.stringify(value)}`;
      })
      .join('\n');

  it.each([
    'description: Use when: reviewing',
    'description:\tUse when: x  ',
    'description:   ',
    'description: ',
    'description:',
    'name: plain',
    'description: "quoted: already"',
    'description: a: b\u2028c: d',
    'description:  \u2028',
    'x-y_z: a: b',
    '  nested: a: b',
  ])('%j as the former pattern quotes it', (block) => {
    expect(quoteColonScalars(block)).toBe(former(block));
  });

  it('returns at once on a value of 100,000 blanks before a line separator', () => {
    const block = `description:${' '.repeat(100_000)}\u2028`;
    expect(quoteColonScalars(block)).toBe(block);
    expect(typeof parseSkillMarkdown(md(`name: x\n${block}`), 'x').ok).toBe('boolean');
  });
});

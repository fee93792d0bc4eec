// The build users run: bin/warden.js runs the JavaScript in dist/ and behaves as the sources do.
// (The global setup has just brought dist/ up to date.)
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli.js';
import { BUNDLED_SKILLS_DIR } from '../../src/skills/roots.js';
import { PACKAGE_ROOT } from '../../src/util/package-root.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(root, 'bin/warden.js');
const DIST = path.join(root, 'dist');
const run = (args: string[], env: Record<string, string> = {}) => execa('node', [BIN, ...args], { cwd: root, env: { WARDEN_LOG_LEVEL: 'silent', ...env }, reject: false });

/** The build's module map: each output file (relative to dist/), its imports and its source modules. */
interface Output {
  imports: { path?: string; external?: string; kind: string }[];
  inputs: string[];
}
const MODULES = JSON.parse(readFileSync(path.join(DIST, 'modules.json'), 'utf8')) as Record<string, Output>;

/** An output file and every file it imports statically, followed through: what loading it loads. */
function staticClosure(file: string): string[] {
  const seen: string[] = [];
  const walk = (f: string): void => {
    if (seen.includes(f)) return;
    seen.push(f);
    for (const i of MODULES[f]!.imports) if (i.kind === 'import-statement' && i.path) walk(i.path);
  };
  walk(file);
  return seen;
}

/** The files under dist/ that `warden ARGS` loads as ES modules, as Node's loader reports them. */
async function filesLoaded(args: string[]): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-build-loads-'));
  try {
    const log = path.join(dir, 'loaded');
    const hooks = path.join(dir, 'hooks.mjs');
    writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(${JSON.stringify(log)}, url + '\\n');\n  return next(url, context);\n}\n`);
    const register = path.join(dir, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    writeFileSync(log, '');
    const r = await execa('node', ['--import', pathToFileURL(register).href, BIN, ...args], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'silent' }, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const prefix = pathToFileURL(DIST).href + '/';
    return [...new Set(readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith(prefix)).map((u) => u.slice(prefix.length)))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the build in dist/', () => {
  it('lists every source module it compiled, tests left out', () => {
    const listed = readFileSync(path.join(root, 'dist/BUILD'), 'utf8').trim().split('\n');
    expect(listed).toContain('src/cli.ts');
    expect(listed).toContain('adapters/discord/index.ts');
    expect(listed.some((f) => f.endsWith('.test.ts'))).toBe(false);
  });

  it('splits at the lazy imports: a command loads its own chunks, not the adapters or the model SDKs', () => {
    // What `warden tools` loads at start: its own build's file and what that imports statically.
    const loaded = staticClosure('commands/tools.js');
    expect(loaded.length).toBeGreaterThan(1);
    // Bounded by bytes, not by chunk count alone: what a command parses at start is what the bound
    // is for (issue 32's start-up figures live in the benchmarks).
    const bytes = loaded.reduce((n, f) => n + statSync(path.join(DIST, f)).size, 0);
    expect(bytes).toBeLessThan(800_000);
    const packages = new Set(loaded.flatMap((f) => MODULES[f]!.imports.flatMap((i) => (i.external ? [i.external] : []))));
    for (const heavy of ['discord.js', '@slack/bolt', '@anthropic-ai/sdk', 'openai', 'playwright-core', 'better-sqlite3', '@modelcontextprotocol/sdk']) {
      expect([...packages].filter((p) => p === heavy || p.startsWith(`${heavy}/`)), heavy).toEqual([]);
    }
    // The lazy imports are still split points: the model SDKs and the adapters are in the build,
    // reached by import() only.
    const lazy = Object.keys(MODULES).filter((f) => f.startsWith('commands/tools')).filter((f) => !loaded.includes(f));
    expect(lazy.length).toBeGreaterThan(0);
  });

  it('`warden tools` loads its own build: fewer files than the whole command table split would make it load, the same modules', async () => {
    const ownFiles = await filesLoaded(['tools', '--json']);
    expect(ownFiles.every((f) => f.startsWith('commands/tools')), ownFiles.join(' ')).toBe(true);
    // The split build's path to the same command, for comparison: cli.js, then the command's chunk.
    const cliTools = MODULES['cli.js']!.imports.filter((i) => i.kind === 'dynamic-import').map((i) => i.path!);
    const viaCli = staticClosure('cli.js');
    const toolsChunk = cliTools.find((f) => MODULES[f]!.inputs.includes('src/cli/tools.ts'))!;
    for (const f of staticClosure(toolsChunk)) if (!viaCli.includes(f)) viaCli.push(f);
    // Was 57 files (most of them shared chunks) through the split build; the exact count moves
    // with the sources, the difference is what the command's own build is for.
    expect(ownFiles.length).toBeLessThan(viaCli.length - 10);
    // Every source module the split build's path runs at start is in the command's own files.
    const inputs = (files: string[]) => new Set(files.flatMap((f) => MODULES[f]!.inputs));
    const own = inputs(ownFiles);
    for (const m of inputs(viaCli)) expect(own.has(m), m).toBe(true);
  });

  it('every command that answers and exits has a build of its own; `start` and `node` run the split build', () => {
    for (const name of Object.keys(COMMANDS)) {
      const own = MODULES[`commands/${name}.js`];
      if (name === 'start' || name === 'node') expect(own, name).toBeUndefined();
      else expect(own?.inputs, name).toContain(`src/cli.ts`);
    }
    // `start`'s listener comes first from the split build (src/app/start-first.ts).
    expect(Object.values(MODULES).some((m) => m.inputs.includes('src/app/start-first.ts'))).toBe(true);
    expect(Object.keys(MODULES).filter((f) => f.startsWith('commands/') && MODULES[f]!.inputs.includes('src/app/start-first.ts'))).toEqual([]);
  });

  it('a command\'s build handed a command line for another command passes it to the whole build', async () => {
    const script = `const { main } = await import(${JSON.stringify(path.join(DIST, 'commands/tools.js'))}); process.exitCode = await main(['exec-check', '--json', '--', 'echo hi']);`;
    const [handed, direct] = await Promise.all([
      execa('node', ['--input-type=module', '-e', script], { cwd: root, env: { WARDEN_LOG_LEVEL: 'silent' }, reject: false }),
      run(['exec-check', '--json', '--', 'echo hi']),
    ]);
    expect(handed.exitCode).toBe(direct.exitCode);
    expect(handed.stdout).toBe(direct.stdout);
    expect(JSON.parse(handed.stdout)).toBeTypeOf('object');
  });

  it('`warden --help` loads the command table and its usage only: no config schema, no logger', async () => {
    const seen = staticClosure('cli.js');
    const bytes = seen.reduce((n, f) => n + statSync(path.join(DIST, f)).size, 0);
    // Was 520 KB (zod and the policy code came in through the usage text and the logger).
    expect(bytes).toBeLessThan(40_000);
    const inputs = seen.flatMap((f) => MODULES[f]!.inputs);
    expect(inputs).toContain('src/cli/usage.ts');
    expect(inputs.filter((m) => m.includes('node_modules/zod/'))).toEqual([]);
    expect(inputs.filter((m) => /^src\/(?:log|redact|config\/schema)\//.test(m))).toEqual([]);
    // And at run time: what it loads is that closure, nothing else.
    expect((await filesLoaded(['--help'])).sort()).toEqual([...seen].sort());
  });

  it('bundles zod (never imported from the package at run time)', () => {
    for (const [f, m] of Object.entries(MODULES)) expect(m.imports.filter((i) => i.external === 'zod' || i.external?.startsWith('zod/')), f).toEqual([]);
    expect(Object.values(MODULES).some((m) => m.inputs.some((i) => i.includes('node_modules/zod/')))).toBe(true);
  });

  it('bundles the packages a start-up loads as dozens of files (never imported from node_modules at run time)', () => {
    for (const [f, m] of Object.entries(MODULES)) {
      for (const pkg of ['execa', 'yaml', 'prom-client', '@opentelemetry/api', 'ws', 'picomatch', 'json5', 'ipaddr.js', 'dotenv', 'croner', 'chokidar']) {
        expect(m.imports.filter((i) => i.external === pkg || i.external?.startsWith(`${pkg}/`)), `${f} imports ${pkg}`).toEqual([]);
      }
    }
    // The YAML parser, loaded synchronously by the config loader: one CommonJS file beside the chunks.
    expect(statSync(path.join(root, 'dist/chunks/yaml.cjs')).size).toBeGreaterThan(100_000);
  });

  it('is written without comments (V8 keeps the source text of each file: what a start-up parses and an idle bot holds)', () => {
    for (const f of ['cli.js', ...staticClosure('commands/tools.js')]) {
      // esbuild's `// path/to/module.ts` markers and the sources' comments are gone.
      expect(readFileSync(path.join(DIST, f), 'utf8'), f).not.toMatch(/^\s*\/[/*] /m);
    }
  });

  it('reads a YAML config from the bundled parser as the sources read it from the package', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-build-yaml-'));
    try {
      const file = path.join(dir, 'warden.config.yaml');
      writeFileSync(file, 'tools:\n  profile: minimal\n  # a comment\n  alsoAllow: [web_fetch]\n');
      const [built, source] = await Promise.all([run(['tools', '--json', '--config', file]), run(['tools', '--json', '--config', file], { WARDEN_FROM_SOURCE: '1' })]);
      expect(built.exitCode).toBe(0);
      expect(built.stdout).toBe(source.stdout);
      expect(JSON.parse(built.stdout).tools).toContain('web_fetch');
      // A YAML mistake reads the same: the bundled parser is the package.
      writeFileSync(file, 'tools:\n  profile: minimal\n    alsoAllow: [web_fetch]\n');
      const [badBuilt, badSource] = await Promise.all([run(['tools', '--config', file]), run(['tools', '--config', file], { WARDEN_FROM_SOURCE: '1' })]);
      expect(badBuilt.exitCode).toBe(2);
      expect(badBuilt.stderr).toBe(badSource.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the package folder (skills/, config/) from dist/ as from src/', async () => {
    expect(PACKAGE_ROOT).toBe(root);
    expect(BUNDLED_SKILLS_DIR).toBe(path.join(root, 'skills'));
    // `warden skills` prints the bundled skills folder it found from dist/.
    const built = await run(['skills', '--json']);
    expect(built.stdout).toContain(BUNDLED_SKILLS_DIR);
  });

  it.each([
    ['--help'],
    ['tools', '--json'],
    ['tools', '--explain', 'exec'],
    ['skills', '--json'],
    ['exec-check', '--json', '--', 'echo hi; rm -rf /'],
    ['url-check', 'http://169.254.169.254/latest'],
    ['access', 'check', '--provider', 'discord', '--chat', 'dm', '--sender', '123'],
    ['audit', '--json'],
    ['--config', 'config/local.example.yaml', 'tools', '--json'],
    ['tools', '--json', '--config', 'config/team.example.yaml', '--provider', 'slack', '--chat', 'channel'],
  ].map((args) => [args.join(' '), args] as const))('`warden %s` prints the same from the build and from the sources', async (_, args) => {
    const [built, source] = await Promise.all([run(args), run(args, { WARDEN_FROM_SOURCE: '1' })]);
    expect(built.exitCode).toBe(source.exitCode);
    expect(built.stdout).toBe(source.stdout);
    expect(built.stdout.length).toBeGreaterThan(0);
  });
});

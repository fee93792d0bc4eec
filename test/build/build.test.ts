// The build users run: bin/warden.js runs the JavaScript in dist/ and behaves as the sources do.
// (The global setup has just brought dist/ up to date.)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { freePort } from '../free-port.js';
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
/** `warden tools` as one script (scripts/build.mjs). */
const TOOLS_SCRIPT = 'chunks/tools.script.cjs';
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

/** What `warden NAME` loads before it runs: dist/cli.js, the chunk cli.js imports for src/cli/NAME.ts, and their static imports. */
function commandClosure(name: string): string[] {
  const chunk = MODULES['cli.js']!.imports.filter((i) => i.kind === 'dynamic-import' && i.path).map((i) => i.path!).find((f) => MODULES[f]!.inputs.includes(`src/cli/${name}.ts`));
  expect(chunk, `no chunk of dist/cli.js holds src/cli/${name}.ts`).toBeDefined();
  const seen = staticClosure('cli.js');
  for (const f of staticClosure(chunk!)) if (!seen.includes(f)) seen.push(f);
  return seen;
}

/**
 * The comments of a JavaScript file, as TypeScript's parser finds them: the trivia before and
 * after each token. A `//` inside a string or a template (the sandbox's forwarder script, the
 * web page's script) is not one.
 */
function commentsOf(text: string): string[] {
  const file = ts.createSourceFile('chunk.js', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    for (const r of [...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []), ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? [])]) found.add(text.slice(r.pos, r.end));
    for (const child of node.getChildren(file)) visit(child);
  };
  visit(file);
  return [...found];
}

/** A loader hook in `dir` that appends each URL Node loads to `dir/loaded`: what `--import` takes. */
function loadLog(dir: string): { register: string; read: () => string[] } {
  const log = path.join(dir, 'loaded');
  const hooks = path.join(dir, 'hooks.mjs');
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(${JSON.stringify(log)}, url + '\\n');\n  return next(url, context);\n}\n`);
  const register = path.join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  writeFileSync(log, '');
  const prefix = pathToFileURL(DIST).href + '/';
  return { register: pathToFileURL(register).href, read: () => [...new Set(readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith(prefix)).map((u) => u.slice(prefix.length)))] };
}

/** The files under dist/ that `warden ARGS` loads as ES modules, as Node's loader reports them. */
async function filesLoaded(args: string[]): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-build-loads-'));
  try {
    const log = loadLog(dir);
    const r = await execa('node', ['--import', log.register, BIN, ...args], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'silent' }, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    return log.read();
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
    // What `warden url-check` loads at start: dist/cli.js, its chunk and what they import statically.
    const loaded = commandClosure('url-check');
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
    const lazy = Object.keys(MODULES).filter((f) => !loaded.includes(f));
    expect(lazy.some((f) => MODULES[f]!.inputs.some((m) => m.startsWith('adapters/discord/')))).toBe(true);
  });

  it('one build for every command: bin/warden.js runs dist/cli.js, and `warden access check` loads what the module map says', async () => {
    expect(Object.keys(MODULES).filter((f) => f.endsWith('.js') && !f.startsWith('chunks/'))).toEqual(['cli.js']);
    const files = await filesLoaded(['access', 'check', '--provider', 'discord', '--chat', 'dm', '--sender', '123']);
    expect(files[0]).toBe('cli.js');
    // Everything the map puts on the command's path is loaded, and what is loaded besides is
    // reached by import() from it: no file outside the map, none of the adapters or SDKs.
    for (const f of commandClosure('access')) expect(files, f).toContain(f);
    for (const f of files) {
      expect(MODULES[f], f).toBeDefined();
      expect(MODULES[f]!.inputs.filter((m) => /^adapters\/|node_modules\/(?:discord\.js|@slack|@anthropic-ai|openai)\//.test(m)), f).toEqual([]);
    }
    // `start`'s listener comes first from a chunk of its own (src/app/start-first.ts), not from cli.js's closure.
    expect(Object.keys(MODULES).some((f) => MODULES[f]!.inputs.includes('src/app/start-first.ts'))).toBe(true);
    expect(staticClosure('cli.js').flatMap((f) => MODULES[f]!.inputs)).not.toContain('src/app/start-first.ts');
  });

  it('`warden tools` runs as one script from V8\'s code cache: the ES modules it loads are the command table and the script\'s loader', async () => {
    const script = MODULES[TOOLS_SCRIPT]!;
    expect(script.inputs).toContain('src/cli/tools.ts');
    expect(script.inputs.filter((m) => /^adapters\/|node_modules\/(?:discord\.js|@slack|@anthropic-ai|openai)\//.test(m))).toEqual([]);
    // The packages it imports are Node's, the SDKs' and the ones left in node_modules (never zod or the other bundled ones).
    const external = new Set(script.imports.map((i) => i.external!));
    for (const pkg of ['zod', 'execa', 'prom-client', 'picomatch']) expect(external.has(pkg), pkg).toBe(false);
    // Read and hashed whole at every run, compiled whole when there is no cache.
    expect(statSync(path.join(DIST, TOOLS_SCRIPT)).size).toBeLessThan(1_600_000);
    const text = readFileSync(path.join(DIST, TOOLS_SCRIPT), 'latin1');
    // Its import() calls are the loader's (an import() of the script's own is Node 20's experimental vm callback).
    expect(text).not.toMatch(/(?<![\w$.])import\(/);
    expect(text).toMatch(/__wardenImport\("undici"\)/);
    const files = await filesLoaded(['tools', '--json']);
    expect(files[0]).toBe('cli.js');
    // dist/cli.js's closure, and the closures of what it imports for the script: its loader and the young generation's growth.
    // (A chunk of esbuild's with no module of its own re-exports a module held in a chunk it imports.)
    const holds = (f: string): boolean => MODULES[f]!.inputs.some((m) => m === 'src/util/cached-script.ts' || m === 'src/ops/young-generation.ts');
    const targets = MODULES['cli.js']!.imports.flatMap((i) => (i.kind === 'dynamic-import' && i.path ? [i.path] : []));
    const loader = [...new Set(targets)].filter((f) => holds(f) || (MODULES[f]!.inputs.length === 0 && MODULES[f]!.imports.some((i) => i.path && holds(i.path)))).map(staticClosure);
    expect(loader.length).toBeGreaterThanOrEqual(2);
    const expected = new Set([...staticClosure('cli.js'), ...loader.flat()]);
    expect([...files].sort()).toEqual([...expected].sort());
    // After a run, its code cache is there, named after the hash of the script's bytes.
    const hash = createHash('sha256').update(readFileSync(path.join(DIST, TOOLS_SCRIPT))).digest('hex').slice(0, 32);
    expect(readdirSync(path.join(DIST, 'cache')).filter((f) => f.startsWith(`tools.script.cjs.${hash}.${process.version}-`))).toHaveLength(1);
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
    for (const f of [...commandClosure('url-check'), TOOLS_SCRIPT]) {
      // esbuild's `// path/to/module.ts` markers and the sources' comments are gone; a chunk may
      // end with the licence notices of the packages bundled in it (`/*! ... */`).
      expect(commentsOf(readFileSync(path.join(DIST, f), 'utf8')).filter((c) => !c.startsWith('/*!')), f).toEqual([]);
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

/** A source module of a tool's implementation (not its `*-schema.ts`), under the folders that hold them. */
const isToolImplementation = (m: string): boolean => /^src\/(?:tools\/core|agent\/tools|control\/tools)\//.test(m) && !/(?:-schema|schemas)\.ts$/.test(m);

describe('an idle bot from the build (web chat, no model)', () => {
  it('loads no tool implementation for an owner’s first /exec but exec’s own: the surface and the card read the descriptors', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-build-exec-'));
    const port = await freePort();
    const token = 'build-exec-token-0123456789abcdef0123456789';
    writeFileSync(path.join(dir, 'warden.config.yaml'), `channels:\n  web: { port: ${port}, token: ${token} }\nops: { enabled: false }\n`);
    const log = loadLog(dir);
    const child = spawn(process.execPath, ['--import', log.register, BIN, 'start'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WARDEN_LOG_LEVEL: 'info', WARDEN_DATA_DIR: '' } });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = once(child, 'exit');
    try {
      // The page answers before the rest of the start has loaded (src/app/start-first.ts): idle is
      // after the start's own "warden started", once the loaded-file list has stopped growing.
      for (let i = 0; !out.includes('warden started'); i++) {
        expect(child.exitCode, `warden start exited: ${out}`).toBeNull();
        expect(i, `warden start did not start: ${out}`).toBeLessThan(1500);
        await new Promise((r) => setTimeout(r, 20));
      }
      let idle = log.read();
      for (let still = 0; still < 6; ) {
        await new Promise((r) => setTimeout(r, 250));
        const now = log.read();
        still = now.length === idle.length ? still + 1 : 0;
        idle = now;
      }
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${token}`, origin: `http://127.0.0.1:${port}` } });
      const card = new Promise<void>((resolve) => ws.on('message', (raw) => (JSON.parse(raw.toString()) as { type: string }).type === 'card' && resolve()));
      await once(ws, 'open');
      ws.send(JSON.stringify({ type: 'message', id: 'm1', text: '/exec echo from-the-build' }));
      await card;
      ws.close();
      const added = log.read().filter((f) => !idle.includes(f));
      const inputs = (files: string[]) => files.flatMap((f) => MODULES[f]!.inputs);
      // The command ran through the descriptors and loaded exec (so the list can show a load) ...
      expect(inputs(added)).toContain('src/app/core-descriptors.ts');
      expect(inputs(added)).toContain('src/tools/core/exec/exec.ts');
      // ... and no other tool's implementation, neither then nor before.
      expect(inputs(added).filter(isToolImplementation).filter((m) => !m.startsWith('src/tools/core/exec/'))).toEqual([]);
      expect(inputs(idle)).not.toContain('src/app/core-descriptors.ts');
      // Idle, a start checks cron targets and renders no card: the message and progress-card
      // tools (their actions, their argument schemas) load at their first call, not before.
      for (const tool of ['src/tools/core/message/message.ts', 'src/tools/core/message/run-action.ts', 'src/tools/core/message/actions.ts', 'src/tools/core/message/message-schema.ts', 'src/tools/core/progress-card/progress-card.ts', 'src/tools/core/progress-card/progress-card-schema.ts']) {
        expect(inputs(idle), tool).not.toContain(tool);
      }
      // Nobody opened the chat: the page's text is not loaded (it is, at the first request for it).
      expect(inputs(idle)).not.toContain('adapters/web/page.ts');
      for (const heavy of ['src/tools/core/web/web-fetch.ts', 'src/tools/core/browser/browser.ts', 'src/tools/core/media/pdf.ts', 'src/agent/tools/index.ts']) expect(inputs([...idle, ...added])).not.toContain(heavy);
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

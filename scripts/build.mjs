#!/usr/bin/env node
// Compiles what `warden` runs (src/ and adapters/, tests left out) to JavaScript under dist/:
// dist/cli.js and the chunks it imports, split at every dynamic import, so a command loads
// only the code on its own path (`warden tools` a few hundred kilobytes, never the chat adapters
// or the model SDKs) instead of one file per module. A single unsplit bundle would load every
// adapter and SDK at once. (A build of its own for each command, in fewer files, was measured:
// 5 to 12% less CPU for a command at five times the output and the build time, so every command
// runs dist/cli.js; see docs/development.md.) Dependencies stay in node_modules, except zod
// (the config schema, loaded by every command), whose ESM build is a hundred small files: it is
// bundled into a chunk, without its translated error messages (Warden uses the English ones),
// and the other packages listed in BUNDLED below. dist/modules.json maps each output file to its imports and
// source modules.
// Runs at `npm ci` (the `prepare` script), before `npm start` and before the tests; offline,
// and skipped when dist/ is newer than every source. The TypeScript sources stay the truth for
// development and tests; `import.meta.url` resolves from dist/ as from src/ (the package folder
// is found by walking up, see src/util/package-root.ts).
//   node scripts/build.mjs [--force] [--quiet]
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist');
const stamp = path.join(outdir, 'BUILD');
const ROOTS = ['src', 'adapters'];
const quiet = process.argv.includes('--quiet');

/** Every module under `dir`, tests excluded. */
function modules(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...modules(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) found.push(full);
  }
  return found;
}

const started = Date.now();
const entryPoints = ROOTS.flatMap((r) => modules(path.join(root, r))).sort();
const listing = entryPoints.map((f) => path.relative(root, f)).join('\n');

/** Up to date: the same modules as the last build, none changed since, nor this script. */
function upToDate() {
  if (!existsSync(stamp)) return false;
  if (readFileSync(stamp, 'utf8') !== `${listing}\n`) return false;
  const built = statSync(stamp).mtimeMs;
  return [fileURLToPath(import.meta.url), ...entryPoints].every((f) => statSync(f).mtimeMs <= built);
}

if (!process.argv.includes('--force') && upToDate()) process.exit(0);

/**
 * Dependencies bundled into the chunks instead of loaded from node_modules: pure JavaScript,
 * no native addon, no file read beside their own code, and each loaded by a command's start-up
 * path as dozens of files (execa 108, yaml 74, prom-client 35, ws 24). Node's ESM loader resolves, reads, compiles and links each file on its
 * own; one chunk is a fraction of that, and esbuild drops what Warden does not import.
 * The others stay in node_modules: native addons (better-sqlite3), packages that start workers
 * from files beside them (pino, thread-stream) or read their own files (pdfjs-dist,
 * playwright-core), and the SDKs and chat libraries loaded only when configured.
 */
const BUNDLED = new Set(['zod', 'execa', 'prom-client', 'ws', 'picomatch', 'json5', 'ipaddr.js', 'dotenv', 'croner', 'chokidar']);
/** The YAML parser's bundle, in dist/chunks/ (see src/util/yaml.ts). */
const YAML_BUNDLE = 'yaml.cjs';
/** `warden tools` as one script, in dist/chunks/ (see src/cli/tools-entry.ts and src/util/cached-script.ts). */
const TOOLS_SCRIPT = 'tools.script.cjs';
/** The parameters of the function a script's code is wrapped in: CommonJS's, and `import.meta.url`'s stand-in. */
const SCRIPT_PARAMETERS = 'exports, require, module, __filename, __dirname, __wardenImportMetaUrl, __wardenImport';
const packageName = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** Bare imports stay imports of node_modules, except the BUNDLED packages and what they import. */
const dependencies = {
  name: 'dependencies',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point' || args.path.startsWith('node:')) return undefined;
      // A bundled package's own imports of other packages are bundled with it (execa's cross-spawn, get-stream, ...).
      if (BUNDLED.has(packageName(args.path)) || args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** zod's `z.locales` (every translation of its messages, half of its size): never used here. */
const noZodLocales = {
  name: 'no-zod-locales',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: 'zod-locales', namespace: 'stub' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/**
 * prom-client requires the OpenTelemetry API (52 files, 66 KB bundled) for one thing: the trace
 * and span ids of CPU-time exemplars, read only when a registry enables exemplars, which
 * Warden's (src/ops/metrics.ts) does not. In its place: the API's answer when no tracer is
 * registered, no span.
 */
const noOpenTelemetry = {
  name: 'no-opentelemetry',
  setup(b) {
    b.onResolve({ filter: /^@opentelemetry\/api$/ }, (args) => (args.importer.includes(`${path.sep}prom-client${path.sep}`) ? { path: 'opentelemetry-api', namespace: 'stub-otel' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'stub-otel' }, () => ({ contents: 'module.exports = { trace: { getSpan: () => undefined }, context: { active: () => undefined } };', loader: 'js' }));
  },
};

/**
 * In the script of `warden tools` (below), each import() of a package or of a computed URL (a
 * plugin's file) calls the loader's `__wardenImport` instead: a script's own import() goes
 * through a vm callback that Node 20 marks experimental and warns about on stderr. The loader's
 * is an ES module's import() from the same folder, dist/chunks/, so a specifier resolves as it
 * did from the chunks. Relative imports stay import(): esbuild inlines those modules.
 */
const DYNAMIC_IMPORT = /(?<!typeof\s+)\bimport\((?!\s*['"`]\.)/g;
const scriptImports = {
  name: 'script-imports',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      const contents = text.replace(DYNAMIC_IMPORT, '__wardenImport(');
      return contents === text ? undefined : { contents, loader: 'ts' };
    });
  },
};

/** What gives a chunk a `require` (see the build's `banner`). */
const REQUIRE_BANNER = "import { createRequire as __wardenCreateRequire } from 'node:module';\nconst require = __wardenCreateRequire(import.meta.url);";

  /** One CommonJS file for Node 20, ASCII only, without blank space (the tools script, the YAML parser). */
  const ONE_SCRIPT = { bundle: true, format: 'cjs', platform: 'node', target: 'node20', logLevel: 'warning', charset: 'ascii', minifyWhitespace: true, minifySyntax: true };

// Built beside dist/ and swapped in whole, so a process running from dist/ (another test run,
// a running bot) never reads a half-written file.
const staging = mkdtempSync(path.join(root, '.dist-'));
try {
  const { metafile } = await build({
    entryPoints: [path.join(root, 'src/cli.ts')],
    outdir: staging,
    entryNames: '[name]',
    chunkNames: 'chunks/[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    charset: 'ascii',
    // Without comments and blank space: V8 reads and keeps each chunk's whole source text (the
    // start-up parses it, an idle bot holds it). Names are kept as written, so a stack trace names
    // the functions of the sources; its positions are in the chunk, as they always were.
    minifyWhitespace: true,
    minifySyntax: true,
    // The module map (dist/modules.json, below).
    metafile: true,
    absWorkingDir: root,
    plugins: [noOpenTelemetry, dependencies, noZodLocales],
    // The module semantics tsc checks: type-only imports are marked `import type`.
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, target: 'ES2022', useDefineForClassFields: true } },
    // The CommonJS packages bundled (picomatch, json5, prom-client, ...) call require() for Node's
    // built-in modules; an ES module has no require of its own, so each chunk makes one.
    // Taken out again below from the chunks that never name `require`.
    banner: { js: REQUIRE_BANNER },
    // src/util/yaml.ts loads the YAML parser synchronously, at its first use: from this bundle.
    define: { WARDEN_YAML_BUNDLE: JSON.stringify(`./${YAML_BUNDLE}`), WARDEN_TOOLS_SCRIPT: JSON.stringify(`./chunks/${TOOLS_SCRIPT}`) },
  });
  // What each output file holds and imports (paths relative to dist/), read by the build's tests:
  // with the comments gone, the files no longer name their source modules.
  const map = {};
  const rel = (output) => path.relative(staging, path.join(root, output));
  for (const [output, { imports, inputs }] of Object.entries(metafile.outputs)) {
    map[rel(output)] = {
      imports: imports.map((imp) => (imp.external ? { external: imp.path, kind: imp.kind } : { path: rel(imp.path), kind: imp.kind })),
      inputs: Object.keys(inputs).sort(),
    };
  }
  // `warden tools` (a command run by hand and by scripts, whose start-up is most of its time) as
  // one script instead of some sixty modules: Node's ESM loader resolves, reads and links each
  // module on its own and compiles each from its text at every run (Node 20 has no compile
  // cache for ES modules), where a script compiles from V8's code cache of the previous run
  // (src/util/cached-script.ts). CommonJS for its imports of packages and built-ins; the lazy
  // imports of its modules are inlined, each module still initialised at its first import, so
  // the script has one copy of every module it uses (the logger's level, zod's settings). It is
  // wrapped in a function of SCRIPT_PARAMETERS, which the loader calls.
  const toolsScript = await build({
    entryPoints: [path.join(root, 'src/cli/tools-entry.ts')],
    outfile: path.join(staging, 'chunks', TOOLS_SCRIPT),
    ...ONE_SCRIPT,
    metafile: true,
    absWorkingDir: root,
    plugins: [noOpenTelemetry, dependencies, noZodLocales, scriptImports],
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, target: 'ES2022', useDefineForClassFields: true } },
    define: { WARDEN_YAML_BUNDLE: JSON.stringify(`./${YAML_BUNDLE}`), 'import.meta.url': '__wardenImportMetaUrl' },
  });
  for (const [output, { imports, inputs }] of Object.entries(toolsScript.metafile.outputs)) {
    map[rel(output)] = { imports: imports.map((imp) => ({ external: imp.path, kind: imp.kind })), inputs: Object.keys(inputs).sort() };
  }
  const toolsFile = path.join(staging, 'chunks', TOOLS_SCRIPT);
  writeFileSync(toolsFile, `(function (${SCRIPT_PARAMETERS}) {${readFileSync(toolsFile, 'utf8')}\n})`);
  writeFileSync(path.join(staging, 'modules.json'), `${JSON.stringify(map)}\n`);
  // The YAML parser (seventy CommonJS files) as one CommonJS file beside the chunks, for
  // src/util/yaml.ts's require(): one file to read and compile instead of seventy.
  await build({
    entryPoints: [fileURLToPath(import.meta.resolve('yaml'))],
    outfile: path.join(staging, 'chunks', YAML_BUNDLE),
    // Written without blank space as the chunks are (names kept): the config loader loads it at
    // every start and an idle bot keeps its source text, 264 KB as the package writes it.
    ...ONE_SCRIPT,
  });
  // V8 keeps every module's source text in memory, and a single character beyond ASCII makes it
  // keep the whole file at two bytes per character: zod's 390 KB chunk took 780 KB of heap for one
  // dash in a comment. esbuild escapes such characters in strings and names (charset ascii); what
  // is left sits in comments, where an escape reads the same.
  for (const file of readdirSync(staging, { recursive: true })) {
    if (!String(file).endsWith('.js') && !String(file).endsWith('.cjs')) continue;
    const full = path.join(staging, String(file));
    let text = readFileSync(full, 'utf8');
    // The banner's `require` is used by the few chunks that call it (esbuild's `__require` for the
    // bundled CommonJS packages, a module's own `require`); in every other chunk it cost an import
    // of node:module, an `import.meta` and a createRequire() at load, some fifty of them on
    // `warden tools`'s path. A chunk keeps it wherever the word appears, in a string too.
    if (text.startsWith(`${REQUIRE_BANNER}\n`) && !/\brequire\b/.test(text.slice(REQUIRE_BANNER.length))) {
      text = text.slice(REQUIRE_BANNER.length + 1);
      writeFileSync(full, text);
    }
    let ascii = '';
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code < 0x80) continue;
      ascii += `${text.slice(from, i)}\\u${code.toString(16).padStart(4, '0')}`;
      from = i + 1;
    }
    if (from > 0) writeFileSync(full, ascii + text.slice(from));
  }
  // The list of modules marks a finished build: bin/warden.js runs dist/ only when it is there.
  writeFileSync(path.join(staging, 'BUILD'), `${listing}\n`);
  const old = `${staging}-old`;
  try {
    renameSync(outdir, old);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  try {
    renameSync(staging, outdir);
  } catch (err) {
    // A build running beside this one swapped its output in first; it compiled the same sources.
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    rmSync(staging, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
} catch (err) {
  rmSync(staging, { recursive: true, force: true });
  throw err;
}
if (!quiet) process.stderr.write(`build: ${entryPoints.length} modules → dist/ in ${Date.now() - started} ms\n`);

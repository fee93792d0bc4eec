// Workspace file tools: what the path guard and verified open cost over a plain readFile, and
// what memory_search's incremental index saves when nothing changed.
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readTool } from '../src/tools/core/fs/read.js';
import { callContext } from '../src/tools/core/fs/test-support.js';
import { MemoryIndex } from '../src/tools/core/memory/memory-index.js';
import { fmtMs, fmtRatio, measure, type Bench } from './harness.js';

const bench: Bench = async (report) => {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'warden-fs-bench-')));
  try {
    await mkdir(path.join(ws, 'src', 'deep', 'er'), { recursive: true });
    const file = path.join(ws, 'src', 'deep', 'er', 'file.ts');
    await writeFile(file, Array.from({ length: 200 }, (_, i) => `export const v${i} = ${i}; // some text`).join('\n'));
    const ctx = callContext(ws);

    const plain = await measure(() => readFile(file, 'utf8'), { iterations: 2000 });
    const tool = await measure(() => readTool.execute({ path: 'src/deep/er/file.ts' }, ctx), { iterations: 2000 });
    report({ name: 'plain fs.readFile, 200-line file (baseline)', value: fmtMs(plain.median) });
    report({ name: 'read tool: guard + verified open + page + wrap', value: fmtMs(tool.median), note: `${fmtRatio(tool.median / plain.median)} baseline` });

    await mkdir(path.join(ws, 'memory'));
    for (let i = 0; i < 200; i++) {
      await writeFile(path.join(ws, 'memory', `2026-01-${String(i).padStart(3, '0')}.md`), `# Day ${i}\nDeployed service ${i} with postgres and redis.\n\nNotes about topic ${i % 17}.\n`);
    }
    const dbDir = await mkdtemp(path.join(os.tmpdir(), 'warden-mem-bench-'));
    const index = new MemoryIndex(path.join(dbDir, 'm.sqlite'));
    const start = performance.now();
    await index.sync(ws);
    const first = performance.now() - start;
    const again = await measure(() => index.sync(ws), { iterations: 50, warmup: 5 });
    const search = await measure(() => index.search(ws, 'postgres topic 3', 6), { iterations: 500 });
    report({ name: 'memory index: first sync of 200 files', value: fmtMs(first) });
    report({ name: 'memory index: sync with nothing changed (200 files)', value: fmtMs(again.median), note: `${fmtRatio(first / again.median)} faster than a full index` });
    report({ name: 'memory search query (FTS5 bm25, 200 files)', value: fmtMs(search.median) });
    index.close();
    await rm(dbDir, { recursive: true, force: true });
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
};
export default bench;

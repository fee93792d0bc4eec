// What a user waits for and what an idle bot holds: `warden --help` and `warden tools --json`
// against `node -e 0` (runs interleaved, so drift in the machine hits all three alike);
// `warden start` with the web chat: launch → first HTTP answer, and resident memory once idle;
// then the same with a model configured, and with Discord (against the loopback fake), so what
// each adds shows; and what the first use adds to an idle bot: an owner's `/exec` (its approval
// card), a model's first turn (against the loopback fake model). All of it runs what users run:
// bin/warden.js on the build in dist/.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startDiscordFake } from '../test/fakes/discord/index.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import { freePort } from '../test/free-port.js';
import { type Bench, fmtMs, fmtRatio, summarize } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(root, 'bin/warden.js');
const RUNS = 15;
const STARTS = 5;

function runOnce(args: string[], cwd: string): number {
  const start = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, WARDEN_LOG_LEVEL: 'silent' } });
  const took = performance.now() - start;
  if (r.status !== 0 && r.status !== null && args[0] !== '-e') throw new Error(`${args.join(' ')} exited ${r.status}`);
  return took;
}

const rssKb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

interface StartFigures {
  firstAnswerMs: number;
  idleRssMb: number;
  /** RSS once the `then` step ran and the process settled again. */
  afterRssMb?: number;
}

/** The highest of a few RSS readings after `settleMs`: what the process holds once it is quiet. */
async function settledRssMb(pid: number, settleMs: number): Promise<number> {
  await new Promise((r) => setTimeout(r, settleMs));
  let rss = 0;
  for (let i = 0; i < 5; i++) {
    rss = Math.max(rss, rssKb(pid));
    await new Promise((r) => setTimeout(r, 200));
  }
  return rss / 1024;
}

const TOKEN = 'bench-token-bench-token-bench-token';

/** Sends `text` in the web chat as its (owner) user and waits for the first frame `wanted` accepts. */
async function webSay(port: number, text: string, wanted: (frame: { type: string; message?: { role: string } }) => boolean): Promise<void> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${TOKEN}`, origin: `http://127.0.0.1:${port}` } });
  try {
    const answered = new Promise<void>((resolve) => ws.on('message', (raw) => wanted(JSON.parse(raw.toString()) as { type: string; message?: { role: string } }) && resolve()));
    await once(ws, 'open');
    ws.send(JSON.stringify({ type: 'message', id: `bench-${Date.now()}`, text }));
    await answered;
  } finally {
    ws.close();
  }
}
/** An owner's first `/exec` on an idle bot: answered by its approval card. */
const firstExec = (port: number) => webSay(port, '/exec echo bench', (f) => f.type === 'card');
/** A model's first turn: answered by the bot's reply. */
const firstTurn = (port: number) => webSay(port, 'hello', (f) => f.type === 'message' && f.message?.role === 'bot');

/**
 * Launches `warden start` in a fresh folder, polls the web chat (or waits for the log line) until
 * it answers, lets it settle (the background tool preload included), and reads its RSS.
 */
async function startOnce(config: (port: number) => string, web: boolean, then?: (port: number) => Promise<void>): Promise<StartFigures> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-bench-start-'));
  const port = await freePort();
  writeFileSync(path.join(dir, 'warden.config.yaml'), config(port));
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'start'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WARDEN_LOG_LEVEL: 'warn', WARDEN_DATA_DIR: '' } });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = once(child, 'exit');
  try {
    let firstAnswerMs = NaN;
    const deadline = started + 30_000;
    while (performance.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`warden start exited: ${out}`);
      if (web) {
        const answered = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })
          .then((r) => r.status)
          .catch(() => 0);
        if (answered === 200) {
          firstAnswerMs = performance.now() - started;
          break;
        }
      } else if (out.includes('Warden is running')) {
        firstAnswerMs = performance.now() - started;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    if (Number.isNaN(firstAnswerMs)) throw new Error(`warden start did not answer: ${out}`);
    // Idle: the background preload has run; the highest of a few readings.
    const idleRssMb = await settledRssMb(child.pid!, 3000);
    if (!then) return { firstAnswerMs, idleRssMb };
    await then(port);
    return { firstAnswerMs, idleRssMb, afterRssMb: await settledRssMb(child.pid!, 3000) };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `node` doing nothing but staying up: what any Node process costs to launch and to keep. */
async function idleNode(): Promise<StartFigures> {
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', 'process.stdout.write("up\\n"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = once(child, 'exit');
  try {
    await once(child.stdout!, 'data');
    const firstAnswerMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, 3000));
    let rss = 0;
    for (let i = 0; i < 5; i++) {
      rss = Math.max(rss, rssKb(child.pid!));
      await new Promise((r) => setTimeout(r, 200));
    }
    return { firstAnswerMs, idleRssMb: rss / 1024 };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const WEB = (port: number) => `channels:\n  web:\n    port: ${port}\n    token: ${TOKEN}\n`;

const bench: Bench = async (report) => {
  if (!existsSync(path.join(root, 'dist/BUILD'))) {
    report({ name: 'startup', value: 'skipped', note: 'no build: run npm run build' });
    return;
  }
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-bench-cli-'));
  const node: number[] = [];
  const help: number[] = [];
  const tools: number[] = [];
  for (let i = -2; i < RUNS; i++) {
    const a = runOnce(['-e', '0'], cwd);
    const b = runOnce([BIN, '--help'], cwd);
    const c = runOnce([BIN, 'tools', '--json'], cwd);
    if (i >= 0) node.push(a), help.push(b), tools.push(c);
  }
  rmSync(cwd, { recursive: true, force: true });
  const n = summarize(node).median;
  const h = summarize(help).median;
  const t = summarize(tools).median;
  // The machine is shared: its load, so a figure can be read against it.
  report({ name: 'load average (1 min) at the start of the run', value: loadavg()[0]!.toFixed(2), note: `${cpus().length} cores` });
  report({ name: '`node -e 0` (baseline), median', value: fmtMs(n), note: `${RUNS} runs interleaved` });
  report({ name: '`warden --help`, median', value: fmtMs(h), note: `${fmtRatio(h / n)} node -e 0 (target ≤ 1.20×)` });
  report({ name: '`warden tools --json`, median', value: fmtMs(t), note: `${fmtRatio(t / n)} node -e 0 (target ≤ 2.00×)` });

  // The baseline of the start rows, in pairs with the web chat start: an idle `node` (a timer
  // keeps it up) — launch to running, and its resident memory read as Warden's is.
  const idle: StartFigures[] = [];
  const row = async (name: string, config: (port: number) => string, web: boolean, targets?: { first: string; rss: string }, then?: { name: string; run: (port: number) => Promise<void> }): Promise<StartFigures> => {
    const figures: StartFigures[] = [];
    for (let i = 0; i < STARTS; i++) {
      if (targets) idle.push(await idleNode());
      figures.push(await startOnce(config, web, then?.run));
    }
    const first = summarize(figures.map((f) => f.firstAnswerMs)).median;
    const rss = summarize(figures.map((f) => f.idleRssMb)).median;
    if (targets) {
      const base = { firstAnswerMs: summarize(idle.map((f) => f.firstAnswerMs)).median, idleRssMb: summarize(idle.map((f) => f.idleRssMb)).median };
      report({ name: 'idle `node` (baseline of the start rows): launch → running; RSS', value: `${fmtMs(base.firstAnswerMs)}; ${base.idleRssMb.toFixed(1)} MB`, note: `median of ${STARTS}, each paired with the next start` });
    }
    report({ name: `\`warden start\`, ${name}: launch → ${web ? 'first HTTP answer' : '"running"'}`, value: fmtMs(first), note: `median of ${STARTS}${targets ? `; ${targets.first}` : ''}` });
    report({ name: `\`warden start\`, ${name}: idle RSS`, value: `${rss.toFixed(1)} MB`, ...(targets ? { note: targets.rss } : {}) });
    if (then) {
      const after = summarize(figures.map((f) => f.afterRssMb!)).median;
      report({ name: `  RSS after ${then.name}`, value: `${after.toFixed(1)} MB`, note: `+${(after - rss).toFixed(1)} MB over idle, median of ${STARTS}` });
    }
    return { firstAnswerMs: first, idleRssMb: rss };
  };
  const web = await row('web chat only', WEB, true, { first: 'target ≤ 300 ms', rss: 'target ≤ 70 MB' }, { name: 'an owner’s first `/exec` (its approval card)', run: firstExec });
  // The model is the loopback fake (an OpenAI-compatible server answering "ok"), so its first turn runs for real.
  const fakeModel = await startFakeOpenAI();
  try {
    const withModel = (port: number) => `${WEB(port)}models:\n  default: ollama/bench-model\n  providers:\n    ollama: { api: openai, baseUrl: '${fakeModel.url}' }\n`;
    const model = await row('web chat + a model', withModel, true, undefined, { name: 'the model’s first turn (a reply, no tool call)', run: firstTurn });
    report({ name: '  what a configured model (its tools) adds', value: `${(model.idleRssMb - web.idleRssMb).toFixed(1)} MB` });
  } finally {
    await fakeModel.close();
  }
  const fake = await startDiscordFake();
  try {
    const discord = await row('Discord only (loopback fake)', () => `channels:\n  discord:\n    token: bench\n    apiBaseUrl: ${fake.apiBaseUrl}\n`, false);
    report({ name: '  what Discord adds over the web chat', value: `${(discord.idleRssMb - web.idleRssMb).toFixed(1)} MB` });
  } finally {
    await fake.close();
  }
};
export default bench;

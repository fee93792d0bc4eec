// Where two runs' CPU differs, function by function: `npx tsx bench/cpuprofile-diff.ts
// A.cpuprofile[,A2…] FROM TO B.cpuprofile[,B2…] FROM TO [--a-us N] [--b-us N] [--top N] [--total]`.
// Each side is one or more `--cpu-prof` profiles (a cluster's instances together) over its burst
// window (monotonic µs, as `bench/profile-cluster.ts --prof` prints it). A function's share of
// its side's busy samples (idle left out) is scaled to the side's main-thread CPU per message
// (`--a-us`, `--b-us`: the "main threads" figure profile-cluster prints; without them the
// shares are printed in %), so one instance and several compare per message although the
// sampler's interval stretches with the machine's load. Prints the functions whose self time
// (`--total`: time with the function on the stack) grew most from A to B, then those that shrank.
import { readFileSync } from 'node:fs';
import { frameLabel, packageOf, type Profile, type ProfileNode as Node } from './cpuprofile.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const [filesA, fromA, toA, filesB, fromB, toB] = args;
if (!filesA || !filesB || ![fromA, toA, fromB, toB].every((a) => a !== undefined && /^\d+$/.test(a)))
  throw new Error('usage: cpuprofile-diff.ts A[,A2…] FROM TO B[,B2…] FROM TO [--a-us N] [--b-us N] [--top N] [--total]');
const TOP = Number(flag('--top') ?? 30);
const mode = args.includes('--total') ? 'total' : 'self';

const label = frameLabel;

/** Busy samples by function over the window, summed over the side's profiles, as shares of the side's busy samples. */
function shares(files: string, from: number, to: number): Map<string, number> {
  const counts = new Map<string, number>();
  let busy = 0;
  for (const file of files.split(',')) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      t += profile.timeDeltas[i]!;
      if (t < from || t > to) continue;
      const node = byId.get(profile.samples[i]!)!;
      if (node.callFrame.functionName === '(idle)') continue;
      busy++;
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = mode === 'self' ? undefined : parent.get(id)) {
        const n = byId.get(id)!;
        if (n.callFrame.functionName === '(root)') break;
        seen.add(label(n));
      }
      for (const k of seen) counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  }
  return new Map([...counts].map(([k, n]) => [k, n / Math.max(1, busy)]));
}

const a = shares(filesA, Number(fromA), Number(toA));
const b = shares(filesB, Number(fromB), Number(toB));
const aUs = flag('--a-us');
const bUs = flag('--b-us');
const scaled = aUs !== undefined && bUs !== undefined;
const scaleA = scaled ? Number(aUs) : 100;
const scaleB = scaled ? Number(bUs) : 100;
const unit = scaled ? 'µs/message' : '% of busy samples';
const rows = [...new Set([...a.keys(), ...b.keys()])].map((k) => ({ k, a: (a.get(k) ?? 0) * scaleA, b: (b.get(k) ?? 0) * scaleB })).sort((x, y) => y.b - y.a - (x.b - x.a));
const fmt = (n: number) => (scaled ? n.toFixed(0) : n.toFixed(1)).padStart(7);
const out = (line: string) => process.stdout.write(`${line}\n`);
out(`${mode} time by function, ${unit} (A -> B, difference first)${scaled ? `; main threads ${scaleA} -> ${scaleB}` : ''}`);
out('grew most:');
for (const r of rows.slice(0, TOP)) out(`${fmt(r.b - r.a)}  ${fmt(r.a)} -> ${fmt(r.b)}  ${r.k}`);
out('shrank most:');
for (const r of rows.slice(-Math.min(TOP, 10)).reverse()) out(`${fmt(r.b - r.a)}  ${fmt(r.a)} -> ${fmt(r.b)}  ${r.k}`);

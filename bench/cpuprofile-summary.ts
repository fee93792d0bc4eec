// Summarises a `--cpu-prof` profile of a `warden start` process over a time window:
// `npx tsx bench/cpuprofile-summary.ts PROFILE.cpuprofile [FROM_US TO_US] [--top N]` (the window
// in monotonic µs, as `bench/profile-cluster.ts --prof` prints it for the burst). Prints the
// samples' self time by package (a file under node_modules/<package>, Warden's own build under
// dist/, Node's internals, the VM's own: GC, program, idle), the share of samples with a frame of
// each package anywhere on the stack, and the top functions by self time and by total time.
import { readFileSync } from 'node:fs';
import { frameLabel, packageOf, type Profile, type ProfileNode as Node } from './cpuprofile.js';

const args = process.argv.slice(2);
const file = args[0];
if (!file) throw new Error('usage: cpuprofile-summary.ts PROFILE [FROM_US TO_US] [--top N]');
const TOP = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 30;
const window = args.slice(1, 3).every((a) => /^\d+$/.test(a));
const from = window ? Number(args[1]) : -Infinity;
const to = window ? Number(args[2]) : Infinity;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = frameLabel;

const self = new Map<string, number>();
const total = new Map<string, number>();
const pkgSelf = new Map<string, number>();
const pkgAny = new Map<string, number>();
let counted = 0;
let t = profile.startTime;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i]!;
  if (t < from || t > to) continue;
  const node = byId.get(profile.samples[i]!)!;
  counted++;
  add(self, label(node), 1);
  add(pkgSelf, packageOf(node.callFrame.url, node.callFrame.functionName), 1);
  const seenFn = new Set<string>();
  const seenPkg = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const n = byId.get(id)!;
    if (n.callFrame.functionName === '(root)') break;
    seenFn.add(label(n));
    seenPkg.add(packageOf(n.callFrame.url, n.callFrame.functionName));
  }
  for (const k of seenFn) add(total, k, 1);
  for (const k of seenPkg) add(pkgAny, k, 1);
}
const pct = (n: number) => `${((n / counted) * 100).toFixed(1).padStart(5)} %`;
const print = (title: string, m: Map<string, number>, top: number) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, n] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(n)}  ${k}\n`);
};
process.stdout.write(`${counted} samples in the window\n`);
print('self time by package', pkgSelf, 25);
print('samples with a frame of the package on the stack', pkgAny, 25);
print('self time by function', self, TOP);
print('total time by function (Warden\'s own)', new Map([...total].filter(([k]) => k.includes(' warden:'))), TOP);

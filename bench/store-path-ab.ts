// A message's PostgreSQL store work (`messagePath` of `bench/cluster.bench.ts`, 'steps') with the
// code of two checkouts in one process, in alternating streams on one throwaway cluster (a
// database each): the machine's load falls on both alike, so their ratio holds where separate
// runs of `bench/cluster.bench.ts` spread by ±15 %. Prints each side's p50 per round and the
// median of the rounds' ratios.
//   npx tsx bench/store-path-ab.ts CHECKOUT_A CHECKOUT_B [ROUNDS] [MESSAGES]
import './run-dir.js';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';

const [a, b] = [path.resolve(process.argv[2] ?? '.'), path.resolve(process.argv[3] ?? '.')];
const ROUNDS = Number(process.argv[4] ?? 5);
const MESSAGES = Number(process.argv[5] ?? 350);

async function side(checkout: string, clusterUrl: string) {
  const { openWardenStore } = (await import(path.join(checkout, 'src/app/migrations.ts'))) as typeof import('../src/app/migrations.js');
  const bench = (await import(path.join(checkout, 'bench/cluster.bench.ts'))) as typeof import('./cluster.bench.js');
  const open = async () => {
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-store-ab-')), url: await bench.freshDatabase(clusterUrl) });
    if (!opened.ok) throw new Error('store did not open');
    const rig = bench.messageRig(opened.store);
    return { store: opened.store, rig, path: bench.messagePath(rig, 'pg', 'steps') };
  };
  return { checkout, open, interleaved: bench.interleaved };
}

const { startTestCluster } = (await import(path.join(a, 'test/postgres-cluster.ts'))) as typeof import('../test/postgres-cluster.js');
const cluster = await startTestCluster({});
try {
  const sides = [await side(a, cluster.url), await side(b, cluster.url)];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // A fresh database each round (transcripts grow with the messages), the sides' order swapped every other round.
    const opened = await Promise.all(sides.map((s) => s.open()));
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (let i = 0; i < 60; i++) for (const k of order) await opened[k]!.path.message();
    const results = await sides[0]!.interleaved(order.map((k) => opened[k]!.path), MESSAGES);
    const p50 = [0, 1].map((k) => results[order.indexOf(k)]!.total.p50);
    ratios.push(p50[1]! / p50[0]!);
    console.log(`round ${round + 1}: A ${(p50[0]! * 1000).toFixed(1)} µs, B ${(p50[1]! * 1000).toFixed(1)} µs, B/A ${(p50[1]! / p50[0]!).toFixed(3)} (load ${loadavg()[0]!.toFixed(1)})`);
    for (const o of opened) {
      await o.rig.close();
      await o.store.close();
    }
  }
  ratios.sort((x, y) => x - y);
  console.log(`A ${a}\nB ${b}\nmedian B/A over ${ROUNDS} rounds of ${MESSAGES} messages each: ${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)} (range ${ratios[0]!.toFixed(3)}–${ratios.at(-1)!.toFixed(3)})`);
} finally {
  await cluster.stop();
}

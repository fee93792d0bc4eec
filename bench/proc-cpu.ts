// CPU time of processes on this machine, read from /proc (Linux): what an instance, PostgreSQL's
// server processes and the bench process itself spend, so a bench can say where the cores go.
import { readFileSync, readdirSync } from 'node:fs';

const TICK = 100; // USER_HZ

/** CPU ms (user + system) of `pid`, all its threads; 0 once it is gone. */
export function cpuMs(pid: number, file = `/proc/${pid}/stat`): number {
  try {
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICK;
  } catch {
    return 0;
  }
}

/** CPU ms of `pid`'s main thread (the event loop; the rest is V8's compiler and GC threads, libuv's pool). */
export const mainThreadMs = (pid: number): number => cpuMs(pid, `/proc/${pid}/task/${pid}/stat`);

/** The postmaster listening on `port` and its children (the server's processes for this cluster only). */
export function serverPids(port: number): number[] {
  const all = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  let master: number | undefined;
  for (const d of all) {
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes('postgres') && cmd.includes(`-p ${port}`)) master = Number(d);
    } catch {}
  }
  if (master === undefined) return [];
  const pids = [master];
  for (const d of all) {
    try {
      const fields = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(fields[1]) === master) pids.push(Number(d));
    } catch {}
  }
  return pids;
}

/** CPU ms of this process so far (user + system), the bench and what runs in it. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The load average over 1, 5 and 15 minutes, as printed. */
export const loadAverage = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

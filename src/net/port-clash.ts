import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * What to say when one of Warden's listeners finds its port taken: which config key, command-line
 * flag and environment variable move it, which process listens there (when /proc shows it), and
 * the next port that is free on the same address. The bare `listen EADDRINUSE` leaves a newcomer
 * with no way forward.
 */
export interface PortSetting {
  /** What listens, as people call it: "the web chat", "the ops listener". */
  what: string;
  /** The config key, e.g. `channels.web.port`. */
  key: string;
  /** The `warden start` flag, e.g. `--port`. */
  flag: string;
  /** The environment variable, e.g. `WARDEN_PORT`. */
  envVar: string;
}

export function isPortInUse(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
}

/** The sentence for a taken port, e.g. for the web chat on 3000 with 3001 free. */
export function portInUseText(setting: PortSetting, at: { host: string; port: number }, found: { holder?: string | undefined; free?: number | undefined }): string {
  const holder = found.holder ? ` by ${found.holder}` : '';
  const next = found.free !== undefined ? `; ${found.free} is free: warden start ${setting.flag} ${found.free} (or ${setting.envVar}=${found.free})` : '';
  return `${setting.what} cannot listen on ${at.host}:${at.port}: the port is in use${holder}. Set ${setting.key}, ${setting.flag} N or ${setting.envVar}=N${next}.`;
}

/** `portInUseText` with the holder and the next free port looked up. */
export async function describePortInUse(setting: PortSetting, at: { host: string; port: number }): Promise<string> {
  return portInUseText(setting, at, { holder: listenerOf(at.port), free: await nextFreePort(at.host, at.port) });
}

/** The first port after `port` (up to 20 tried) that this process can listen on at `host`. */
export async function nextFreePort(host: string, port: number): Promise<number | undefined> {
  for (let candidate = port + 1; candidate <= Math.min(port + 20, 65535); candidate++) {
    if (await canListen(host, candidate)) return candidate;
  }
  return undefined;
}

function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * "node (pid 123)" for the process listening on a TCP port, read from Linux's /proc: the socket's
 * inode in /proc/net/tcp{,6} (state 0A is LISTEN), then the process holding `socket:[inode]`
 * among its descriptors. Undefined where /proc is absent or the process is not ours to read.
 */
export function listenerOf(port: number, proc = '/proc'): string | undefined {
  const inodes = new Set<string>();
  for (const table of ['net/tcp', 'net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(`${proc}/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // cols: sl, local_address (HEXIP:HEXPORT), rem_address, st, queues, tr, retrnsmt, uid, timeout, inode
      const local = cols[1];
      if (!local || cols[3] !== '0A') continue;
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && cols[9]) inodes.add(cols[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync(proc).filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`${proc}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (target.startsWith('socket:[') && inodes.has(target.slice(8, -1))) return `${commandOf(proc, pid)} (pid ${pid})`;
    }
  }
  return undefined;
}

function commandOf(proc: string, pid: string): string {
  try {
    return readFileSync(`${proc}/${pid}/comm`, 'utf8').trim() || 'a process';
  } catch {
    return 'a process';
  }
}

/** The web chat's port: `channels.web.port`, `warden start --port`, `WARDEN_PORT`. */
export const WEB_CHAT_PORT: PortSetting = { what: 'the web chat', key: 'channels.web.port', flag: '--port', envVar: 'WARDEN_PORT' };
/** The ops listener's port: `ops.port`, `warden start --ops-port`, `WARDEN_OPS_PORT`. */
export const OPS_PORT: PortSetting = { what: 'the ops listener', key: 'ops.port', flag: '--ops-port', envVar: 'WARDEN_OPS_PORT' };

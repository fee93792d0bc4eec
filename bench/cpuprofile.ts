// What the profile readers (cpuprofile-summary.ts, cpuprofile-diff.ts) share: the shape of a
// `--cpu-prof` profile and how a frame is named.

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Which package a frame belongs to: a file under node_modules/<package>, Warden's build under dist/, Node's internals, the VM's own. */
export function packageOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return 'node';
  if (url.includes('/dist/')) return 'warden';
  return url;
}

/** A function as the summaries print it: name, package, file and line. */
export const frameLabel = (n: ProfileNode): string =>
  `${n.callFrame.functionName || '(anonymous)'} ${packageOf(n.callFrame.url, n.callFrame.functionName)}${n.callFrame.url ? `:${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}` : ''}`;

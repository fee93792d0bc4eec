import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Resolver } from '../../../src/net/index.js';

/**
 * Test upstreams for sandbox egress, never beyond the machine: a git smart-HTTP server (the
 * real `git http-backend` as CGI behind a node server) and an npm-like registry, on a loopback
 * alias of their own (127.a.b.c: every 127/8 address is local on Linux, none needs setting up)
 * at port 80, and a resolver mapping the test names to them. `allowCidrs` names the alias.
 */
export interface Upstreams {
  /** The loopback alias both servers listen on. */
  address: string;
  /** `address/32`, for allowCidrs. */
  cidr: string;
  resolve: Resolver;
  /** Requests the servers saw: Host header and path. */
  seen: Array<{ host: string | undefined; url: string | undefined }>;
  close(): Promise<void>;
}

/** Names the resolver answers: git.test, registry.test and other.test are the alias; private.test is a private address outside it. */
export const PRIVATE_TEST_ADDRESS = '10.255.0.7';

export async function startUpstreams(): Promise<Upstreams | { skip: string }> {
  if (process.getuid?.() !== 0) return { skip: 'the upstreams listen on port 80 of a loopback alias, which needs root' };
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-egress-upstreams-'));
  const repos = path.join(dir, 'repos');
  makeRepo(repos, dir);
  const seen: Upstreams['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ host: req.headers.host, url: req.url });
    const host = (req.headers.host ?? '').split(':')[0];
    if (host === 'registry.test') return registry(req, res);
    if (host === 'git.test') return gitBackend(repos, req, res);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`hello from ${host}\n`);
  });
  let address = '';
  for (let attempt = 0; attempt < 20; attempt++) {
    address = `127.${64 + Math.floor(Math.random() * 64)}.${Math.floor(Math.random() * 256)}.${2 + Math.floor(Math.random() * 250)}`;
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(80, address, () => resolve(true));
    });
    if (ok) break;
    address = '';
  }
  if (!address) return { skip: 'no free loopback alias on port 80' };
  const names: Record<string, string> = { 'git.test': address, 'registry.test': address, 'other.test': address, 'private.test': PRIVATE_TEST_ADDRESS };
  const resolve: Resolver = async (host) => {
    const a = names[host];
    if (!a) throw Object.assign(new Error(`no test name ${host}`), { code: 'ENOTFOUND' });
    return [{ address: a, family: 4 }];
  };
  return {
    address,
    cidr: `${address}/32`,
    resolve,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A bare repository `repo.git` with one commit holding README.md. */
function makeRepo(repos: string, dir: string): void {
  mkdirSync(repos, { recursive: true });
  const work = path.join(dir, 'work');
  mkdirSync(work);
  writeFileSync(path.join(work, 'README.md'), 'egress test repository\n');
  const git = (cwd: string, ...args: string[]) => {
    const r = spawnSync('git', args, { cwd, env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'add', 'README.md');
  git(work, 'commit', '-q', '-m', 'first');
  git(repos, 'clone', '-q', '--bare', work, 'repo.git');
}

/** The real `git http-backend`, as a CGI program. */
function gitBackend(root: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://git.test');
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: '127.0.0.1',
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
    },
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headed = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headed) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    headed = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  child.on('close', () => res.end());
}

/** An npm-like registry: a packument and its tarball. */
function registry(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.url === '/left-pad') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name: 'left-pad', 'dist-tags': { latest: '1.3.0' }, versions: { '1.3.0': { name: 'left-pad', version: '1.3.0', dist: { tarball: 'http://registry.test/left-pad/-/left-pad-1.3.0.tgz' } } } }));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end('{"error":"not found"}');
}

export function addressOf(server: http.Server): AddressInfo {
  return server.address() as AddressInfo;
}

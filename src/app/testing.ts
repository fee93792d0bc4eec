import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ApprovalService } from '../approvals/service.js';
import { parseConfig, type WardenConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import type { HookBus } from '../hooks/bus.js';
import type { ResolveResult } from '../approvals/types.js';
import { openWardenStore } from './migrations.js';
import type { Store } from '../store/index.js';
import { GovernedToolExecutor } from './tool-executor.js';

export interface TestExecutor {
  executor: GovernedToolExecutor;
  approvals: ApprovalService;
  config: WardenConfig;
  store: Store;
  dir: string;
}

/**
 * A governed executor over a real store in a fresh temp folder, for tests: `raw` is the config
 * (its `dataDir` is the folder's `data/`), `files` are written into `workspace/` first. Every
 * resource it opens is handed to `cleanup` so the caller's `afterEach` closes it.
 */
export async function testExecutor(raw: object, options: { cleanup: (close: () => void | Promise<void>) => void; hooks?: HookBus; files?: Record<string, string>; prefix?: string }): Promise<TestExecutor> {
  const dir = mkdtempSync(path.join(tmpdir(), options.prefix ?? 'warden-executor-'));
  mkdirSync(path.join(dir, 'workspace'));
  for (const [name, text] of Object.entries(options.files ?? {})) {
    mkdirSync(path.dirname(path.join(dir, 'workspace', name)), { recursive: true });
    writeFileSync(path.join(dir, 'workspace', name), text);
  }
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), ...raw });
  if (!parsed.ok) throw parsed.error;
  const { config } = parsed.value;
  const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config, events });
  options.cleanup(() => opened.store.close());
  options.cleanup(() => approvals.shutdown());
  const executor = new GovernedToolExecutor(config, { config, baseDir: dir, store: opened.store }, { approvals, events, ...(options.hooks ? { hooks: options.hooks } : {}) });
  return { executor, approvals, config, store: opened.store, dir };
}

/** What another Warden process on the same store does with approvals, for tests that need one. */
export interface OtherProcessApprovals {
  resolve: ApprovalService['resolve'];
  resolveAsOperator: ApprovalService['resolveAsOperator'];
  close(): Promise<void>;
}

/**
 * An approval service in a thread of its own over the SQLite store in `dataDir`, configured by
 * `raw`: another process on the same file. Two connections to one SQLite file in one thread
 * cannot share it — one waits for the other's write lock synchronously, stopping the thread
 * that would release it — so a test of two processes on SQLite needs a second thread.
 */
export async function approvalsInAnotherThread(dataDir: string, raw: object): Promise<OtherProcessApprovals> {
  const module = (name: string) => fileURLToPath(new URL(name, import.meta.url));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      (await import('tsx/esm/api')).register();
      const { openWardenStore } = await import(workerData.schema);
      const { ApprovalService } = await import(workerData.service);
      const { parseConfig } = await import(workerData.config);
      const { EventBus } = await import(workerData.events);
      const opened = await openWardenStore({ dataDir: workerData.dataDir });
      if (!opened.ok) throw new Error(opened.error.message);
      const parsed = parseConfig(workerData.raw);
      if (!parsed.ok) throw parsed.error;
      const svc = new ApprovalService({ store: opened.store, config: parsed.value.config, events: new EventBus(), pollMs: 10 });
      parentPort.on('message', async (m) => {
        if (m === 'close') {
          svc.shutdown();
          await opened.store.close();
          parentPort.close();
          return;
        }
        try {
          parentPort.postMessage({ value: await svc[m.method](...m.args) });
        } catch (err) {
          parentPort.postMessage({ error: String(err) });
        }
      });
      parentPort.postMessage({ value: 'ready' });
    })().catch((err) => parentPort.postMessage({ error: String(err) }));`,
    {
      eval: true,
      workerData: { dataDir, raw, schema: module('../app/migrations.ts'), service: module('../approvals/service.ts'), config: module('../config/index.ts'), events: module('../events/events.ts') },
    },
  );
  // Replies come in the order of the calls: each call waits for the next one.
  const replies: Array<(reply: { value?: unknown; error?: string }) => void> = [];
  worker.on('message', (reply: { value?: unknown; error?: string }) => replies.shift()?.(reply));
  const next = () =>
    new Promise<unknown>((resolve, reject) => replies.push((reply) => (reply.error !== undefined ? reject(new Error(reply.error)) : resolve(reply.value))));
  const ready = await next();
  if (ready !== 'ready') throw new Error(`the other process did not start: ${JSON.stringify(ready)}`);
  const call = (method: string, args: unknown[]) => {
    const reply = next();
    worker.postMessage({ method, args });
    return reply as Promise<ResolveResult>;
  };
  let closed: Promise<void> | undefined;
  return {
    resolve: (...args) => call('resolve', args),
    resolveAsOperator: (...args) => call('resolveAsOperator', args),
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage('close');
      })),
  };
}

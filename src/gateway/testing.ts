import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApprovalService } from '../approvals/service.js';
import { parseConfig, type WardenConfig } from '../config/index.js';
import { EventBus } from '../events.js';
import type { HookBus } from '../hooks/bus.js';
import { openWardenStore } from '../schema/index.js';
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

// The owner's control plane as startup assembles it: the HTTP tools API and the node listener,
// and what a config reload carries over between tool executors.
import { isDeepStrictEqual } from 'node:util';
import type { ToolExecutor } from '../agent/index.js';
import { closeAllBrowsers } from '../browser/shutdown.js';
import type { WardenConfig } from '../config/index.js';
import { AuditLog } from '../store/index.js';
import { GovernedToolExecutor } from './tool-executor.js';
import { ControlListeners } from '../control/listeners.js';
import { HttpToolsApi } from '../gateway/http/server.js';
import { NodeHub } from '../control/nodes/hub.js';
import { background } from '../util/background.js';

/** The control plane's listeners, each built from its own `gateway.*` block. */
export const NODE_LISTENER = 'node listener';

export function controlListeners(deps: { current: () => WardenConfig; tools: () => ToolExecutor; audit: AuditLog; nodes: ConstructorParameters<typeof NodeHub>[1] }): ControlListeners {
  return new ControlListeners([
    {
      name: 'HTTP tools API',
      block: (c) => (c.gateway?.http?.enabled ? c.gateway.http : undefined),
      create: (c) =>
        new HttpToolsApi(c.gateway!.http!, {
          audit: deps.audit,
          current: () => {
            const tools = deps.tools();
            return { config: deps.current(), tools: tools instanceof GovernedToolExecutor ? tools : undefined };
          },
        }),
    },
    { name: NODE_LISTENER, block: (c) => (c.gateway?.nodes?.enabled ? c.gateway.nodes : undefined), create: (c) => new NodeHub(c.gateway!.nodes!, deps.nodes) },
  ]);
}

/**
 * The browser keeps one Chromium per profile for the process: an unchanged `browser` block
 * keeps the running one for the new config's turns; a changed one closes it, so the next call
 * starts Chromium under the new settings.
 */
export function carryOverResources(before: ToolExecutor, after: ToolExecutor, previous: WardenConfig, next: WardenConfig): void {
  if (!(before instanceof GovernedToolExecutor) || !(after instanceof GovernedToolExecutor)) return;
  if (isDeepStrictEqual([previous.browser, previous.dataDir], [next.browser, next.dataDir])) after.adopt(before, ['browser']);
  else background(closeAllBrowsers(), 'browsers not closed after the browser settings changed');
}

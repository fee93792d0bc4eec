import type { ApprovalRequest } from '../approvals/types.js';
import { log } from '../log/log.js';

/** The diagnostic events of the call path, by name. Payloads are plain data. */
export interface WardenEvents {
  'tool.execution.started': { tool: string; toolCallId: string; sessionKey: string; agentId: string };
  'tool.execution.completed': { tool: string; toolCallId: string; sessionKey: string; durationMs: number; isError: boolean };
  'tool.execution.error': { tool: string; toolCallId: string; sessionKey: string; durationMs: number; error: string };
  'tool.execution.blocked': { tool: string; toolCallId: string; sessionKey: string; deniedReason: string; reason: string };
  'tool.loop': {
    tool: string;
    sessionKey: string;
    level: 'warning' | 'critical';
    action: 'warn' | 'block';
    detector: string;
    count: number;
    message: string;
    pairedToolName?: string | undefined;
  };
  'approval.requested': { request: ApprovalRequest };
  'approval.resolved': { request: ApprovalRequest };
  'approval.expired': { request: ApprovalRequest };
  /** No decision within `approvals.waitSec`: the call's turn went on, the call waits alone. */
  'approval.deferred': { request: ApprovalRequest };
  /** A request left `pending`, however (decision, expiry, cancel, interruption, another process). */
  'approval.closed': { request: ApprovalRequest };
  /**
   * The call waiting for this request died (its process went away). The router reports it to
   * `request.sessionKey`; the request is closed and the call did not run.
   */
  'approval.interrupted': { request: ApprovalRequest; message: string };
}

export type EventName = keyof WardenEvents;
export type Listener<K extends EventName> = (payload: WardenEvents[K]) => void;

/**
 * In-process publish/subscribe for diagnostics and lifecycle notices. Emitting never throws:
 * a failing listener is logged and the others still run.
 */
export class EventBus {
  private readonly listeners = new Map<EventName, Set<Listener<never>>>();

  on<K extends EventName>(name: K, listener: Listener<K>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => set.delete(listener as Listener<never>);
  }

  emit<K extends EventName>(name: K, payload: WardenEvents[K]): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as Listener<K>)(payload);
      } catch (err) {
        log.error({ err, event: name }, 'event listener failed');
      }
    }
  }
}

/** The process-wide bus; components take a bus as an option so tests can use their own. */
export const events = new EventBus();

import { log } from '../log/log.js';

/**
 * The diagnostic events of the call path, by name. Payloads are plain data. A feature above this
 * layer adds its own events by augmenting this interface (approvals/types.ts does), so the bus
 * names no feature.
 */
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

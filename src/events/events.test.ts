import { describe, expect, it } from 'vitest';
import { EventBus } from './events.js';

describe('EventBus', () => {
  it('delivers to subscribers of that event only, until they unsubscribe', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const off = bus.on('tool.execution.blocked', (p) => seen.push(`blocked:${p.tool}`));
    bus.on('tool.loop', (p) => seen.push(`loop:${p.tool}`));
    bus.emit('tool.execution.blocked', { tool: 'exec', toolCallId: 'c', sessionKey: 's', deniedReason: 'owner-only', reason: 'r' });
    off();
    bus.emit('tool.execution.blocked', { tool: 'read', toolCallId: 'c', sessionKey: 's', deniedReason: 'x', reason: 'r' });
    expect(seen).toEqual(['blocked:exec']);
  });

  it('a throwing listener does not stop the others or the emitter', () => {
    const bus = new EventBus();
    const seen: number[] = [];
    bus.on('tool.execution.started', () => { throw new Error('bad listener'); });
    bus.on('tool.execution.started', () => void seen.push(1));
    expect(() => bus.emit('tool.execution.started', { tool: 't', toolCallId: 'c', sessionKey: 's', agentId: 'main' })).not.toThrow();
    expect(seen).toEqual([1]);
  });
});

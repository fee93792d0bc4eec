import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../approvals/types.js';
import { EventBus } from '../events/events.js';
import { metricValue } from './testing.js';
import { BoundedLabel, WardenMetrics } from './metrics.js';

const request = (over: Partial<ApprovalRequest>): ApprovalRequest => ({ id: 'a1', kind: 'exec', tool: 'exec', createdAt: 1_000, status: 'pending', ...over }) as ApprovalRequest;

describe('WardenMetrics', () => {
  it('counts tool calls by tool and status, and approvals by kind and outcome with their latency, from the bus', async () => {
    const m = new WardenMetrics();
    const bus = new EventBus();
    const off = m.observe(bus);
    bus.emit('tool.execution.completed', { tool: 'read', toolCallId: 't1', sessionKey: 's', durationMs: 12, isError: false });
    bus.emit('tool.execution.completed', { tool: 'read', toolCallId: 't2', sessionKey: 's', durationMs: 3, isError: true });
    bus.emit('tool.execution.error', { tool: 'exec', toolCallId: 't3', sessionKey: 's', durationMs: 5, error: 'boom' });
    bus.emit('tool.execution.blocked', { tool: 'exec', toolCallId: 't4', sessionKey: 's', deniedReason: 'policy', reason: 'no' });
    bus.emit('approval.requested', { request: request({}) });
    bus.emit('approval.closed', { request: request({ status: 'allow-once', decidedAt: 31_000 }) });
    bus.emit('approval.closed', { request: request({ kind: 'tool', status: 'expired', decidedAt: 1_801_000 }) });
    off();
    bus.emit('tool.execution.completed', { tool: 'read', toolCallId: 't5', sessionKey: 's', durationMs: 1, isError: false });
    const text = await m.registry.metrics();
    expect(metricValue(text, 'warden_tool_calls_total', { tool: 'read', status: 'ok' })).toBe(1);
    expect(metricValue(text, 'warden_tool_calls_total', { tool: 'read', status: 'error' })).toBe(1);
    expect(metricValue(text, 'warden_tool_calls_total', { tool: 'exec', status: 'error' })).toBe(1);
    expect(metricValue(text, 'warden_tool_calls_total', { tool: 'exec', status: 'blocked' })).toBe(1);
    expect(metricValue(text, 'warden_tool_call_duration_seconds_count', { tool: 'read' })).toBe(2);
    expect(metricValue(text, 'warden_approvals_requested_total', { kind: 'exec' })).toBe(1);
    expect(metricValue(text, 'warden_approvals_decided_total', { kind: 'exec', outcome: 'allow-once' })).toBe(1);
    expect(metricValue(text, 'warden_approvals_decided_total', { kind: 'tool', outcome: 'expired' })).toBe(1);
    // 30 s to decide: inside the 30 s bucket, outside the 15 s one.
    expect(metricValue(text, 'warden_approval_decision_seconds_bucket', { kind: 'exec', outcome: 'allow-once', le: '30' })).toBe(1);
    expect(metricValue(text, 'warden_approval_decision_seconds_bucket', { kind: 'exec', outcome: 'allow-once', le: '15' })).toBe(0);
    expect(metricValue(text, 'warden_approval_decision_seconds_sum', { kind: 'tool', outcome: 'expired' })).toBe(1800);
  });

  it('reads pending approvals and queue depths from every running instance at scrape time; one that throws adds nothing', async () => {
    const m = new WardenMetrics();
    let pending = 2;
    const offA = m.addSource({ approvalsPending: () => pending, queue: () => ({ sessions: 3, running: 1, pending: 4 }) });
    m.addSource({
      approvalsPending: () => {
        throw new Error('store closed');
      },
      queue: () => {
        throw new Error('stopped');
      },
    });
    let text = await m.registry.metrics();
    expect(metricValue(text, 'warden_approvals_pending')).toBe(2);
    expect(metricValue(text, 'warden_queue_depth', { state: 'sessions' })).toBe(3);
    expect(metricValue(text, 'warden_queue_depth', { state: 'running' })).toBe(1);
    expect(metricValue(text, 'warden_queue_depth', { state: 'waiting' })).toBe(4);
    pending = 0;
    offA();
    text = await m.registry.metrics();
    expect(metricValue(text, 'warden_approvals_pending')).toBe(0);
    expect(metricValue(text, 'warden_queue_depth', { state: 'waiting' })).toBe(0);
  });

  it('times a store operation whether it returns or throws', async () => {
    const m = new WardenMetrics();
    expect(m.timeStore('x', () => 7)).toBe(7);
    expect(() =>
      m.timeStore('x', () => {
        throw new Error('locked');
      }),
    ).toThrow('locked');
    expect(metricValue(await m.registry.metrics(), 'warden_store_operation_seconds_count', { operation: 'x' })).toBe(2);
  });
});

describe('BoundedLabel', () => {
  it.each([
    ['a tool name', 'web_fetch', 'web_fetch'],
    ['a plugin tool', 'acme.deploy', 'acme.deploy'],
    ['a model id with its vendor', 'meta-llama/llama-3.1-70b', 'meta-llama/llama-3.1-70b'],
    ['a name with spaces (made up by the model)', 'rm -rf', 'other'],
    ['a name with quotes', 'x"}evil{', 'other'],
    ['an empty name', '', 'other'],
    ['a very long name', 'a'.repeat(65), 'other'],
  ])('%s → %s', (_name, raw, expected) => {
    expect(new BoundedLabel(10).value(raw)).toBe(expected);
  });

  it('past its limit new values are `other`, values seen before keep their own series', () => {
    const label = new BoundedLabel(2);
    expect([label.value('a'), label.value('b'), label.value('c'), label.value('a')]).toEqual(['a', 'b', 'other', 'a']);
  });
});

import { describe, expect, it } from 'vitest';
import { metricValue } from '../ops/testing.js';
import { ModelCallError, type ModelProvider } from './types.js';
import { timedModelProvider } from './timed.js';
import { WardenMetrics } from '../ops/metrics.js';

const provider = (complete: ModelProvider['complete']): ModelProvider => ({ name: 'acme', api: 'openai', complete });
const request = { model: 'm1', system: '', messages: [], tools: [] } as unknown as Parameters<ModelProvider['complete']>[0];

describe('timedModelProvider', () => {
  it.each<[string, () => Promise<never> | Promise<{ stopReason: 'end' }>, string]>([
    ['a reply', async () => ({ stopReason: 'end' }), 'ok'],
    ['a rate limit', async () => Promise.reject(new ModelCallError('rateLimited', 'slow down')), 'rateLimited'],
    ['a server error', async () => Promise.reject(new ModelCallError('server', '502')), 'server'],
    ['an unexpected throw', async () => Promise.reject(new TypeError('bug')), 'other'],
  ])('counts %s as outcome %s and times it', async (_name, behaviour, outcome) => {
    const m = new WardenMetrics();
    const timed = timedModelProvider(provider(behaviour as ModelProvider['complete']), m);
    expect(timed.name).toBe('acme');
    await timed.complete(request, new AbortController().signal).catch(() => undefined);
    const text = await m.registry.metrics();
    expect(metricValue(text, 'warden_model_requests_total', { provider: 'acme', model: 'm1', outcome })).toBe(1);
    expect(metricValue(text, 'warden_model_request_duration_seconds_count', { provider: 'acme', model: 'm1' })).toBe(1);
  });

  it('an aborted request is `aborted`, and the error still reaches the caller', async () => {
    const m = new WardenMetrics();
    const ac = new AbortController();
    ac.abort();
    const timed = timedModelProvider(provider(async () => Promise.reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))), m);
    await expect(timed.complete(request, ac.signal)).rejects.toThrow('aborted');
    expect(metricValue(await m.registry.metrics(), 'warden_model_requests_total', { outcome: 'aborted' })).toBe(1);
  });
});

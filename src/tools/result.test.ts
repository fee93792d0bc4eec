import { describe, expect, it } from 'vitest';
import {
  capDetails,
  DEFAULT_MAX_RESULT_CHARS,
  detailsLookLikeError,
  errorToolResult,
  MAX_DETAILS_BYTES,
  MIDDLE_OMISSION_MARKER,
  normalizeToolResult,
  truncateText,
  truncateToolResult,
} from './result.js';

describe('normalizeToolResult', () => {
  it.each([
    ['a result with content', { content: [{ type: 'text', text: 'hi' }], details: { n: 1 } }, { content: [{ type: 'text', text: 'hi' }], details: { n: 1 } }],
    ['nothing', undefined, { content: [{ type: 'text', text: '{\n  "status": "ok",\n  "tool": "t"\n}' }], details: { status: 'ok', tool: 't' } }],
    ['a string', 'plain', { content: [{ type: 'text', text: 'plain' }] }],
    ['an object', { a: 1 }, { content: [{ type: 'text', text: '{\n  "a": 1\n}' }], details: { a: 1 } }],
    ['invalid blocks', { content: [{ type: 'text', text: 'ok' }, { type: 'text' }, { type: 'video' }, null] }, { content: [{ type: 'text', text: 'ok' }] }],
    ['failing details', { content: [{ type: 'text', text: 'x' }], details: { exitCode: 2 } }, { content: [{ type: 'text', text: 'x' }], details: { exitCode: 2 }, isError: true }],
  ])('%s', (_label, value, expected) => {
    expect(normalizeToolResult('t', value)).toEqual(expected);
  });

  it('turns a thrown error into {status:"error", tool, error}', () => {
    const r = errorToolResult('read', new Error('ENOENT: no such file'));
    expect(r.isError).toBe(true);
    expect(r.details).toEqual({ status: 'error', tool: 'read', error: 'ENOENT: no such file' });
    expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual({ status: 'error', tool: 'read', error: 'ENOENT: no such file' });
  });

  it.each([
    [{ ok: false }, true],
    [{ success: false }, true],
    [{ status: 'Denied' }, true],
    [{ status: 'timed_out' }, true],
    [{ timedOut: true }, true],
    [{ error: 'x' }, true],
    [{ exitCode: 1 }, true],
    [{ exitCode: 0, status: 'completed' }, false],
    [{ status: 'ok' }, false],
    [[1, 2], false],
    ['error', false],
  ])('classifies %j as error: %s', (details, expected) => {
    expect(detailsLookLikeError(details)).toBe(expected);
  });
});

describe('truncation', () => {
  const lines = (n: number, word = 'line') => Array.from({ length: n }, (_, i) => `${word} ${i}`).join('\n');

  it('leaves results under the cap alone', () => {
    const r = { content: [{ type: 'text' as const, text: 'x'.repeat(DEFAULT_MAX_RESULT_CHARS) }] };
    expect(truncateToolResult(r)).toEqual({ result: r, truncated: false });
  });

  it('keeps the head and says how much was cut', () => {
    const text = lines(5000, 'row');
    const out = truncateText(text, 16_000);
    expect(out.length).toBeLessThanOrEqual(16_000);
    expect(out.startsWith('row 0\nrow 1\n')).toBe(true);
    expect(out).not.toContain(MIDDLE_OMISSION_MARKER);
    const cut = Number(/\[\.\.\. (\d+) more characters truncated; rerun with narrower args if needed\]$/.exec(out)?.[1]);
    const kept = out.slice(0, out.indexOf('\n\n[...'));
    expect(kept.length + cut).toBe(text.length);
  });

  it('keeps head and tail when the tail looks important', () => {
    const text = `${lines(5000, 'row')}\nERROR: disk full at step 4999`;
    const out = truncateText(text, 16_000);
    expect(out.length).toBeLessThanOrEqual(16_000);
    expect(out).toContain(MIDDLE_OMISSION_MARKER);
    expect(out).toContain('ERROR: disk full at step 4999');
    expect(out).toMatch(/more characters truncated; rerun with narrower args if needed\]$/);
  });

  it('shares the budget between text blocks by size and keeps images', () => {
    const r = {
      content: [
        { type: 'text' as const, text: 'a'.repeat(30_000) },
        { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' },
        { type: 'text' as const, text: 'b'.repeat(10_000) },
      ],
    };
    const { result, truncated } = truncateToolResult(r, 16_000);
    expect(truncated).toBe(true);
    const [a, img, b] = result.content as Array<{ type: string; text?: string }>;
    expect(img).toEqual(r.content[1]);
    expect(a!.text!.length).toBeLessThanOrEqual(12_000);
    expect(b!.text!.length).toBeLessThanOrEqual(4_000);
    expect(a!.text!.length + b!.text!.length).toBeLessThanOrEqual(16_000);
  });
});

describe('capDetails', () => {
  it('cuts long strings, redacts secret-looking keys and keeps the rest', () => {
    const out = capDetails({ output: 'x'.repeat(2500), env: { API_KEY: 'sk-1', token: 't', tokens: 3 }, n: 1 }) as Record<string, unknown>;
    expect((out.output as string).startsWith('x'.repeat(2000))).toBe(true);
    expect(out.output).toContain('[500 more characters]');
    expect(out.env).toEqual({ API_KEY: '[redacted]', token: '[redacted]', tokens: 3 });
    expect(out.n).toBe(1);
  });

  it('replaces details over 8 KiB with a bounded preview', () => {
    const big = { items: Array.from({ length: 50 }, (_, i) => ({ i, text: 'y'.repeat(1000) })) };
    const out = capDetails(big) as { truncated: boolean; originalBytes: number; preview: string };
    expect(out.truncated).toBe(true);
    expect(out.originalBytes).toBeGreaterThan(MAX_DETAILS_BYTES);
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(MAX_DETAILS_BYTES);
  });

  it('survives cycles', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(capDetails(a)).toEqual({ name: 'a', self: '[circular or too deep]' });
  });
});

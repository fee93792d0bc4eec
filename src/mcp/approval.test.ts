import { describe, expect, it } from 'vitest';
import { approvalDecision, approvalRequest } from './approval.js';
import type { McpAnnotations } from './catalog.js';

describe('whether an MCP call asks for approval', () => {
  const auto = { mode: 'auto' as const, source: 'default' };
  it.each<[string, McpAnnotations, boolean]>([
    ['destructive', { destructiveHint: true }, true],
    ['destructive even if also marked read-only (the destructive claim wins)', { destructiveHint: true, readOnlyHint: true }, true],
    ['read-only', { readOnlyHint: true }, false],
    ['non-destructive and closed-world', { destructiveHint: false, openWorldHint: false }, false],
    ['non-destructive but open-world', { destructiveHint: false }, true],
    ['unannotated (the spec defaults: destructive, open-world)', {}, true],
    ['only idempotent', { idempotentHint: true }, true],
  ])('auto: %s', (_name, annotations, ask) => {
    expect(approvalDecision(annotations, auto).ask).toBe(ask);
  });

  it.each<[McpAnnotations, 'always' | 'never', boolean]>([
    [{ readOnlyHint: true }, 'always', true],
    [{ destructiveHint: true }, 'never', false],
  ])('%j under %s: the operator setting beats the server\'s claims', (annotations, mode, ask) => {
    const d = approvalDecision(annotations, { mode, source: 'mcp.servers.gh.approval' });
    expect(d).toEqual({ ask, why: `mcp.servers.gh.approval = ${mode}: ${ask ? 'every call asks' : 'no call asks'}` });
  });

  it('the card names the server, its transport, the annotations and why it asks', () => {
    const annotations = { destructiveHint: true };
    const req = approvalRequest({ id: 'gh__delete_repo', server: 'gh', tool: 'delete_repo', transport: 'stdio', annotations }, approvalDecision(annotations, auto));
    expect(req).toEqual({
      title: 'MCP tool gh__delete_repo',
      description: 'Call delete_repo on MCP server gh.',
      severity: 'critical',
      facts: [
        { label: 'MCP server', value: 'gh (stdio)' },
        { label: 'Annotations', value: 'destructiveHint: true' },
        { label: 'Why asked', value: 'approval: auto (the default): the server marks the tool destructive (destructiveHint: true)' },
      ],
    });
  });
});

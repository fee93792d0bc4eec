import * as z from 'zod';

/**
 * The node protocol: JSON frames over one WebSocket. A new node asks to pair (`pair`) and waits
 * for an owner; a paired node says `hello` with its token. The gateway then sends `call`s; the
 * node answers each with a `result`, after asking for an `approval` when its own exec policy
 * wants a human.
 */
export const NODE_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const NODE_COMMANDS = ['system.run', 'system.which', 'system.notify'] as const;
export type NodeCommand = (typeof NODE_COMMANDS)[number];

const skill = z.strictObject({ name: z.string().min(1).max(64), description: z.string().max(1024).default('') });

export const nodeFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('pair'), name: z.string().regex(NODE_NAME), platform: z.string().max(64).optional() }),
  z.strictObject({ type: z.literal('hello'), name: z.string().regex(NODE_NAME), token: z.string().min(1).max(256), platform: z.string().max(64).optional(), skills: z.array(skill).max(200).default([]) }),
  z.strictObject({ type: z.literal('result'), id: z.string().min(1), result: z.strictObject({ content: z.array(z.unknown()), details: z.unknown().optional(), isError: z.boolean().optional() }) }),
  z.strictObject({
    type: z.literal('approval'),
    /** The relay's own id; the decision answers it. */
    id: z.string().min(1),
    /** The call this approval belongs to. */
    callId: z.string().min(1),
    request: z.object({
      kind: z.enum(['exec', 'tool']),
      tool: z.string(),
      title: z.string().max(500),
      preview: z.string().max(5000),
      fullText: z.string().max(200_000),
      facts: z.array(z.object({ label: z.string(), value: z.string() })).max(30).optional(),
      allowedDecisions: z.array(z.enum(['allow-once', 'allow-always', 'deny'])).optional(),
      timeoutMs: z.number().int().positive().optional(),
    }),
  }),
]);
export type NodeFrame = z.infer<typeof nodeFrame>;

export type GatewayFrame =
  | { type: 'pairing'; code: string; expiresAt: number }
  | { type: 'paired'; name: string; token: string }
  | { type: 'welcome'; name: string }
  | { type: 'refused'; reason: string }
  | { type: 'revoked'; reason: string }
  | { type: 'call'; id: string; command: NodeCommand; args: Record<string, unknown> }
  | { type: 'decision'; id: string; outcome: string; decidedBy?: string | undefined };

/** WebSocket close codes the node reads as "do not reconnect". */
export const CLOSE_REFUSED = 4401;
export const CLOSE_REVOKED = 4403;

// The scripted model of the approval end-to-end tests (Discord, Slack, the web chat).
import type { FakeReply, FakeRequest } from '../fakes/models/server.js';

/** The command the model asks for: not on any allowlist (the redirection alone makes it ask). */
export const COMMAND = 'ls -1 && echo run >> runs.log';
export const LIST_REQUEST = 'please list the files here';

export const messagesOf = (r: FakeRequest) => r.body.messages as Array<{ role: string; content: unknown; tool_calls?: unknown[] }>;
export const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));
export const lastUserText = (r: FakeRequest) => textOf(messagesOf(r).filter((m) => m.role === 'user').at(-1)?.content);

/**
 * The scripted model: asked to list the files it calls exec; told the call is pending it says
 * so and stops; handed the approval's outcome it finishes with what the output showed.
 */
export function respond(r: FakeRequest): FakeReply {
  const last = messagesOf(r).at(-1)!;
  if (last.role === 'tool') {
    return textOf(last.content).includes('pending approval')
      ? { kind: 'reply', text: 'The listing waits for an approval; I will finish once someone decides.' }
      : { kind: 'reply', text: `Listed right away: ${textOf(last.content).includes('notes.md') ? 'notes.md is there' : 'nothing'}.` };
  }
  const text = lastUserText(r);
  if (text.includes('[Approval ')) {
    return { kind: 'reply', text: text.includes('has now been run') && text.includes('notes.md') ? 'Done: the workspace holds notes.md and plan.txt.' : 'It did not run, so I cannot list the files.' };
  }
  if (text.includes('ping')) return { kind: 'reply', text: 'pong' };
  if (text.includes(LIST_REQUEST)) return { kind: 'reply', toolCalls: [{ name: 'exec', args: { command: COMMAND } }] };
  return { kind: 'reply', text: 'ok' };
}


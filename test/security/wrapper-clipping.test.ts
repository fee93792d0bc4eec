import { describe, expect, it } from 'vitest';
import { renderForSummary } from '../../src/agent/compaction.js';
import { pruneToolResults, truncateText } from '../../src/agent/context-budget.js';
import type { Message, ToolResultMessage } from '../../src/models/types.js';
import { sliceWrapped, wrapUntrusted } from '../../src/tools/untrusted.js';

/**
 * Attack class: a clip (a summary's input line, an older tool result pruned to head and tail, a
 * capped result, a chunk) cuts an untrusted block in half. Left as cut, the head leaves the block
 * open (whatever follows reads as the block's, or the block never ends), the tail starts with
 * untrusted text outside any block and a closing tag that seems to end one early, and a cut
 * through a tag leaves a half tag. Every clip keeps blocks whole: re-opened, re-closed, or left out.
 */

/** Checks that tags alternate open/close with the same nonce and returns the text outside and inside blocks. */
function structure(text: string): { outside: string; inside: string } {
  const tag = /<untrusted-([0-9a-f]{32}) source="[^"\r\n]*">\n|\n<\/untrusted-([0-9a-f]{32})>/g;
  let open: string | null = null;
  let at = 0;
  let outside = '';
  let inside = '';
  for (const m of text.matchAll(tag)) {
    const piece = text.slice(at, m.index);
    if (open === null) outside += piece;
    else inside += piece;
    if (m[1] !== undefined) {
      expect(open, `an opening tag inside an open block in ${JSON.stringify(text)}`).toBeNull();
      open = m[1];
    } else {
      expect(open, `a closing tag with no open block in ${JSON.stringify(text)}`).toBe(m[2]);
      open = null;
    }
    at = m.index + m[0].length;
  }
  expect(open, `a block left open in ${JSON.stringify(text)}`).toBeNull();
  outside += text.slice(at);
  // No half tag: nothing outside a block starts an untrusted tag.
  expect(outside).not.toMatch(/<\/?untrusted-|untrusted-[0-9a-f]{6,}/);
  return { outside, inside };
}

// Untrusted bodies are `#`, Warden's own text is `.`: a clip may drop either, never move one to the other's side.
const BODY = '#'.repeat(300);
const COMPOSITE = `${'.'.repeat(40)}${wrapUntrusted('web:https://example.com/' + 'p'.repeat(120), BODY)}${'.'.repeat(25)}${wrapUntrusted('tool:exec', '#'.repeat(90))}${'.'.repeat(10)}`;
const UNTERMINATED = `${'.'.repeat(20)}${wrapUntrusted('file:a', BODY).replace(/\n<\/untrusted-[0-9a-f]{32}>$/, '')}`;

describe('sliceWrapped never leaves half a block', () => {
  const cases: Array<[string, string]> = [['two blocks and text', COMPOSITE], ['a block never closed', UNTERMINATED]];
  it.each(cases)('%s: every cut [a, b) on a grid', (_name, text) => {
    const step = 7;
    for (let a = 0; a <= text.length; a += step) {
      for (let b = a; b <= text.length + step; b += step) {
        const { outside, inside } = structure(sliceWrapped(text, a, b));
        expect(outside).not.toContain('#');
        expect(inside).not.toContain('.');
      }
    }
  });
  it('a slice that cuts nothing is the text itself', () => {
    expect(sliceWrapped(COMPOSITE, 0)).toBe(COMPOSITE);
    expect(sliceWrapped('plain', 1, 3)).toBe('la');
  });
});

describe('the clips Warden makes', () => {
  const wrappedBig = wrapUntrusted('tool:read', `${'#'.repeat(9_000)}\nerror: done`);
  it.each([1_000, 2_000, 5_000, 8_999])('truncateText at %i keeps the block whole (head and tail)', (max) => {
    structure(truncateText(wrappedBig, max));
    structure(truncateText(wrapUntrusted('tool:read', '#'.repeat(9_000)), max));
  });

  it('pruning an older tool result to head and tail re-opens and re-closes it', () => {
    const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: wrappedBig }], isError: false };
    const assistant: Message = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] };
    const user: Message = { role: 'user', content: [{ type: 'text', text: 'go' }] };
    const pruned = pruneToolResults([user, result, assistant, user, assistant, user, assistant, user, assistant], 4_000, 10_000);
    const text = (pruned[1] as ToolResultMessage).content.map((p) => (p.type === 'text' ? p.text : '')).join('');
    expect(text).toContain('characters of an older tool result pruned');
    const { outside } = structure(text);
    expect(outside).not.toContain('#');
  });

  it.each<[string, Message]>([
    ['a tool result', { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: wrappedBig }], isError: false }],
    ['another user\'s long message', { role: 'user', content: [{ type: 'text', text: wrapUntrusted('user:u2 (mallory)', '#'.repeat(5_000)) }] }],
    ['a source attribute longer than the clip', { role: 'user', content: [{ type: 'text', text: wrapUntrusted(`web:https://x.io/${'a'.repeat(2_500)}`, '#'.repeat(100)) }] }],
  ])('a summary input line of %s keeps the block whole', (_name, message) => {
    const { outside } = structure(renderForSummary(message));
    expect(outside).not.toContain('#');
  });
});

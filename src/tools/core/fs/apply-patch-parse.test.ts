import { describe, expect, it } from 'vitest';
import { parsePatch } from './apply-patch-parse.js';

const env = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

describe('parsePatch', () => {
  it('parses add, delete and update with move, context and end-of-file', () => {
    const r = parsePatch(
      env(
        '*** Add File: docs/new.md',
        '+# Title',
        '+',
        '+body',
        '*** Delete File: old.txt',
        '*** Update File: src/a.ts',
        '*** Move to: src/b.ts',
        '@@ function main() {',
        ' keep',
        '-old',
        '+new',
        '',
        '@@',
        '-last',
        '+final',
        '*** End of File',
      ),
    );
    expect(r).toEqual({
      ok: true,
      hunks: [
        { type: 'add', path: 'docs/new.md', contents: '# Title\n\nbody\n' },
        { type: 'delete', path: 'old.txt' },
        {
          type: 'update',
          path: 'src/a.ts',
          moveTo: 'src/b.ts',
          chunks: [
            { changeContext: 'function main() {', oldLines: ['keep', 'old', ''], newLines: ['keep', 'new', ''], isEndOfFile: false },
            { changeContext: undefined, oldLines: ['last'], newLines: ['final'], isEndOfFile: true },
          ],
        },
      ],
    });
  });

  it('lets the first change omit its @@ line', () => {
    const r = parsePatch(env('*** Update File: a', '-x', '+y'));
    expect(r.ok && r.hunks[0]).toMatchObject({ chunks: [{ changeContext: undefined, oldLines: ['x'], newLines: ['y'] }] });
  });

  it.each([
    ["<<'EOF'", 'EOF'],
    ['<<EOF', 'EOF'],
    ['<<"PATCH"', 'PATCH'],
  ])('tolerates a heredoc wrapper %s', (open, close) => {
    const r = parsePatch([open, env('*** Delete File: a'), close].join('\n'));
    expect(r).toEqual({ ok: true, hunks: [{ type: 'delete', path: 'a' }] });
  });

  it('accepts CRLF input, surrounding whitespace and indented headers', () => {
    const r = parsePatch(`\n  ${env('  *** Delete File: a')}\n\n`.replace(/\n/g, '\r\n'));
    expect(r).toEqual({ ok: true, hunks: [{ type: 'delete', path: 'a' }] });
  });

  it('returns no hunks for an empty envelope', () => {
    expect(parsePatch(env())).toEqual({ ok: true, hunks: [] });
  });

  it.each([
    ['', /input is empty/],
    ['*** Delete File: a\n*** End Patch', /line 1\): the first line must be '\*\*\* Begin Patch'/],
    ['*** Begin Patch\n*** Delete File: a', /line 2\): the last line must be '\*\*\* End Patch'/],
    [env('*** Frobnicate File: a'), /line 2\): '\*\*\* Frobnicate File: a' is not a valid hunk header/],
    [env('*** Update File: a'), /line 2\): update hunk for 'a' has no changes/],
    [env('*** Update File: a', '@@', 'oops'), /line 4\): unexpected line in update hunk: 'oops'/],
    [env('*** Update File: a', '-x', 'garbage'), /line 4\): expected an '@@' line to start the next change/],
    [env('*** Update File: a', '@@', '*** End of File'), /line 4\): change has no lines/],
    [env('*** Add File:   '), /line 2\): missing file path/],
  ])('rejects %j', (input, message) => {
    const r = parsePatch(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });
});

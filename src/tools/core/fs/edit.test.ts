import { link, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectEdits, editTool } from './edit.js';
import { makeTempWorkspace, run, textOf, type TempWorkspace } from './test-support.js';

let t: TempWorkspace;
beforeAll(async () => {
  t = await makeTempWorkspace();
  await writeFile(path.join(t.outside, 'secret.txt'), 'token = abc\n');
  await symlink(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'link-out'));
  await link(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'hard'));
  await writeFile(path.join(t.ws, 'blob.bin'), Buffer.from([0, 1, 2]));
});
afterAll(() => t.cleanup());

describe('edit', () => {
  it('replaces a unique match in place', async () => {
    await writeFile(path.join(t.ws, 'app.ts'), 'let x = 1;\nlet y = 2;\n');
    const r = await run(editTool, { path: 'app.ts', edits: [{ oldText: 'let y = 2;', newText: 'let y = 3;' }] }, t.ws);
    expect(textOf(r)).toBe('Successfully replaced 1 occurrence in app.ts (first change at line 2).');
    expect(await readFile(path.join(t.ws, 'app.ts'), 'utf8')).toBe('let x = 1;\nlet y = 3;\n');
  });

  it('accepts the legacy top-level oldText/newText', async () => {
    await writeFile(path.join(t.ws, 'legacy.txt'), 'a b a\n');
    const r = await run(editTool, { path: 'legacy.txt', oldText: 'a', newText: 'c', replaceAll: true }, t.ws);
    expect(textOf(r)).toMatch(/replaced 2 occurrences/);
    expect(await readFile(path.join(t.ws, 'legacy.txt'), 'utf8')).toBe('c b c\n');
  });

  it('leaves the file untouched on 0 and on 2 matches', async () => {
    await writeFile(path.join(t.ws, 'dup.txt'), 'same\nsame\n');
    const none = await run(editTool, { path: 'dup.txt', edits: [{ oldText: 'other', newText: 'x' }] }, t.ws);
    const many = await run(editTool, { path: 'dup.txt', edits: [{ oldText: 'same', newText: 'x' }] }, t.ws);
    expect(none.isError && textOf(none)).toMatch(/Could not find oldText in dup\.txt/);
    expect(many.isError && textOf(many)).toMatch(/Found 2 occurrences of oldText in dup\.txt \(lines 1, 2\)/);
    expect(await readFile(path.join(t.ws, 'dup.txt'), 'utf8')).toBe('same\nsame\n');
  });

  it.each([
    ['link-out', /Symlink escapes/],
    ['hard', /hard link/],
    ['../outside/secret.txt', /Path escapes/],
    ['blob.bin', /not a text file/],
    ['missing.txt', /File not found/],
  ])('%s → refused', async (p, message) => {
    const r = await run(editTool, { path: p, edits: [{ oldText: 'abc', newText: 'pwned' }] }, t.ws);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(message);
    expect(await readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('token = abc\n');
  });

  it.each([
    [{ path: 'a' }, /nothing to do/],
    [{ path: 'a', oldText: 'x' }, /must be given together/],
    [{ path: 'a', edits: 'not json' }, /must be an array/],
    [{ path: 'a', edits: '[{"oldText":"x","newText":"y"}]' }, [{ oldText: 'x', newText: 'y' }]],
  ])('collectEdits %j', (args, expected) => {
    const r = collectEdits(args);
    if (expected instanceof RegExp) expect(r).toMatch(expected);
    else expect(r).toEqual(expected);
  });
});

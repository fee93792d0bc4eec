import { link, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyPatchTool, createApplyPatchTool } from './apply-patch.js';
import { makeTempWorkspace, run, textOf, type TempWorkspace } from './test-support.js';
import { guardError } from './workspace.js';
import { writeAtomic } from './workspace-io.js';

let t: TempWorkspace;
const env = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');
const read = (p: string) => readFile(path.join(t.ws, p), 'utf8');

/** Every file under the workspace with its content (symlinks as `-> target`). */
async function snapshot(dir = t.ws): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const rel = path.relative(dir, full);
    if (entry.isSymbolicLink()) out[rel] = `-> ${await readlink(full)}`;
    else if (entry.isFile()) out[rel] = await readFile(full, 'utf8');
  }
  return out;
}

beforeEach(async () => {
  t = await makeTempWorkspace();
  await mkdir(path.join(t.ws, 'src'));
  await writeFile(path.join(t.ws, 'src', 'a.ts'), 'export const a = 1;\nexport const b = 2;\n');
  await writeFile(path.join(t.ws, 'src', 'c.ts'), 'import { a } from "./a";\nconsole.log(a);\n');
  await writeFile(path.join(t.ws, 'obsolete.txt'), 'bye\n');
  await writeFile(path.join(t.outside, 'secret.txt'), 'secret\n');
});
afterEach(() => t.cleanup());

describe('apply_patch', () => {
  it('applies add, update, move and delete across files', async () => {
    const r = await run(
      applyPatchTool,
      {
        input: env(
          '*** Add File: docs/README.md',
          '+# Docs',
          '*** Update File: src/a.ts',
          '@@',
          ' export const a = 1;',
          '-export const b = 2;',
          '+export const b = 3;',
          '*** Update File: src/c.ts',
          '*** Move to: src/main.ts',
          '-console.log(a);',
          '+console.log(a + 1);',
          '*** Delete File: obsolete.txt',
        ),
      },
      t.ws,
    );
    expect(textOf(r)).toBe('Success. Updated the following files:\nA docs/README.md\nM src/a.ts\nM src/main.ts\nD obsolete.txt');
    expect(await snapshot()).toEqual({
      'docs/README.md': '# Docs\n',
      'src/a.ts': 'export const a = 1;\nexport const b = 3;\n',
      'src/main.ts': 'import { a } from "./a";\nconsole.log(a + 1);\n',
    });
  });

  it('a failing hunk leaves every file untouched and lists every problem', async () => {
    const before = await snapshot();
    const r = await run(
      applyPatchTool,
      {
        input: env(
          '*** Add File: new.txt',
          '+new',
          '*** Update File: src/a.ts',
          '-export const b = 2;',
          '+export const b = 3;',
          '*** Update File: src/c.ts',
          '-this line is not there',
          '+x',
          '*** Delete File: missing.txt',
        ),
      },
      t.ws,
    );
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe(
      'Patch rejected:\n- Failed to find expected lines in src/c.ts:\nthis line is not there\n- missing.txt: file to delete does not exist\nNo files were modified.',
    );
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['../outside/evil.txt', 'Add'],
    ['/etc/evil.txt', 'Add'],
    ['link-out', 'Add'],
    ['dir-out/evil.txt', 'Add'],
    ['hard', 'Update'],
    ['link-out', 'Update'],
    ['../outside/secret.txt', 'Delete'],
    ['dir-out/secret.txt', 'Delete'],
  ])('refuses %s in an %s section and changes nothing', async (target, kind) => {
    await symlink(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'link-out'));
    await symlink(t.outside, path.join(t.ws, 'dir-out'));
    await link(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'hard'));
    const before = await snapshot();
    const section =
      kind === 'Add' ? [`*** Add File: ${target}`, '+pwned'] : kind === 'Update' ? [`*** Update File: ${target}`, '-secret', '+pwned'] : [`*** Delete File: ${target}`];
    const r = await run(applyPatchTool, { input: env('*** Add File: innocent.txt', '+ok', ...section) }, t.ws);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/escapes the workspace|hard link/);
    expect(textOf(r)).toMatch(/No files were modified\.$/);
    expect(await snapshot()).toEqual(before);
    expect(await snapshot(t.outside)).toEqual({ 'secret.txt': 'secret\n' });
  });

  it('refuses a Move target outside the workspace', async () => {
    const r = await run(applyPatchTool, { input: env('*** Update File: src/a.ts', '*** Move to: ../outside/a.ts', '-export const b = 2;', '+x') }, t.ws);
    expect(textOf(r)).toMatch(/\.\.\/outside\/a\.ts: Path escapes the workspace/);
    expect(await snapshot(t.outside)).toEqual({ 'secret.txt': 'secret\n' });
  });

  it('deletes a symlink leading out without touching its target', async () => {
    await symlink(path.join(t.outside, 'secret.txt'), path.join(t.ws, 'link-out'));
    const r = await run(applyPatchTool, { input: env('*** Delete File: link-out') }, t.ws);
    expect(textOf(r)).toBe('Success. Updated the following files:\nD link-out');
    expect(await snapshot(t.outside)).toEqual({ 'secret.txt': 'secret\n' });
  });

  it.each([
    [env('*** Update File: src/a.ts', '-export const a = 1;', '+x', '*** Update File: src/a.ts', '-export const b = 2;', '+y'), /src\/a\.ts: changed by more than one section/],
    [env('*** Add File: x', '+file', '*** Add File: x/y.txt', '+nested'), /x\/y\.txt: lies inside x/],
    [env('*** Update File: src', '-a', '+b'), /src: src is a directory/],
    [env(), /no file sections/],
    ['not a patch', /first line must be/],
  ])('rejects conflicting or malformed patches: %#', async (input, message) => {
    const before = await snapshot();
    const r = await run(applyPatchTool, { input }, t.ws);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(message);
    expect(await snapshot()).toEqual(before);
  });

  it('rolls back files already written when the disk fails half-way', async () => {
    const before = await snapshot();
    const failing = createApplyPatchTool({
      write: (target, data) => (target.rel === 'src/c.ts' ? Promise.resolve(guardError('invalid-path', 'cannot open src/c.ts: EIO')) : writeAtomic(target, data)),
    });
    const r = await run(
      failing,
      {
        input: env(
          '*** Add File: brand-new.txt',
          '+new',
          '*** Update File: src/a.ts',
          '-export const b = 2;',
          '+export const b = 3;',
          '*** Update File: src/c.ts',
          '-console.log(a);',
          '+console.log(0);',
          '*** Delete File: obsolete.txt',
        ),
      },
      t.ws,
    );
    expect(textOf(r)).toBe('Patch failed at src/c.ts: cannot open src/c.ts: EIO\nFiles already changed were restored; no files were modified.');
    expect(await snapshot()).toEqual(before);
  });
});

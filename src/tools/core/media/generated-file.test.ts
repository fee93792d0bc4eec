import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempWorkspace, type TempWorkspace } from '../fs/test-support.js';
import { generatedName, saveGenerated } from './generated-file.js';

describe('generatedName', () => {
  const cases: Array<[string, string, Date, string, string]> = [
    ['image', 'png', new Date('2026-03-04T05:06:07.890Z'), 'a1b2c3', 'generated/image-20260304-050607-a1b2c3.png'],
    ['speech', 'mp3', new Date('2026-12-31T23:59:59.000Z'), '000000', 'generated/speech-20261231-235959-000000.mp3'],
  ];
  it.each(cases)('%s.%s at %s', (prefix, ext, now, random, expected) => {
    expect(generatedName(prefix, ext, now, random)).toBe(expected);
  });
});

describe('saveGenerated', () => {
  let tmp: TempWorkspace;
  beforeEach(async () => {
    tmp = await makeTempWorkspace();
  });
  afterEach(() => tmp.cleanup());

  it('creates generated/ and a workspace that does not exist yet', async () => {
    const ws = path.join(tmp.base, 'fresh');
    const saved = await saveGenerated(ws, 'image', 'png', Buffer.from('x'));
    expect(saved.ok && (await readFile(path.join(ws, saved.rel), 'utf8'))).toBe('x');
  });

  it('refuses when generated is a file, not a directory', async () => {
    await writeFile(path.join(tmp.ws, 'generated'), 'not a dir');
    const saved = await saveGenerated(tmp.ws, 'image', 'png', Buffer.from('x'));
    expect(saved.ok).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { relatedWords } from './related-words.js';
import { WORDNET_RELATED } from './wordnet.js';
import { stem, STOP } from './text.js';

const related = (word: string) => new Map(relatedWords(stem(word)));

describe('general English word relations (wordnet.ts, generated from WordNet)', () => {
  it('every line is a stemmed word and its related words, each with a weight of 1 to 9 tenths', () => {
    const lines = WORDNET_RELATED.split('\n');
    expect(lines.length).toBeGreaterThan(5_000);
    const keys = new Set<string>();
    for (const line of lines) {
      const [key, ...rest] = line.split(' ');
      expect(key).toMatch(/^[a-z]+$/);
      expect(keys.has(key!)).toBe(false);
      keys.add(key!);
      expect(rest.length).toBeGreaterThan(0);
      expect(rest.length).toBeLessThanOrEqual(10);
      for (const r of rest) expect(r).toMatch(/^[a-z]+[1-9]$/);
    }
  });

  it('stays compact (it is loaded with the ranker)', () => {
    expect(WORDNET_RELATED.length).toBeLessThan(700_000);
  });

  // Known relations: a synonym, a derived form, a sense that is not the commonest weighing less.
  it.each([
    ['bill', 'invoice'],
    ['deploy', 'deployment'],
    ['error', 'mistake'],
    ['schedule', 'agenda'],
    ['alert', 'warn'],
  ])('%s relates to %s', (word, to) => {
    expect(related(word).get(stem(to))).toBeGreaterThan(0);
  });

  it('relations are weights in (0, 1], heaviest first, never to the word itself or a stop word', () => {
    for (const word of ['bill', 'copy', 'meeting', 'change', 'payment']) {
      const row = relatedWords(stem(word));
      expect(row.length).toBeGreaterThan(0);
      for (let k = 0; k < row.length; k++) {
        const [t, w] = row[k]!;
        expect(w).toBeGreaterThan(0);
        expect(w).toBeLessThanOrEqual(1);
        if (k > 0) expect(w).toBeLessThanOrEqual(row[k - 1]![1]);
        expect(t).not.toBe(stem(word));
        expect(STOP.has(t)).toBe(false);
      }
    }
  });

  it('a derived form of the same sense weighs more than a rarer sense of the word', () => {
    expect(related('deploy').get(stem('deployment'))!).toBeGreaterThan(related('bill').get(stem('invoice'))!);
  });

  it('words it does not know, and the top of the hierarchy, give nothing', () => {
    expect(relatedWords('xyzzy')).toEqual([]);
    for (const word of ['bill', 'copy', 'deploy', 'meeting']) for (const general of ['entity', 'abstraction', 'act', 'object']) expect(related(word).has(general)).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { convert, hasMarkup, toMrkdwn } from './mrkdwn.js';

describe('toMrkdwn: the model\'s Markdown as Slack reads it', () => {
  const table: Array<[string, string, string]> = [
    ['bold', 'this is **important**', 'this is *important*'],
    ['bold with underscores', 'this is __important__', 'this is *important*'],
    ['italic', 'an *aside* here', 'an _aside_ here'],
    ['bold italic', '***both***', '*_both_*'],
    ['strike', '~~gone~~', '~gone~'],
    ['a link', 'see [the docs](https://example.com/a?b=1&c=2)', 'see <https://example.com/a?b=1&amp;c=2|the docs>'],
    ['an autolink', '<https://example.com>', '<https://example.com|https://example.com>'],
    ['a link label with a pipe', '[a|b](https://x.test)', '<https://x.test|a¦b>'],
    ['a javascript: link is text', '[click](javascript:alert(1))', '[click](javascript:alert(1))'],
    ['a link whose URL would end the tag early', '[x](https://x.test/a>b)', '<https://x.test/a%3Eb|x>'],
    ['a heading', '## Deploy status', '*Deploy status*'],
    ['a heading with bold inside', '# **Big** news', '*Big news*'],
    ['bullets', '- one\n* two\n  - nested', '• one\n• two\n    • nested'],
    ['a task list', '- [x] done\n- [ ] todo', '• ☑ done\n• ☐ todo'],
    ['numbered lists stay', '1. first\n2. second', '1. first\n2. second'],
    ['inline code is not formatted', 'run `a **b** <c>`', 'run `a **b** &lt;c&gt;`'],
    ['a fenced block loses its language, keeps its text', '```ts\nconst a = b ** 2 < 3;\n```', '```\nconst a = b ** 2 &lt; 3;\n```'],
    ['an unclosed fence (mid-stream) stays open', '```\npartial **x**', '```\npartial **x**'],
    ['a quote', '> careful', '&gt; careful'],
    ['special characters are escaped', 'a < b && c > d', 'a &lt; b &amp;&amp; c &gt; d'],
    ['a broadcast mention is defused', 'hey <!channel> and <!here>', 'hey &lt;!channel&gt; and &lt;!here&gt;'],
    ['a user mention passes', 'thanks <@U0000ALICE>', 'thanks <@U0000ALICE>'],
    ['an unmatched star stays', '2 * 3 = 6', '2 * 3 = 6'],
    ['snake_case is not italic', 'my_var_name', 'my_var_name'],
    ['a rule', '---', '──────────'],
  ];
  it.each(table)('%s', (_name, input, expected) => {
    expect(toMrkdwn(input)).toBe(expected);
  });

  it('a table becomes an aligned code block', () => {
    const md = ['| Service | Status |', '| --- | :---: |', '| api | **up** |', '| web-frontend | down |'].join('\n');
    expect(toMrkdwn(`Here:\n${md}\nDone.`)).toBe(
      ['Here:', '```', 'Service      | Status', '-------------+-------', 'api          | up', 'web-frontend | down', '```', 'Done.'].join('\n'),
    );
  });

  it('text without markup is returned as is, exactly as the whole conversion returns it', () => {
    // Seeded, so a failure repeats: strings of every character no rule reacts to (letters,
    // digits, spaces, tabs, line ends, punctuation, emoji, a numbered list).
    const plain = ['a', 'Z', '0', '9', ' ', '  ', '\t', '\n', '.', ',', '!', '?', ':', ';', '"', "'", '(', ')', ']', '/', '=', '%', '@', '$', '^', '{', '}', 'é', '→', '🙂', '1. '];
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n);
    for (let i = 0; i < 500; i++) {
      let text = '';
      for (let n = rand(40); n > 0; n--) text += plain[rand(plain.length)];
      expect(toMrkdwn(text)).toBe(text);
      expect(convert(text)).toBe(text);
    }
  });

  it('the fast path agrees with the whole conversion on text dense with markup characters', () => {
    // Seeded: strings mixing every character a rule reacts to with blanks, line ends, Unicode
    // spaces and letters, so markers land at line starts, mid-line, doubled and alone.
    const parts = ['-', '_', '+', '#', '~', '*', '`', '>', '<', '&', '|', '[', ']', '(', ')', '\r', '\n', ' ', '  ', '\t', '\u00a0', '\u2003', '\v', 'a', 'b1', 'http://x.y', '@', 'é', '1. ', '\u0000', '\u0001'];
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n);
    for (let i = 0; i < 5_000; i++) {
      let text = '';
      for (let n = 1 + rand(24); n > 0; n--) text += parts[rand(parts.length)];
      expect(toMrkdwn(text), JSON.stringify(text)).toBe(convert(text));
    }
  });

  it('says which text has markup: a marker at a line start, doubled, or anywhere for the rest', () => {
    const cases: Array<[string, boolean]> = [
      ['re-run the file_name job, 3+4 = 7 # not a heading', false],
      ['s-warden-burst-4-12', false],
      ['a ~ b and c _ d', false],
      ['line one\nline-two', false],
      ['- item', true],
      ['  + item', true],
      ['text\n\t# heading', true],
      ['___', true],
      ['_ _ _', true],
      ['a ~~strike~~', true],
      ['a __strong__', true],
      ['\u00a0- item after a Unicode space', true],
      ['é at the start is taken as unsure', true],
      ['mid-line é is plain', false],
      ['*', true],
      ['a > b', true],
      ['a & b', true],
      ['a | b', true],
      ['[x]', true],
      ['`x`', true],
      ['a\r\nb', true],
    ];
    for (const [text, expected] of cases) {
      expect(hasMarkup(text), JSON.stringify(text)).toBe(expected);
      // "No markup" is only right where the whole conversion leaves the text as it is.
      if (!expected) expect(convert(text)).toBe(text);
    }
    expect(convert('_ _ _')).not.toBe('_ _ _');
  });

  it('any markup character takes the whole conversion', () => {
    for (const c of ['\r', '`', '~', '#', '*', '+', '-', '_', '>', '<', '&', '|', '[', '\u0000', '\u0001']) {
      const text = `a ${c}${c}x${c}${c} b\n${c} c`;
      expect(toMrkdwn(text)).toBe(convert(text));
    }
  });
});

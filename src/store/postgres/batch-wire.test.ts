import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { encodeBatch, type WireMessage } from './batch-wire.js';

/** What pg's own connection writes for the same messages, one write per message. */
function pgWrites(messages: readonly WireMessage[]): Buffer {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  const Connection = (pg as unknown as { Connection: new (config: { stream: Writable }) => PgConnection }).Connection;
  const connection = new Connection({ stream });
  for (const m of messages) {
    if (m.parse) connection.parse({ text: m.text, name: m.name });
    connection.bind({ statement: m.name, values: m.values });
    if (m.describe) connection.describe({ type: 'P', name: '' });
    connection.execute({ portal: '' });
  }
  connection.sync();
  return Buffer.concat(chunks);
}

interface PgConnection {
  parse(config: { text: string; name?: string | undefined }): void;
  bind(config: { statement?: string | undefined; values: readonly unknown[] }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: { portal: string }): void;
  sync(): void;
}

const m = (over: Partial<WireMessage>): WireMessage => ({ name: 'w1', text: 'SELECT $1::text', values: ['a'], parse: false, describe: false, ...over });

describe('a batch on the wire', () => {
  const cases: Array<[string, WireMessage[]]> = [
    ['a prepared statement, columns known', [m({})]],
    ['a first run: Parse and Describe', [m({ parse: true, describe: true })]],
    ['the unnamed statement', [m({ name: undefined, parse: true, describe: true })]],
    ['no parameters', [m({ text: 'SELECT 1', values: [] })]],
    ['NULL, empty text, numbers as text', [m({ text: 'SELECT $1, $2, $3', values: [null, '', '42'] })]],
    ['bytes go as binary', [m({ text: 'SELECT $1::bytea, $2', values: [Buffer.from([0, 1, 2, 255]), 'x'] })]],
    ['empty bytes', [m({ values: [Buffer.alloc(0)] })]],
    ['multibyte text and names', [m({ name: 'wé', text: "SELECT 'ü' || $1", values: ['日本語 🎉'], parse: true })]],
    ['a lone surrogate, as UTF-8 writes it', [m({ values: ['a\uD800b'] })]],
    ['a long value', [m({ values: ['x'.repeat(100_000)] })]],
    [
      'several statements, each as it needs',
      [m({ parse: true, describe: true }), m({ name: 'w2', text: 'INSERT INTO t VALUES ($1, $2)', values: ['k', null] }), m({ name: 'w1' }), m({ name: undefined, text: 'SELECT 2', values: [], parse: true, describe: true })],
    ],
  ];
  it.each(cases)('%s: byte for byte what pg writes', (_, messages) => {
    expect(encodeBatch(messages).equals(pgWrites(messages))).toBe(true);
  });
});

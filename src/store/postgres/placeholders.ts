/**
 * Statements are written with SQLite's parameter marks (`?`, `@name`); PostgreSQL numbers
 * them (`$1`). The rewrite skips quoted strings, quoted identifiers and comments, so a `?` or
 * an `@` inside a literal stays as it is. A named mark used twice is one parameter.
 */
export interface Rewritten {
  text: string;
  /** For named statements: the parameter name behind each `$n`, in order. */
  names: string[] | undefined;
  /** How many positional marks the statement has. */
  positional: number;
}

export function rewritePlaceholders(sql: string): Rewritten {
  let out = '';
  let positional = 0;
  const names: string[] = [];
  const index = new Map<string, number>();
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = closing(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      const end = nl === -1 ? sql.length : nl;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      const end = close === -1 ? sql.length : close + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '?') {
      positional++;
      out += `$${positional}`;
      i++;
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
      const name = sql.slice(i + 1, j);
      let n = index.get(name);
      if (n === undefined) {
        names.push(name);
        n = names.length;
        index.set(name, n);
      }
      out += `$${n}`;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  if (positional > 0 && names.length > 0) throw new Error('a statement mixes positional (?) and named (@name) parameters');
  return { text: out, names: names.length > 0 ? names : undefined, positional };
}

/** The index just past the quote that closes the one at `start` (a doubled quote is part of the text). */
function closing(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

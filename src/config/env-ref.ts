/**
 * `${NAME}` and `${NAME:-default}` references in config strings, found by a scan rather than a
 * regular expression: config text also arrives from a `gateway` `config.patch` the model writes,
 * and the obvious pattern (`/\$\{(NAME)(?::-([^}]*))?\}/g`) rescans to the end of the string from
 * every `${NAME:-` that no `}` follows, which is quadratic (200,000 characters took seconds).
 */

const isNameStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isNameChar = (c: number) => isNameStart(c) || (c >= 48 && c <= 57);

/**
 * `text` with each reference replaced by `replace(name, fallback)`, matching exactly what
 * `text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, …)` matches, in linear time.
 */
export function replaceEnvReferences(text: string, replace: (name: string, fallback: string | undefined) => string): string {
  let out = '';
  let copied = 0;
  let at = text.indexOf('${');
  while (at !== -1) {
    let end = at + 2;
    if (end < text.length && isNameStart(text.charCodeAt(end))) {
      end++;
      while (end < text.length && isNameChar(text.charCodeAt(end))) end++;
      const name = text.slice(at + 2, end);
      if (text.charCodeAt(end) === 125 /* } */) {
        out += text.slice(copied, at) + replace(name, undefined);
        copied = end + 1;
        at = text.indexOf('${', copied);
        continue;
      }
      if (text.startsWith(':-', end)) {
        const close = text.indexOf('}', end + 2);
        // No `}` after this point means none after any later `${` either: nothing more matches.
        if (close === -1) break;
        out += text.slice(copied, at) + replace(name, text.slice(end + 2, close));
        copied = close + 1;
        at = text.indexOf('${', copied);
        continue;
      }
    }
    // A name holds no `${`, so the next candidate starts after this one's name.
    at = text.indexOf('${', Math.max(at + 1, end));
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** The variable names a string references. */
export function envReferenceNames(text: string): string[] {
  const names: string[] = [];
  replaceEnvReferences(text, (name) => {
    names.push(name);
    return '';
  });
  return names;
}

/**
 * Commands that would decide approvals themselves (reference A3 step 2): a model must not be able
 * to approve its own pending request by running Warden's CLI or typing the chat fallback command
 * into a shell. Checked on the raw text and on every unquoted argv, so quoting, wrappers
 * (`env`, `sudo`, `npx`) and `sh -c` carriers do not hide it. Pure.
 */
// The subcommands alone, whatever runs them: Warden's CLI can be started as `warden`, through
// `node dist/cli.js`, `npx tsx src/cli.ts`, a copy or a link, so the program name proves nothing.
// Every pattern matches in linear time: the text is the model's, of any length.
const PATTERNS: ReadonlyArray<{ re: RegExp; what: string }> = [
  // `(?!\w)` for `\b`: the same after a word's last letter, and quick for the checker to prove.
  { re: /\/approve\s+\S+\s+(allow-once|allow-always|always|deny)(?!\w)/i, what: 'the /approve chat command' },
  { re: /(^|[^\w-])approvals\s+(resolve|revoke)\b/i, what: '`warden approvals resolve|revoke`' },
  { re: /\bexec-approvals\s+import\b/i, what: '`warden exec-approvals import`' },
];

/** `warden … invoke … --approve` in that order, found by scanning forward once. */
function invokeWithApprove(text: string): boolean {
  const steps = [/\b(warden(\.js|\.ts)?|cli\.[jt]s)\b/gi, /\binvoke\b/gi, /--approve\b/gi];
  let at = 0;
  for (const step of steps) {
    step.lastIndex = at;
    const found = step.exec(text);
    if (!found) return false;
    at = found.index + found[0].length;
  }
  return true;
}

export function detectControlCommand(command: string, argvs: ReadonlyArray<readonly string[]> = []): string | null {
  const found = controlIn(command);
  if (found) return found;
  // One joined argv at a time: a verdict may hold 64 argvs of thousands of words each.
  for (const argv of argvs) {
    const inArgv = controlIn(argv.join(' '));
    if (inArgv) return inArgv;
  }
  return null;
}

function controlIn(text: string): string | null {
  for (const { re, what } of PATTERNS) if (re.test(text)) return what;
  if (invokeWithApprove(text)) return '`warden invoke --approve`';
  return null;
}

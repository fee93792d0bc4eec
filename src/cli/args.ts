/** Parsed command line: positionals, `--flag value` / `--flag=value` options, and what follows `--`. */
export interface ParsedArgs {
  command: string | undefined;
  positionals: string[];
  options: Map<string, string | true>;
  rest: string[];
}

/** Flags that never take a value; everything else consumes the next token. */
const BOOLEAN_FLAGS = new Set(['json', 'csv', 'help', 'verbose', 'dry-run', 'fix', 'all']);

export function parseArgs(argv: readonly string[], booleanFlags: ReadonlySet<string> = BOOLEAN_FLAGS): ParsedArgs {
  const out: ParsedArgs = { command: undefined, positionals: [], options: new Map(), rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '--') {
      out.rest = argv.slice(i + 1);
      break;
    }
    if (token.startsWith('--') && token.length > 2) {
      const eq = token.indexOf('=');
      if (eq > 0) out.options.set(token.slice(2, eq), token.slice(eq + 1));
      else {
        const name = token.slice(2);
        const next = argv[i + 1];
        if (booleanFlags.has(name) || next === undefined || next.startsWith('--')) out.options.set(name, true);
        else {
          out.options.set(name, next);
          i++;
        }
      }
      continue;
    }
    if (out.command === undefined) out.command = token;
    else out.positionals.push(token);
  }
  return out;
}

/** A string option, or undefined; `--flag` given without a value is reported by the caller. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.options.get(name);
  return typeof value === 'string' ? value : undefined;
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.options.get(name) === true;
}

/** Streams a command writes to; injected so tests can run commands in-process. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export const processIO = (): CliIO => ({
  stdout: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  stderr: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  cwd: process.cwd(),
  env: process.env,
});

export type CommandRunner = (args: ParsedArgs, io: CliIO) => Promise<number>;

/**
 * Exit codes of the CLI contract (0–3), then the answers a script branches on: `exec-check`
 * exits `ask` or `deny` by its verdict; `invoke` exits `ask` while its call waits on an
 * approval, `deny` when policy refused the call (blocked, denied, approval refused or expired),
 * and `toolError` when the tool ran and failed.
 */
export const EXIT = { ok: 0, critical: 1, badInput: 2, noTools: 3, ask: 4, deny: 5, toolError: 6 } as const;

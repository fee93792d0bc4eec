/**
 * Shell builtins that run without an allowlist entry (reference A9): they read or test state
 * but start no program. Arguments are not inspected.
 */
const SAFE_BUILTINS = new Set([':', 'cd', 'false', 'pwd', 'test', 'true']);

export function isSafeBuiltin(argv: readonly string[]): boolean {
  const name = argv[0]?.toLowerCase();
  if (name === undefined) return false;
  if (name === '[') return argv.length >= 2 && argv[argv.length - 1] === ']';
  return SAFE_BUILTINS.has(name);
}

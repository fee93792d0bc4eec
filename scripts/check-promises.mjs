#!/usr/bin/env node
// Finds promises that are forgotten rather than handled, over the project's own TypeScript
// program (tsconfig.json). Since the store became asynchronous a call that used to act at once
// now returns a promise: left as a statement its failure is an unhandled rejection and its
// effect lands later than the next line assumes; tested as a condition it is always true.
//
// Reported:
//   floating   a call (or new) whose type is a promise/thenable, used as a statement without
//              `await`, `void`, `.catch(handler)` or `.then(onFulfilled, onRejected)`;
//   condition  a value that is always a promise used where truthiness is tested: `if`/`while`/
//              `for`/`do` conditions, `?:` tests, `&&`/`||` operands, `!p`;
//   expect     a value that is always a promise handed to `expect(…)` without `.resolves` or
//              `.rejects`: the matcher then looks at the promise object, so the test cannot
//              tell what the store holds.
//   void       `void p` on a promise/thenable whose rejection nothing handles: `void` only
//              silences the floating rule, and Node ends the process on an unhandled rejection,
//              so a bot that loses one store write or platform call would drop every
//              conversation. Accepted: a call chain ending in `.catch(handler)` or
//              `.then(onFulfilled, onRejected)`. Application code only: in tests and benchmarks
//              (`*.test.ts`, test/, bench/) a stray rejection fails the run, as it should.
// An intentional fire-and-forget is written `background(work(), 'what did not happen')`
// (src/util/background.ts, which logs the failure and returns nothing) or
// `void work().catch(handler)`.
//
// Usage: node scripts/check-promises.mjs [--project tsconfig.json] [--typecheck]; exits 1 on
// findings. With --typecheck it first reports type errors as `tsc --noEmit` would (exit 2).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Tests and benchmarks, where the `void` rule does not apply: a rejection there fails the run
 * (vitest reports unhandled rejections as errors), which is what it should do.
 */
const isTestOrBench = (file) => /\.test\.[cm]?tsx?$/.test(file) || /(^|\/)(test|bench)\//.test(file);

/** Builds one Program from a tsconfig (all checks share it). */
export function programFromConfig(configPath) {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } };
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, host);
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  return ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, noEmit: true }, projectReferences: parsed.projectReferences });
}

/**
 * Every forgotten promise in the program's own files (not declarations, not node_modules), or
 * in `files` (absolute paths) when given.
 * @returns {{ file: string, line: number, column: number, rule: 'floating' | 'condition' | 'expect' | 'void', message: string }[]}
 */
export function findForgottenPromises(program, files) {
  const checker = program.getTypeChecker();
  const wanted = files ? new Set(files.map((f) => path.resolve(f))) : undefined;
  // Files are classed (test or not) by their path inside the project, the tsconfig's folder.
  const config = program.getCompilerOptions().configFilePath;
  const root = typeof config === 'string' ? path.dirname(config) : program.getCurrentDirectory();
  const findings = [];

  const isThenableType = (type) => {
    const then = checker.getPropertyOfType(type, 'then');
    if (!then) return false;
    return checker.getTypeOfSymbol(then).getCallSignatures().length > 0;
  };
  const parts = (type) => (type.isUnion() ? type.types : [type]);
  /** Some part of the value's type is a thenable (a statement could drop a promise). */
  const mayBeThenable = (node) => parts(checker.getTypeAtLocation(node)).some((t) => !(t.flags & ts.TypeFlags.Any) && isThenableType(t));
  /** Every part is a thenable: its truthiness is always true (`Promise | undefined` is a fair test). */
  const alwaysThenable = (node) => {
    const type = checker.getTypeAtLocation(node);
    if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return false;
    return parts(type).every((t) => isThenableType(t));
  };

  const report = (sf, node, rule, message) => {
    const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    findings.push({ file: sf.fileName, line: line + 1, column: character + 1, rule, message });
  };
  const unwrap = (node) => {
    while (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isNonNullExpression(node) || ts.isSatisfiesExpression(node)) node = node.expression;
    return node;
  };
  const text = (sf, node) => {
    const t = node.getText(sf).replace(/\s+/g, ' ');
    return t.length > 60 ? `${t.slice(0, 57)}...` : t;
  };
  /** `.catch(h)` or `.then(f, h)`: the rejection has a handler. */
  const handlesRejection = (call) => {
    if (!ts.isPropertyAccessExpression(call.expression)) return false;
    const name = call.expression.name.text;
    return (name === 'catch' && call.arguments.length >= 1) || (name === 'then' && call.arguments.length >= 2);
  };

  /** The expressions of a statement that end up dropped: `a ? p() : q()`, `x && p()`, `a, p()`. */
  const droppedValues = (expr) => {
    expr = unwrap(expr);
    if (ts.isConditionalExpression(expr)) return [...droppedValues(expr.whenTrue), ...droppedValues(expr.whenFalse)];
    if (ts.isBinaryExpression(expr)) {
      const op = expr.operatorToken.kind;
      if (op === ts.SyntaxKind.CommaToken) return [...droppedValues(expr.left), ...droppedValues(expr.right)];
      if (op === ts.SyntaxKind.AmpersandAmpersandToken || op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.QuestionQuestionToken) return droppedValues(expr.right);
      return [];
    }
    if (ts.isCallExpression(expr) || ts.isNewExpression(expr) || ts.isTaggedTemplateExpression(expr)) return [expr];
    return [];
  };

  const checkFloating = (sf, statement) => {
    for (const value of droppedValues(statement.expression)) {
      if (ts.isCallExpression(value) && handlesRejection(value)) continue;
      if (!mayBeThenable(value)) continue;
      report(sf, value, 'floating', `promise from \`${text(sf, value)}\` is dropped: await it, return it, or write \`void …catch(handler)\` for an intentional fire-and-forget`);
    }
  };

  /** Marks what `node`'s truthiness depends on: through `!`, and both operands of `&&`/`||`. */
  const markTested = (tested, node) => {
    node = unwrap(node);
    if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) return markTested(tested, node.operand);
    if (isLogical(node)) {
      markTested(tested, node.left);
      markTested(tested, node.right);
      return;
    }
    tested.add(node);
  };
  const isLogical = (node) => ts.isBinaryExpression(node) && (node.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken || node.operatorToken.kind === ts.SyntaxKind.BarBarToken);

  /** `expect(p)` or `expect.soft(p)` on a promise, not followed by `.resolves`/`.rejects`. */
  const checkAssertion = (sf, call) => {
    const callee = call.expression;
    const isExpect = (ts.isIdentifier(callee) && callee.text === 'expect') || (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'expect' && callee.name.text === 'soft');
    if (!isExpect || call.arguments.length === 0) return;
    const parent = call.parent;
    if (ts.isPropertyAccessExpression(parent) && (parent.name.text === 'resolves' || parent.name.text === 'rejects')) return;
    const value = call.arguments[0];
    if (alwaysThenable(value)) report(sf, value, 'expect', `\`${text(sf, value)}\` is a promise handed to expect: assert \`await\` of it, or use .resolves/.rejects`);
  };

  /** `void p`: the value `void` discards, split like a statement's (`void (a ? p() : q())`). */
  const voidedValues = (expr) => {
    expr = unwrap(expr);
    if (ts.isConditionalExpression(expr)) return [...voidedValues(expr.whenTrue), ...voidedValues(expr.whenFalse)];
    if (ts.isBinaryExpression(expr)) {
      const op = expr.operatorToken.kind;
      if (op === ts.SyntaxKind.CommaToken) return [...voidedValues(expr.left), ...voidedValues(expr.right)];
      if (op === ts.SyntaxKind.AmpersandAmpersandToken || op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.QuestionQuestionToken) return voidedValues(expr.right);
    }
    return [expr];
  };
  const checkVoid = (sf, node) => {
    for (const value of voidedValues(node.expression)) {
      if (ts.isCallExpression(value) && handlesRejection(value)) continue;
      if (!mayBeThenable(value)) continue;
      report(sf, value, 'void', `\`void ${text(sf, value)}\` discards the promise with its rejection, which ends the process: add \`.catch(handler)\` or pass it to \`background(…)\``);
    }
  };

  const visit = (sf, node, tested, voids) => {
    if (ts.isCallExpression(node)) checkAssertion(sf, node);
    if (voids && ts.isVoidExpression(node)) checkVoid(sf, node);
    if (ts.isExpressionStatement(node)) checkFloating(sf, node);
    else if (ts.isIfStatement(node) || ts.isWhileStatement(node) || ts.isDoStatement(node)) markTested(tested, node.expression);
    else if (ts.isForStatement(node) && node.condition) markTested(tested, node.condition);
    else if (ts.isConditionalExpression(node)) markTested(tested, node.condition);
    else if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) markTested(tested, node.operand);
    // In a value position only the left operand is tested; the right one is the result.
    else if (isLogical(node)) markTested(tested, node.left);
    ts.forEachChild(node, (child) => visit(sf, child, tested, voids));
  };

  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) continue;
    if (wanted && !wanted.has(path.resolve(sf.fileName))) continue;
    const tested = new Set();
    visit(sf, sf, tested, !isTestOrBench(path.relative(root, sf.fileName)));
    for (const node of tested) {
      if (alwaysThenable(node)) report(sf, node, 'condition', `\`${text(sf, node)}\` is a promise, so this test is always true: await it first`);
    }
  }
  findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  return findings;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--project');
  const config = path.resolve(at >= 0 ? args[at + 1] : 'tsconfig.json');
  const root = path.dirname(config);
  const program = programFromConfig(config);
  if (args.includes('--typecheck')) {
    // The type check `tsc --noEmit` does, on the same Program: the promise check then reuses the
    // checker's work and adds about a second instead of a second full pass.
    const diagnostics = ts.getPreEmitDiagnostics(program);
    if (diagnostics.length > 0) {
      const host = { getCurrentDirectory: () => root, getCanonicalFileName: (f) => f, getNewLine: () => ts.sys.newLine };
      const pretty = process.stderr.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
      process.stderr.write(pretty(diagnostics, host));
      process.stderr.write(`\nFound ${diagnostics.length} type error${diagnostics.length === 1 ? '' : 's'}.\n`);
      process.exit(2);
    }
  }
  const started = Date.now();
  const findings = findForgottenPromises(program);
  for (const f of findings) process.stderr.write(`${path.relative(root, f.file)}:${f.line}:${f.column}: ${f.rule}: ${f.message}\n`);
  const took = ((Date.now() - started) / 1000).toFixed(1);
  if (findings.length > 0) {
    process.stderr.write(`check-promises: ${findings.length} forgotten promise${findings.length === 1 ? '' : 's'} (${took}s)\n`);
    process.exit(1);
  }
  process.stdout.write(`check-promises: no forgotten promises (${took}s)\n`);
}

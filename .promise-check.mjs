import ts from 'typescript';
const cfg = ts.getParsedCommandLineOfConfigFile('tsconfig.json', {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} });
const program = ts.createProgram(cfg.fileNames, cfg.options);
const checker = program.getTypeChecker();
const isPromise = (ty) => ty.symbol?.name === 'Promise' || (ty.isUnion?.() && ty.types.some(isPromise));
const floating = [], conditions = [];
for (const sf of program.getSourceFiles()) {
  if (sf.isDeclarationFile || sf.fileName.includes('node_modules')) continue;
  const rel = sf.fileName.replace(process.cwd() + '/', '');
  if (/\.test\.ts$|^test\/|^bench\//.test(rel)) continue;
  const at = (node) => `${rel}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText().slice(0, 100).replace(/\s+/g, ' ')}`;
  const cond = (e) => e && isPromise(checker.getTypeAtLocation(e)) && conditions.push(at(e));
  const visit = (node) => {
    if (ts.isExpressionStatement(node) && ts.isCallExpression(node.expression) && isPromise(checker.getTypeAtLocation(node.expression))) floating.push(at(node.expression));
    if (ts.isIfStatement(node) || ts.isWhileStatement(node)) cond(node.expression);
    if (ts.isConditionalExpression(node)) cond(node.condition);
    if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) cond(node.operand);
    if (ts.isBinaryExpression(node) && [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken].includes(node.operatorToken.kind)) cond(node.left);
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
console.log('## floating\n' + floating.join('\n') + '\n## promise in a condition\n' + conditions.join('\n'));

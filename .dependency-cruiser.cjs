// Warden's layers, bottom first: a module imports only from its own layer or the ones below it,
// for runtime and type-only imports alike, and no two folders import each other (directly or
// round a loop). An upper layer tells a lower one what it needs by registration or injection at
// the composition root (src/app/), never by a lower file importing upward.
// Checked by scripts/check-layers.mjs (part of `npm test`); the README's Development section
// lists the same layers. Tests (`*.test.ts`) may reach any layer; test helpers sit in the layer
// of what they assemble (the whole-stack harnesses in app/).
/** @type {Array<{ name: string, path: string }>} */
const LAYERS = [
  { name: 'util', path: '^src/(util|log|events|redact)/' },
  { name: 'config', path: '^src/config/' },
  { name: 'store', path: '^src/(store|cluster)/' },
  { name: 'net', path: '^src/(net|ops)/' },
  { name: 'policy', path: '^src/policy/' },
  { name: 'services', path: '^src/(models|exec|approvals|hooks|browser|cron|usage)/' },
  { name: 'turn', path: '^src/turn/' },
  { name: 'tools', path: '^src/tools/' },
  { name: 'features', path: '^src/(agent|skills|mcp|plugins|media-understanding|control)/' },
  { name: 'gateway', path: '^src/gateway/' },
  { name: 'adapters', path: '^adapters/' },
  { name: 'app', path: '^src/(app|node)/' },
  { name: 'cli', path: '^src/(cli/|cli\\.ts$|index\\.ts$)' },
];

const upward = LAYERS.flatMap((layer, i) =>
  i === LAYERS.length - 1
    ? []
    : [
        {
          name: `${layer.name}-imports-upward`,
          comment: `${layer.name} may import only from itself and the layers below it (${LAYERS.slice(0, i + 1).map((l) => l.name).join(', ')})`,
          severity: 'error',
          from: { path: layer.path },
          to: { path: LAYERS.slice(i + 1).map((l) => l.path) },
        },
      ],
);

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'outside-the-layers',
      comment: 'every source file belongs to a layer: add its folder to LAYERS in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^(src|adapters)/', pathNot: LAYERS.map((l) => l.path) },
      to: {},
    },
    {
      name: 'folder-cycle',
      comment: 'two folders import each other, directly or round a loop: move the shared part down or inject it',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|\\.test\\.ts$|\\.d\\.ts$' },
    // Type-only imports count: a layer that names an upper layer's types depends on it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs'],
    },
    metrics: true,
  },
};

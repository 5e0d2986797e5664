// The layer rule (docs/architecture.md): adapters → use cases → core and stores → Node.
/** @type {import('dependency-cruiser').IConfiguration} */
// Folders by layer, lowest first. A folder may import its own layer's files and lower layers only,
// so no two folders can ever depend on each other (no cycle between folders).
const LAYERS = [
  ['text'],
  ['log', 'replay', 'output'],
  ['ollama', 'sessions'],
  ['config'],
  ['query', 'maintenance'],
  ['turn', 'tools', 'chat'],
  ['agent'],
  ['serve'],
  ['cli'],
];
const layerRules = LAYERS.flatMap((layer, rank) =>
  layer.map((folder) => ({
    name: `layer-${folder}`,
    comment: `src/${folder} may import only lower layers (${LAYERS.slice(0, rank).flat().join(', ') || 'none'}) and itself.`,
    severity: 'error',
    from: { path: `^src/${folder}/` },
    to: { path: `^src/(${LAYERS.slice(rank).flat().filter((other) => other !== folder).join('|')})/` },
  })),
);

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-cycles',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'log-is-a-leaf',
      comment: 'src/log imports nothing of ours but itself, src/errors.ts and src/text (pure text, importing nothing).',
      severity: 'error',
      from: { path: '^src/log/' },
      to: { path: '^src/', pathNot: ['^src/log/', '^src/errors\\.ts$', '^src/text/'] },
    },
    {
      name: 'core-is-pure',
      comment: 'The replay core imports only itself and errors, and no Node I/O.',
      severity: 'error',
      from: { path: '^src/replay/' },
      to: { pathNot: ['^src/replay/', '^src/errors\\.ts$'], path: ['^src/', '^(node:)?(fs|fs/promises|child_process|net|http|https|os|process|readline)$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

// Builds dist/cli/: the CLI and its dependencies bundled by esbuild (npm run build).
// One bundle starts faster than ~120 separate modules (each resolved, read and linked on every run);
// code behind a dynamic import() stays in its own chunk, loaded only when a command needs it.
// Type-checking is `npm run typecheck`; esbuild only strips types.
import { rm } from 'node:fs/promises';
import { build } from 'esbuild';

await rm('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/cli/main.ts'],
  outdir: 'dist/cli',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  sourcemap: true,
  logLevel: 'warning',
  // Bundled CommonJS dependencies (commander, graceful-fs…) call require() for Node's built-ins, and
  // some may read __filename.
  banner: {
    js: "import { createRequire as argoCreateRequire } from 'node:module'; import { fileURLToPath as argoFileURLToPath } from 'node:url'; const require = argoCreateRequire(import.meta.url); const __filename = argoFileURLToPath(import.meta.url);",
  },
});

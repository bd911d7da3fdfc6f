// Bundles the viewer page: src/main.js (three.js, uPlot) into app.js and
// app.css, with index.html beside them. Run by build.rs from a copy of this
// directory's package files, with the node_modules npm ci made there:
//   node build.mjs SRC_DIR OUT_DIR NODE_MODULES
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [src, out, nodeModules] = process.argv.slice(2);
if (!src || !out || !nodeModules) {
  console.error('usage: node build.mjs SRC_DIR OUT_DIR NODE_MODULES');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
await esbuild.build({
  entryPoints: { app: join(src, 'main.js') },
  bundle: true,
  format: 'esm',
  minify: true,
  sourcemap: false,
  target: 'es2022',
  outdir: out,
  nodePaths: [nodeModules],
  logLevel: 'warning',
  legalComments: 'eof',
});
copyFileSync(join(src, 'index.html'), join(out, 'index.html'));

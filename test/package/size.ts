/**
 * Size budget: the browser bundle of `import { PetsClient } from '@animal-store/sdk'`
 * with every runtime dependency, minified, measured gzip and brotli. Exits 1
 * over the budget. `--json` prints the figures for the benchmark.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { root } from './pack.js';

/** Regression budget, min+gz, in bytes: the size measured when it was set (16.1 kB) plus a little. Issue 6 targets 9 kB. */
export const BUDGET_GZIP_BYTES = 16.5 * 1024;

export async function measureBundle(entry = `${root}dist/index.js`) {
  const result = await build({
    stdin: {
      contents: `export { PetsClient } from ${JSON.stringify(entry)};`,
      resolveDir: root,
      loader: 'js',
    },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
  });
  const code = result.outputFiles[0]!.contents;
  const inputs = Object.entries(result.metafile.outputs)[0]![1].inputs;
  const byPackage = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const pkg =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? '@animal-store/sdk (own code)';
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
  }
  return {
    minified: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    brotli: brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    byPackage: Object.fromEntries([...byPackage].sort((a, b) => b[1] - a[1])),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const size = await measureBundle();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(size));
  } else {
    const kb = (n: number) => `${(n / 1024).toFixed(2)} kB`;
    console.log(
      `browser bundle of PetsClient: ${kb(size.minified)} min, ${kb(size.gzip)} min+gz, ${kb(size.brotli)} min+br (budget ${kb(BUDGET_GZIP_BYTES)} min+gz)`,
    );
    for (const [pkg, bytes] of Object.entries(size.byPackage))
      console.log(`  ${pkg.padEnd(30)} ${kb(bytes)} min`);
    if (size.gzip > BUDGET_GZIP_BYTES) {
      console.error(`Over budget by ${size.gzip - BUDGET_GZIP_BYTES} bytes gzip.`);
      process.exit(1);
    }
  }
}

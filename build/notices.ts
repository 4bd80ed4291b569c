// Third-party notices for the code the build bundles. The build bundles its
// runtime dependencies (zod, openapi-fetch, p-retry…), so their licences'
// notices must travel with it: this esbuild plugin collects every package a
// bundle took code from and writes dist/THIRD-PARTY-NOTICES.md with each
// package's own licence file, verbatim. A bundled package without a licence
// file fails the build.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import type { Plugin } from 'esbuild';

export const NOTICES_FILE = 'dist/THIRD-PARTY-NOTICES.md';

export interface BundledPackage {
  name: string;
  version: string;
  license: string;
  repository: string | undefined;
  licenseFile: string;
  licenseText: string;
}

/** The package directory an input path under node_modules belongs to, or undefined. */
export function packageDirOf(path: string): string | undefined {
  const parts = resolve(path).split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length) return undefined;
  const length = parts[at + 1]?.startsWith('@') ? 3 : 2;
  return parts.slice(0, at + length).join(sep);
}

/** Reads a bundled package's name, version, licence and licence file; throws when it has no licence file. */
export function describePackage(dir: string): BundledPackage {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    license?: string;
    repository?: string | { url?: string };
  };
  const licenseFile = readdirSync(dir)
    .filter((file) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(file))
    .sort()[0];
  if (!licenseFile) {
    throw new Error(
      `${manifest.name} is bundled into the build but ships no licence file; add its notice by hand or stop bundling it`,
    );
  }
  const repository =
    typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  return {
    name: manifest.name,
    version: manifest.version,
    license: manifest.license ?? 'see the licence text',
    repository: repository
      ?.replace(/^git\+/, '')
      .replace(/\.git$/, '')
      .replace(/^([\w-]+\/[\w.-]+)$/, 'https://github.com/$1'),
    licenseFile,
    licenseText: readFileSync(join(dir, licenseFile), 'utf8').trim(),
  };
}

export function renderNotices(packages: BundledPackage[]): string {
  const sections = packages.map(
    (p) =>
      `## ${p.name} ${p.version}\n\nLicence: ${p.license}${p.repository ? `. Source: ${p.repository}` : ''}. ` +
      `Text of its \`${p.licenseFile}\`:\n\n\`\`\`text\n${p.licenseText}\n\`\`\`\n`,
  );
  return `# Third-party notices

The build of \`@animal-store/sdk\` bundles code from the packages below. Their
licences and copyright notices follow, as each package ships them. This file is
written by the build from the bundled packages themselves.

${sections.join('\n')}`;
}

const bundled = new Map<string, BundledPackage>();

/** Collects the packages each bundle takes code from; writes the notices after every build step. */
export function noticesPlugin(root: string): Plugin {
  return {
    name: 'third-party-notices',
    setup(build) {
      build.initialOptions.metafile = true;
      build.onEnd((result) => {
        if (!result.metafile) return;
        for (const input of Object.keys(result.metafile.inputs)) {
          const dir = packageDirOf(join(root, input));
          if (dir && !bundled.has(dir)) bundled.set(dir, describePackage(dir));
        }
        const packages = [...bundled.values()].sort((a, b) => a.name.localeCompare(b.name));
        const file = join(root, NOTICES_FILE);
        if (!existsSync(dirname(file))) mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, renderNotices(packages));
      });
    },
  };
}

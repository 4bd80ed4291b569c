// Every TypeScript block of README.md and of the guides in docs/, as a user
// copies it: each is written
// out as a module of its own, typechecked under the strictest options users
// set (strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess) against
// the built package as users import it, and every block not marked
// `<!-- typecheck-only: why -->` is run against the loopback mock, with
// ANIMAL_STORE_API_KEY and ANIMAL_STORE_BASE_URL set as README tells users.
// Links must work from the npm page too: absolute, or anchors of README.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, SAMPLE_PETS, startMockServer } from '../src/mock/index.js';

const root = new URL('../', import.meta.url).pathname;
const dir = join(root, 'test', '.readme');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const texts = new Map(documents.map((name) => [name, readFileSync(join(root, name), 'utf8')]));
const readme = texts.get('README.md') ?? '';
const run = promisify(execFile);

interface Snippet {
  document: string;
  file: string;
  line: number;
  code: string;
  runnable: boolean;
}

function snippets(document: string, markdown: string): Snippet[] {
  const found: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i] ?? '')) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] ?? '');
    const marker = lines[start - 1] ?? '';
    const prefix = document.replace(/\W+/g, '-').toLowerCase();
    found.push({
      document,
      file: `${prefix}-${String(start + 1).padStart(4, '0')}.ts`,
      line: start + 1,
      // A module of its own, as a file a user pastes it into.
      code: `${body.join('\n')}\nexport {};\n`,
      runnable: !marker.startsWith('<!-- typecheck-only:'),
    });
  }
  return found;
}

const all = [...texts].flatMap(([name, text]) => snippets(name, text));
let mock: MockServer;

beforeAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const s of all) writeFileSync(join(dir, s.file), s.code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM'],
        types: ['node'],
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: true,
        noEmit: true,
      },
      include: ['*.ts'],
    }),
  );
  mock = await startMockServer({ seed: SAMPLE_PETS });
});

afterAll(async () => {
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('README.md and the guides', () => {
  it('has TypeScript examples, most of them runnable', () => {
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((s) => s.runnable).length).toBeGreaterThan(6);
  });

  it('has only examples that compile under strict settings, imports included', async () => {
    // Resolved as users resolve them: @animal-store/sdk through the package's
    // own exports (the build), msw, redis, ioredis from node_modules.
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], {
      cwd: dir,
      encoding: 'utf8',
    }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    // Name the README line of each error, not the generated file's.
    const located = result.replace(
      /([\w-]+)-(\d+)\.ts\((\d+),(\d+)\)/g,
      (_, prefix, start, line) => {
        const document = all.find((s) => s.file === `${prefix}-${start}.ts`)?.document ?? prefix;
        return `${document}:${Number(start) + Number(line)}`;
      },
    );
    expect(located).toBe('');
  }, 120_000);

  it.each(all.filter((s) => s.runnable).map((s) => [s.document, s.line, s] as const))(
    'runs the example of %s at line %i against the mock',
    async (_, __, snippet) => {
      const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
      const result = await run(process.execPath, [tsx, snippet.file], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 30_000,
        env: {
          ...process.env,
          ANIMAL_STORE_API_KEY: 'readme-key',
          ANIMAL_STORE_BASE_URL: mock.url,
          NODE_NO_WARNINGS: '1',
        },
      }).then(
        ({ stderr }) => ({ ok: true, stderr }),
        (error: { stderr?: string; message: string }) => ({
          ok: false,
          stderr: error.stderr ?? error.message,
        }),
      );
      expect(result.stderr.trim() === '' || result.ok, result.stderr).toBe(true);
      expect(result.ok, result.stderr).toBe(true);
    },
    40_000,
  );

  it.each(documents)('%s reads as documentation, not as a lab notebook', (name) => {
    const text = texts.get(name) ?? '';
    expect(text).not.toMatch(/not met|NOT met|\bbranch\b/);
    // A user has neither the tests, the examples nor the service's interface document.
    expect(text).not.toMatch(/\btest\/[\w./-]+\.ts|examples\/|interface document/);
  });

  it('keeps README short enough to read: at most 4,000 words', () => {
    expect(readme.split(/\s+/).filter(Boolean).length).toBeLessThanOrEqual(4_000);
  });

  it.each(documents)(
    '%s links only to absolute addresses or its own headings (the npm page, the reference)',
    (name) => {
      const text = texts.get(name) ?? '';
      const anchors = new Set(
        [...text.matchAll(/^#+ (.+)$/gm)].map((m) =>
          (m[1] ?? '')
            .toLowerCase()
            .replace(/[^\w\- ]/g, '')
            .replace(/ /g, '-'),
        ),
      );
      const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
      const broken = targets.filter((t) =>
        t.startsWith('#') ? !anchors.has(t.slice(1)) : !/^https:\/\//.test(t),
      );
      expect(broken).toEqual([]);
      // Links into the repository's guides name a guide that exists.
      const guides = targets
        .map((t) => /github\.com\/animal-store\/sdk\/blob\/main\/([^#)]+)/.exec(t)?.[1])
        .filter((path): path is string => path !== undefined);
      for (const path of guides) expect(existsSync(join(root, path)), path).toBe(true);
    },
  );
});

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../src/mock/index.js';

// Drives Debian's Chromium (headless, through playwright-core) against a page
// that bundles the built SDK and calls the loopback mock on another origin.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
const inCI = process.env.CI === 'true';

if (!available && !inCI) {
  console.warn(
    `Skipping the browser test: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH).`,
  );
}

const PAGE_SCRIPT = `
import { PetsClient, NotFoundError, RequestValidationError, ServerError } from ${JSON.stringify(fileURLToPath(new URL('../dist/index.js', import.meta.url)))};
const baseUrl = new URLSearchParams(location.search).get('api');
const redirecting = new URLSearchParams(location.search).get('redirect');
const run = async () => {
  const retries = [];
  const client = new PetsClient({ apiKey: 'browser-key', baseUrl, dangerouslyAllowBrowser: true,
    deprecationWarnings: false, logLevel: 'info', onRetry: (i) => retries.push(i.reason) });
  const listed = await client.listPets({ status: 'available' });
  const created = await client.createPet({ name: 'Chrome', categoryId: 9 });
  const fetched = await client.getPet(created.id);
  const missing = await client.getPet(424242).catch((e) => e instanceof NotFoundError);
  const burst = await Promise.all([1, 2, 3].map(() => client.listPets({ limit: 1 })));
  const invalid = await client.listPets({ limit: 0 }).catch((e) => e instanceof RequestValidationError && e.issues[0].path[0]);
  const redirected = await new PetsClient({ apiKey: 'browser-key', baseUrl: redirecting, dangerouslyAllowBrowser: true, logLevel: 'off', maxRetries: 0 })
    .createPet({ name: 'Away', categoryId: 1 }).then(() => 'followed', (e) => e instanceof ServerError ? e.message : String(e));
  return { listed: listed.length, created, fetched, missing, burst: burst.length, invalid, redirected, retries, rateLimit: client.rateLimit && client.rateLimit.limit };
};
run().then((r) => { window.__result = r; }, (e) => { window.__result = { error: String(e && e.stack || e) }; });
`;

let page: Server | undefined;
let pageUrl = '';
const served: string[] = [];
let mock: MockServer | undefined;
// Answers every request with a 307 to the page's origin (after a CORS preflight).
let redirector: Server | undefined;
let redirectorUrl = '';
const redirectedTo: string[] = [];

beforeAll(async () => {
  if (!available) return;
  // Split like an application bundler (Vite, webpack) splits: the Zod chunk is
  // its own file, fetched by the page only when a value is declined.
  const bundle = await build({
    stdin: { contents: PAGE_SCRIPT, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    outdir: '/app',
    write: false,
  });
  const files = new Map(bundle.outputFiles.map((f) => [f.path.replace(/^.*\//, '/app/'), f.text]));
  page = createServer((request, response) => {
    if (request.url?.startsWith('/elsewhere')) redirectedTo.push(request.url);
    const script = files.get(request.url ?? '');
    if (script !== undefined) {
      served.push(request.url!);
      response.writeHead(200, { 'content-type': 'text/javascript' });
      response.end(script);
    } else {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        '<!doctype html><title>sdk</title><script type="module" src="/app/stdin.js"></script>',
      );
    }
  });
  await new Promise<void>((resolve) => page!.listen(0, '127.0.0.1', resolve));
  const address = page.address();
  pageUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  redirector = createServer((request, response) => {
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-allow-methods': 'GET, POST',
    };
    if (request.method === 'OPTIONS') {
      response.writeHead(204, cors);
      response.end();
      return;
    }
    request.resume();
    response.writeHead(307, { ...cors, location: `${pageUrl}elsewhere/v1/pets` });
    response.end();
  });
  await new Promise<void>((resolve) => redirector!.listen(0, '127.0.0.1', resolve));
  const redirectorAddress = redirector.address();
  redirectorUrl = `http://127.0.0.1:${typeof redirectorAddress === 'object' && redirectorAddress ? redirectorAddress.port : 0}/v1`;
  // Five requests a minute, with the mock's clock 55 s into its minute (see
  // aheadOfBrowser): the burst outgrows what is left and is held until the
  // window resets, soon.
  mock = await startMockServer({
    plan: 'enterprise',
    limits: { perMinute: 5 },
    seed: [{ name: 'Rex', categoryId: 1, status: 'available' }],
    now: () => Date.now() + mockAhead,
  });
});

// How far the mock's clock is ahead of this process's, set once the browser's
// clock is known: under libfaketime's `@` clocks, this process's clock starts
// at the date when it starts, and Chromium's need not.
let mockAhead = 0;

/**
 * Puts the mock's clock ten seconds ahead of the browser's at least, so that
 * a wait read on the browser's own clock would be that much longer than any
 * the mock's Date allows, and 55 s into the mock's minute.
 */
async function aheadOfBrowser(tab: Page): Promise<void> {
  const browserAhead = (await tab.evaluate(() => Date.now())) - Date.now();
  let ahead = 55_000 - ((Date.now() + browserAhead) % 60_000);
  if (ahead < 10_000) ahead += 60_000;
  mockAhead = browserAhead + ahead;
}

afterAll(async () => {
  await mock?.close();
  await new Promise((resolve) => (redirector ? redirector.close(resolve) : resolve(undefined)));
  await new Promise((resolve) => (page ? page.close(resolve) : resolve(undefined)));
});

describe.runIf(available || inCI)('in a real browser (headless Chromium)', () => {
  it('lists, creates and gets animals, and holds a burst within the budget, across origins', async () => {
    expect(available, `CI must run the browser test: install Chromium at ${CHROMIUM}`).toBe(true);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const tab = await browser.newPage();
      const errors: string[] = [];
      const logs: string[] = [];
      tab.on('pageerror', (error) => errors.push(String(error)));
      tab.on('requestfailed', (request) =>
        errors.push(`${request.url()}: ${request.failure()?.errorText}`),
      );
      tab.on('console', (message) => logs.push(message.text()));
      await aheadOfBrowser(tab);
      await tab.goto(
        `${pageUrl}?api=${encodeURIComponent(mock!.url)}&redirect=${encodeURIComponent(redirectorUrl)}`,
      );
      await tab
        .waitForFunction(
          () => (window as { __result?: unknown }).__result !== undefined,
          undefined,
          { timeout: 15_000 },
        )
        .catch((error: unknown) => {
          throw new Error(
            `the page did not finish: ${String(error)}\n${[...errors, ...logs].join('\n')}`,
          );
        });
      const result = await tab.evaluate(
        () => (window as unknown as { __result: Record<string, unknown> }).__result,
      );
      expect(result.error).toBeUndefined();
      // The browser hands the page an opaque redirect: the same error as in Node, nothing resent.
      expect(result.redirected).toMatch(/answered with a redirect, which the SDK does not follow/);
      expect(redirectedTo).toEqual([]);
      // Chromium lists the redirect it did not follow as an aborted request.
      expect(errors.filter((e) => !/\/elsewhere\/v1\/pets: net::ERR_ABORTED$/.test(e))).toEqual([]);
      expect(result).toMatchObject({
        listed: 1,
        created: { name: 'Chrome', categoryId: 9 },
        fetched: { name: 'Chrome', categoryId: 9 },
        missing: true,
        burst: 3,
        invalid: 'limit',
        rateLimit: 5,
      });
      expect(
        served.some((url) => /verdict/.test(url)),
        'the Zod chunk is its own file',
      ).toBe(true);
      // Held until the reset, and never sent into a 429 (which would be retried after Retry-After).
      expect(result.retries).toContain('budget-exhausted');
      expect(result.retries, logs.join('\n')).not.toContain('retry-after');

      // The mock's clock runs ahead of the browser's: waits must follow its Date header.
      expect(logs.join('\n')).toMatch(/held for \d+ ms/);
      // At most the 5 s left of the mock's minute, and up to a second more: a Date has whole seconds.
      expect(logs.join('\n')).not.toMatch(/(?:waits|held for) (?:[8-9]\d{3}|\d{5,}) ms/);
    } finally {
      await browser.close();
    }
  }, 30_000);
});

// The mock's msw handlers served by msw's service worker, the page bundling
// `@animal-store/sdk/mock` by its package name as an application does (the
// `browser` condition: no Node built-in may be reached).
const WORKER_PAGE = `
import { setupWorker } from 'msw/browser';
import { createHandlers } from '@animal-store/sdk/mock';
import { PetsClient, NotFoundError, RateLimitError } from '@animal-store/sdk';
const run = async () => {
  const baseUrl = location.origin + '/v1';
  // An hour's window: the mock's windows follow the clock, and a minute's could
  // end between spending it and the call that must meet its 429.
  const handlers = createHandlers({ baseUrl, apiKeys: ['page-key'], plan: 'enterprise',
    limits: { perMinute: 6, windowMs: 3_600_000 }, seed: [{ name: 'Rex', categoryId: 1, status: 'available' }] });

  const worker = setupWorker(...handlers);
  await worker.start({ quiet: true, onUnhandledRequest: 'bypass' });
  const client = new PetsClient({ apiKey: 'page-key', baseUrl, dangerouslyAllowBrowser: true,
    deprecationWarnings: false, logLevel: 'off', maxRetryDelayMs: 1000 });
  const created = await client.createPet({ name: 'Worker', categoryId: 2 });
  const fetched = await client.getPet(created.id);
  const listed = await client.listPets();
  const missing = await client.getPet(424242).catch((e) => e instanceof NotFoundError && e.status);
  // Another program spends what is left of the window behind the client's back. Twice at most:
  // the window follows the clock, and its hour may end between the spending and the call.
  let limited;
  for (let tries = 0; tries < 2 && limited !== 429; tries++) {
    for (let left = 1; left > 0; ) {
      const response = await fetch(baseUrl + '/pets', { headers: { authorization: 'Bearer page-key' } });
      left = Number(response.headers.get('x-ratelimit-remaining'));
    }
    limited = await client.listPets().catch((e) => e instanceof RateLimitError && e.status);
  }
  const unauthorized = await new PetsClient({ apiKey: 'wrong', baseUrl, dangerouslyAllowBrowser: true, logLevel: 'off' })
    .listPets().catch((e) => e.name);
  return { created, fetched, listed: listed.length, missing, limited, unauthorized,
    rateLimit: client.rateLimit && client.rateLimit.limit, controlled: navigator.serviceWorker.controller !== null };
};
run().then((r) => { window.__result = r; }, (e) => { window.__result = { error: String(e && e.stack || e) }; });
`;

describe.runIf(available || inCI)('the mock in a browser, through msw’s service worker', () => {
  it('answers the SDK’s three calls, a 404, a 401 and a 429 from the page itself', async () => {
    expect(available, `CI must run the browser test: install Chromium at ${CHROMIUM}`).toBe(true);
    const root = fileURLToPath(new URL('../', import.meta.url));
    // `@animal-store/sdk` resolved as an application's node_modules would hold it.
    const modules = mkdtempSync(join(tmpdir(), 'sdk-page-'));
    mkdirSync(join(modules, '@animal-store'));
    symlinkSync(root, join(modules, '@animal-store', 'sdk'));
    let bundle: Awaited<ReturnType<typeof build>>;
    try {
      bundle = await build({
        stdin: { contents: WORKER_PAGE, resolveDir: root, loader: 'js' },
        nodePaths: [modules],
        // Not the repository's tsconfig, whose paths map the package to its sources.
        tsconfigRaw: '{}',
        bundle: true,
        format: 'esm',
        platform: 'browser',
        outdir: '/app',
        write: false,
        logLevel: 'error',
      });
    } finally {
      rmSync(modules, { recursive: true, force: true });
    }
    const script = bundle.outputFiles?.find((f) => f.path.endsWith('.js'))?.text ?? '';
    const workerScript = readFileSync(join(root, 'node_modules/msw/lib/mockServiceWorker.js'));
    const server = createServer((request, response) => {
      if (request.url === '/app.js' || request.url === '/mockServiceWorker.js') {
        response.writeHead(200, { 'content-type': 'text/javascript' });
        response.end(request.url === '/app.js' ? script : workerScript);
        return;
      }
      response.writeHead(request.url === '/' ? 200 : 404, { 'content-type': 'text/html' });
      response.end(
        '<!doctype html><title>mock</title><script type="module" src="/app.js"></script>',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const tab = await browser.newPage();
      const errors: string[] = [];
      tab.on('pageerror', (error) => errors.push(String(error)));
      await tab.goto(`http://127.0.0.1:${port}/`);
      await tab.waitForFunction(
        () => (window as { __result?: unknown }).__result !== undefined,
        undefined,
        { timeout: 20_000 },
      );
      const result = await tab.evaluate(
        () => (window as unknown as { __result: Record<string, unknown> }).__result,
      );
      expect(errors).toEqual([]);
      expect(result).toEqual({
        created: { id: 2, name: 'Worker', categoryId: 2 },
        fetched: { id: 2, name: 'Worker', categoryId: 2 },
        listed: 2,
        missing: 404,
        limited: 429,
        unauthorized: 'AuthenticationError',
        rateLimit: 6,
        controlled: true,
      });
    } finally {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    }
  }, 40_000);
});

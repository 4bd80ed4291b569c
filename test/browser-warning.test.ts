import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientWith, scriptedFetch } from './helpers/scripted-fetch.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.resetModules();
});

async function freshClientModule() {
  vi.resetModules();
  return import('../src/client.js');
}

describe('browser use', () => {
  it('warns once that the key is visible to visitors, unless dangerouslyAllowBrowser is set', async () => {
    vi.stubGlobal('window', {});
    vi.stubGlobal('document', {});
    const { PetsClient } = await freshClientModule();
    const warn = vi.fn();
    const logger = { warn, error: vi.fn(), info: vi.fn(), debug: vi.fn() };
    const options = {
      apiKey: 'sk_browser_123456',
      baseUrl: 'https://x.example/v1',
      fetch: scriptedFetch().fetch,
      logger,
    };
    new PetsClient({ ...options, dangerouslyAllowBrowser: true });
    expect(warn).not.toHaveBeenCalled();
    new PetsClient(options);
    new PetsClient(options);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatch(/every visitor can read the API key/);
  });

  it('says nothing outside a browser', () => {
    const warn = vi.fn();
    clientWith(scriptedFetch().fetch, {
      logLevel: 'warn',
      logger: { warn, error: vi.fn(), info: vi.fn(), debug: vi.fn() },
    });
    expect(warn).not.toHaveBeenCalled();
  });

  it('names CORS among the causes of a request without a response, in a page only', async () => {
    const failing = { fetch: async () => Promise.reject(new TypeError('Failed to fetch')) };
    const options = { apiKey: 'sk_browser_123456', baseUrl: 'https://x.example.com/v1' };
    const outside = (await clientWith(failing.fetch, { maxRetries: 0 })
      .listPets()
      .catch((e: unknown) => e)) as Error;
    expect(outside.message).not.toMatch(/CORS/);
    vi.stubGlobal('window', {});
    vi.stubGlobal('document', {});
    const { PetsClient } = await freshClientModule();
    const client = new PetsClient({
      ...options,
      ...failing,
      maxRetries: 0,
      dangerouslyAllowBrowser: true,
    });
    const error = (await client.listPets().catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(
      /Failed to fetch\. Check the network and baseUrl, and that the service \(or your proxy\) allows this page's origin \(CORS\)\./,
    );
  });
});

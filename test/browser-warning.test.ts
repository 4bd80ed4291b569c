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
});

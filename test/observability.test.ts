import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type LogLevel, RateLimitError, type RetryInfo } from '../src/index.js';
import { useFakeTime } from './helpers/fake-time.js';
import {
  API_KEY,
  apiError,
  clientWith,
  json,
  rex,
  scriptedFetch,
} from './helpers/scripted-fetch.js';

beforeEach(() => useFakeTime());
afterEach(() => vi.useRealTimers());

function recordingLogger() {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => lines.push({ level, message });
  return {
    lines,
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
  };
}

describe('onRetry', () => {
  it('is told operation, attempt, delay, reason and error before every wait', async () => {
    const stub = scriptedFetch(apiError(429, { 'retry-after': '2' }), apiError(503), json([rex]));
    const infos: RetryInfo[] = [];
    const call = clientWith(stub.fetch, { onRetry: (i) => infos.push(i) }).listPets();
    await vi.advanceTimersByTimeAsync(1999);
    expect(infos).toHaveLength(1);
    expect(stub.received).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    await call;
    expect(infos).toHaveLength(2);
    expect(infos[0]).toEqual({
      operation: 'listPets',
      attempt: 1,
      delayMs: 2000,
      reason: 'retry-after',
      error: expect.any(RateLimitError),
    });
    expect(infos[1]).toMatchObject({ operation: 'listPets', attempt: 2, reason: 'server-error' });
  });

  it('is not called when nothing is retried', async () => {
    const onRetry = vi.fn();
    await clientWith(scriptedFetch(apiError(404)).fetch, { onRetry })
      .getPet(1)
      .catch(() => undefined);
    expect(onRetry).not.toHaveBeenCalled();
  });

  it('cannot break the retry by throwing', async () => {
    const stub = scriptedFetch(apiError(503), json([rex]));
    const call = clientWith(stub.fetch, {
      onRetry: () => {
        throw new Error('callback bug');
      },
    }).listPets();
    await vi.advanceTimersByTimeAsync(10_000);
    await expect(call).resolves.toEqual([rex]);
  });
});

describe('logging', () => {
  it('logs one line per request at debug and one per retry at info', async () => {
    const { lines, logger } = recordingLogger();
    const stub = scriptedFetch(apiError(503), json([rex]));
    const call = clientWith(stub.fetch, { logLevel: 'debug', logger }).listPets({ limit: 3 });
    await vi.advanceTimersByTimeAsync(10_000);
    await call;
    expect(lines.filter((l) => l.level === 'debug')).toHaveLength(2);
    expect(lines.filter((l) => l.level === 'info')).toHaveLength(1);
    expect(lines[0]?.message).toMatch(
      /^\[animal-store\] GET http:\/\/127\.0\.0\.1:4010\/v1\/pets\?limit=3 -> 503/,
    );
    expect(lines.find((l) => l.level === 'info')?.message).toMatch(
      /retrying in \d+ ms \(server-error\)/,
    );
  });

  it('logs a request that got no response at debug too, saying why', async () => {
    const { lines, logger } = recordingLogger();
    const stub = scriptedFetch(new TypeError('fetch failed'), json(rex));
    const call = clientWith(stub.fetch, { logLevel: 'debug', logger }).getPet(1);
    await vi.advanceTimersByTimeAsync(10_000);
    await call;
    const debug = lines.filter((l) => l.level === 'debug').map((l) => l.message);
    expect(debug).toEqual([
      expect.stringMatching(/\/pets\/1 -> no response \(ConnectionError\) in \d+ ms$/),
      expect.stringMatching(/\/pets\/1 \(attempt 2\) -> 200 in \d+ ms$/),
    ]);
  });

  it.each<[LogLevel, number]>([
    ['off', 0],
    ['error', 0],
    ['warn', 0],
    ['info', 1],
    ['debug', 3],
  ])('at level %s writes %i lines for one retried call', async (logLevel, count) => {
    const { lines, logger } = recordingLogger();
    const stub = scriptedFetch(apiError(503), json([rex]));
    const call = clientWith(stub.fetch, { logLevel, logger }).listPets();
    await vi.advanceTimersByTimeAsync(10_000);
    await call;
    expect(lines).toHaveLength(count);
  });

  it('logs to console at warn by default, and never the key', async () => {
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    const stub = scriptedFetch(json([rex]));
    const client = clientWith(stub.fetch, { logLevel: undefined as never });
    await client.listPets();
    expect(debug).not.toHaveBeenCalled();
    const { lines, logger } = recordingLogger();
    await clientWith(scriptedFetch(json([rex])).fetch, { logLevel: 'debug', logger }).listPets();
    expect(JSON.stringify(lines)).not.toContain(API_KEY);
  });

  it('rejects an unknown log level at construction', () => {
    expect(() => clientWith(scriptedFetch().fetch, { logLevel: 'verbose' as LogLevel })).toThrow(
      /Invalid logLevel "verbose"/,
    );
  });
});

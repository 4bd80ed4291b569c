import { createMockService, type MockServiceOptions } from '../../src/mock/index.js';
import { sleep } from './sleep.js';

/** One request the service received: when, and what it answered. */
export interface Exchange {
  at: number;
  status: number;
  answeredAt?: number;
}

/**
 * A fetch backed by the in-memory mock service (the real rate limiter, on the
 * faked clock), answering each request `latencyMs` after it arrived, and
 * recording every exchange. `inFlight` and `maxInFlight` count what was sent
 * and not yet answered.
 */
export function serviceFetch(options: MockServiceOptions & { latencyMs?: number } = {}) {
  const { latencyMs = 10, ...serviceOptions } = options;
  const service = createMockService({ plan: 'enterprise', ...serviceOptions });
  const exchanges: Exchange[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const fetch = async (input: Request | string, init?: RequestInit): Promise<Response> => {
    const request = typeof input === 'string' ? new Request(input, init) : input;
    const response = await service.handle(request);
    const exchange: Exchange = { at: Date.now(), status: response.status };
    exchanges.push(exchange);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await sleep(latencyMs);
    inFlight--;
    exchange.answeredAt = Date.now();
    return response;
  };
  return {
    fetch,
    service,
    exchanges,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    /** How many requests got each status. */
    count(status: number) {
      return exchanges.filter((e) => e.status === status).length;
    },
  };
}

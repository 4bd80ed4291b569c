import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkServiceOptions } from './check-options.js';
import { MockServerOptionError } from './MockServerOptionError.js';
import { createMockService, type MockService, type MockServiceOptions } from './service.js';

export { MockServerOptionError };

/** Options of {@link startMockServer}. */
export interface MockServerOptions extends Omit<MockServiceOptions, 'baseUrl'> {
  /**
   * Port to listen on; `0` picks a free one.
   * @default 0
   */
  port?: number | undefined;
  /**
   * Loopback address to listen on.
   * @default '127.0.0.1'
   */
  host?: string | undefined;
}

/** A running mock server. */
export interface MockServer {
  /** Base address to pass as `baseUrl`, e.g. `http://127.0.0.1:43123/v1`. */
  readonly url: string;
  /** The service behind it, to seed, inspect or reset. */
  readonly service: MockService;
  /** Stops the server and closes open connections. */
  close(): Promise<void>;
}

const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, *',
  'access-control-expose-headers':
    'date, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset',
  'access-control-max-age': '600',
};

/** The mock listens on loopback only: it accepts any key, so it must not be reachable from elsewhere. */
function checkHost(host: unknown): string {
  const loopback =
    typeof host === 'string' &&
    (host === 'localhost' ||
      host === '::1' ||
      /^127(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(host));
  if (!loopback) {
    throw new MockServerOptionError(
      `host must be a loopback address (127.0.0.1, ::1 or localhost); got ${JSON.stringify(host)}. The mock accepts any key and must not be reachable from other machines.`,
    );
  }
  return host;
}

function checkPort(port: unknown): number {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MockServerOptionError(
      `port must be an integer from 0 to 65535 (0 picks a free one); got ${typeof port === 'string' ? `the string ${JSON.stringify(port)}` : String(port)}.`,
    );
  }
  return port;
}

/** The most of a request body the mock reads; a larger one is refused, and not kept. */
export const MOST_BODY_BYTES = 1_048_576;

/** A request the mock cannot take (too large a body, a target that is no URL). */
class Unreadable extends Error {}

/** Reads a node:http request into a Fetch API `Request` (internal; also used by the soak test). */
export async function toRequest(incoming: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    let size = 0;
    incoming.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MOST_BODY_BYTES) chunks.push(chunk);
      else {
        // Read no further: the answer goes out now, and the connection closes.
        incoming.pause();
        reject(new Unreadable(`the body is larger than ${MOST_BODY_BYTES} bytes`));
      }
    });
    incoming.on('end', resolve);
    incoming.on('error', reject);
  });
  let url: URL;
  try {
    url = new URL(incoming.url ?? '/', origin);
  } catch {
    throw new Unreadable(`the request target ${JSON.stringify(incoming.url)} is not a path`);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const method = incoming.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? null : new Uint8Array(Buffer.concat(chunks));
  return new Request(url, { method, headers, body });
}

/** Writes a Fetch API `Response`, with the CORS headers, to a node:http response (internal). */
export async function send(response: Response, outgoing: ServerResponse): Promise<void> {
  const headers: Record<string, string> = { ...CORS_HEADERS };
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  headers['content-length'] = String(body.length);
  outgoing.writeHead(response.status, headers);
  outgoing.end(body);
}

/**
 * Starts the mock service as a real HTTP server on loopback, with CORS so a
 * browser page can call it. Node.js only.
 *
 * @example
 * ```ts
 * const server = await startMockServer({ port: 0, apiKeys: ['test-key'] });
 * const client = new PetsClient({ apiKey: 'test-key', baseUrl: server.url });
 * await server.close();
 * ```
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const host = checkHost(options.host ?? '127.0.0.1');
  const port = checkPort(options.port ?? 0);
  // Every option is checked before the port is taken: a busy port never hides a wrong option.
  const { host: _host, port: _port, ...serviceOptions } = options;
  checkServiceOptions(serviceOptions);
  const { createServer } = await import('node:http');
  // A request still arriving after 10 s (a body sent a byte at a time) is cut off.
  const server = createServer({ requestTimeout: 10_000, connectionsCheckingInterval: 1_000 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: Error & { code?: string }) => {
      const why =
        error.code === 'EADDRINUSE'
          ? 'is in use: pick another, or 0 for a free one'
          : `cannot be listened on (${error.message})`;
      reject(new MockServerOptionError(`port ${port} of ${host} ${why}.`, { cause: error }));
    });
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : 0;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  const service = createMockService({ ...options, baseUrl: `${origin}/v1` });
  server.on('request', (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const answer =
      incoming.method === 'OPTIONS'
        ? Promise.resolve(new Response(null, { status: 204 }))
        : incoming.method === 'GET' || incoming.method === 'POST'
          ? toRequest(incoming, origin).then(service.handle)
          : Promise.resolve(
              Response.json(
                {
                  code: 'method_not_allowed',
                  message: `${incoming.method} is not part of this service`,
                  status: 405,
                },
                { status: 405, headers: { allow: 'GET, POST, OPTIONS' } },
              ),
            );
    answer
      .then((response) => send(response, outgoing))
      .catch((error: unknown) => {
        const unreadable = error instanceof Unreadable;
        const status = unreadable ? 400 : 500;
        const message = unreadable ? error.message : `the mock failed: ${String(error)}`;
        outgoing.writeHead(status, {
          'content-type': 'application/json',
          connection: 'close',
          ...CORS_HEADERS,
        });
        outgoing.on('finish', () => incoming.destroy());
        outgoing.end(
          JSON.stringify({ code: unreadable ? 'bad_request' : 'mock_failure', message, status }),
        );
      });
  });
  return {
    url: service.baseUrl,
    service,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the server does with one request. */
export interface Fault {
  status?: number;
  /** Header pairs; a name may repeat (e.g. two Retry-After lines). */
  headers?: [string, string][];
  body?: string;
  /** Sends the body in this many pieces, `dripMs` apart. */
  drip?: { pieces: number; dripMs: number };
  /** Never answers (`before-headers`), or stops after half the body (`mid-body`). */
  hang?: 'before-headers' | 'mid-body';
  /** Destroys the socket before answering. */
  reset?: boolean;
  /** The reason phrase of the status line. */
  reason?: string;
  /** The body as bytes (already compressed, say), instead of `body`. */
  bytes?: Buffer;
  /** After `body`, keeps sending this chunk until the client goes away (at most 2,000 times). */
  endless?: Buffer;
}

/** One request as the server saw it. */
export interface Arrival {
  method: string;
  url: string;
  at: number;
  /** When the response to it was fully sent (or the socket dropped). */
  answeredAt?: number;
  body: string;
  headers: IncomingMessage['headers'];
  fault: Fault;
}

/** A JSON answer the fault server sends (not a `Response`: see scripted-fetch for that). */
export const jsonFault = (
  status: number,
  body: unknown,
  headers: [string, string][] = [],
): Fault => ({
  status,
  headers: [['content-type', 'application/json'], ...headers],
  body: JSON.stringify(body),
});
export const errorBody = (status: number, headers: [string, string][] = []) =>
  jsonFault(status, { code: `c${status}`, message: `m${status}`, status }, headers);
export const PET = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };

/**
 * A loopback server scripted per request: any status, headers and raw body,
 * slow drips, hangs before headers or mid-body, socket resets. Requests past
 * the script get `fallback`. It records each request's arrival time.
 */
export async function startFaultServer(
  script: Fault[] = [],
  fallback?: (request: Arrival) => Fault,
) {
  const arrivals: Arrival[] = [];
  const sockets = new Set<Socket>();
  const queue = [...script];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrival: Arrival = {
        method: req.method ?? '',
        url: req.url ?? '',
        at,
        body: Buffer.concat(chunks).toString(),
        headers: req.headers,
        fault: {},
      };
      const fault = queue.shift() ?? fallback?.(arrival) ?? jsonFault(200, PET);
      arrival.fault = fault;
      arrivals.push(arrival);
      const done = () => {
        arrival.answeredAt = Date.now();
      };
      if (fault.reset) {
        req.socket.destroy();
        done();
        return;
      }
      if (fault.hang === 'before-headers') return;
      const headers: string[] = [];
      for (const [name, value] of fault.headers ?? []) headers.push(name, value);
      if (fault.reason === undefined) res.writeHead(fault.status ?? 200, headers);
      else res.writeHead(fault.status ?? 200, fault.reason, headers);
      const body = fault.bytes ?? Buffer.from(fault.body ?? '');
      const { endless } = fault;
      if (endless) {
        res.write(body);
        let sent = 0;
        const more = () => {
          if (res.destroyed || ++sent > 2000) {
            res.end(done);
            return;
          }
          if (res.write(endless)) setImmediate(more);
          else res.once('drain', more);
        };
        res.on('close', done);
        more();
        return;
      }
      if (fault.hang === 'mid-body') {
        res.write(body.subarray(0, Math.floor(body.length / 2)));
        return;
      }
      if (!fault.drip) {
        res.end(body, done);
        return;
      }
      const size = Math.ceil(body.length / fault.drip.pieces);
      let offset = 0;
      const next = () => {
        if (res.destroyed) return;
        if (offset >= body.length) {
          res.end(done);
          return;
        }
        res.write(body.subarray(offset, offset + size));
        offset += size;
        setTimeout(next, fault.drip!.dripMs);
      };
      next();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    arrivals,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A loopback address where nothing listens. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

/**
 * Real, third-party rate limiters on loopback, each in front of a trivial
 * `GET /v1/pets` (200, body `[]`, `content-type: application/json`, to which
 * fastify adds `; charset=utf-8`), for tests and benchmarks that check the
 * client against what limiters really send.
 *
 * express-rate-limit, @fastify/rate-limit and hono-rate-limiter run in this
 * process, each with its own in-memory store and one budget for everyone (a
 * constant key). nginx runs as a child process (`limit_req`) from a config in
 * a temporary directory of its own.
 *
 * What each sends (read from the packages' sources, checked by
 * test/limiters.test.ts); "429 adds" is on top of the same headers:
 *
 * | kind            | every answer                                                                     | 429 adds      |
 * | --------------- | -------------------------------------------------------------------------------- | ------------- |
 * | express-legacy  | X-RateLimit-Limit, -Remaining, -Reset (Unix seconds)                              | Retry-After   |
 * | express-draft-6 | RateLimit-Policy `5;w=2`, RateLimit-Limit, -Remaining, -Reset (seconds left)      | Retry-After   |
 * | express-draft-7 | RateLimit-Policy `5;w=2`, RateLimit `limit=5, remaining=4, reset=2`               | Retry-After   |
 * | express-draft-8 | RateLimit `"5-in-2sec"; r=4; t=2`, RateLimit-Policy `"5-in-2sec"; q=5; w=2; pk=:…:` | Retry-After   |
 * | express-stacked | X-RateLimit-* of a looser limiter (4 × limit per 5 windows) in front, then draft-7's of the limiter | Retry-After |
 * | express-hidden  | draft-6's of a looser limiter (4 × limit per 4 windows) behind the limiter, written over its own | Retry-After, and the limiter's draft-6 |
 * | fastify         | x-ratelimit-limit, -remaining, -reset (seconds left, not a Unix time)             | retry-after   |
 * | fastify-draft   | ratelimit-limit, -remaining, -reset (seconds left); no policy header              | retry-after   |
 * | fastify-retry-after | nothing                                                                      | retry-after   |
 * | hono            | RateLimit-Policy, RateLimit-Limit, -Remaining, -Reset (draft-6; Reset left out when it is 0) | Retry-After |
 * | nginx           | nothing                                                                          | nothing       |
 *
 * The in-process stores all keep a fixed window that starts at the first hit
 * after the previous one ended (not aligned to the clock); nginx is a leaky
 * bucket: `rate` = limit per windowMs, and `burst` (default: limit) with
 * `nodelay` lets burst + 1 requests through at once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import rateLimitFastify from '@fastify/rate-limit';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import {
  MemoryStore as ExpressMemoryStore,
  rateLimit as rateLimitExpress,
} from 'express-rate-limit';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { MemoryStore as HonoMemoryStore, rateLimiter as rateLimitHono } from 'hono-rate-limiter';
import { sleep } from './sleep.js';

export type LimiterKind =
  /** express-rate-limit, `legacyHeaders: true, standardHeaders: false` (X-RateLimit-*; reset in Unix seconds). */
  | 'express-legacy'
  /** express-rate-limit, `standardHeaders: 'draft-6' | 'draft-7' | 'draft-8', legacyHeaders: false`. */
  | 'express-draft-6'
  | 'express-draft-7'
  | 'express-draft-8'
  /** Two express-rate-limit instances: a looser one with X-RateLimit-*, then the limit with draft-7's `RateLimit`. */
  | 'express-stacked'
  /** The limit (draft-6) in front of a looser one (draft-6) whose headers overwrite its own: only its 429s state it. */
  | 'express-hidden'
  /** @fastify/rate-limit with its defaults. */
  | 'fastify'
  /** @fastify/rate-limit with `enableDraftSpec: true`. */
  | 'fastify-draft'
  /** @fastify/rate-limit saying only when to come back: `Retry-After` on a 429, nothing else. */
  | 'fastify-retry-after'
  /** hono-rate-limiter with its defaults (`standardHeaders: 'draft-6'`), keyed by a constant. */
  | 'hono'
  /** nginx `limit_req`: no rate-limit headers at all. */
  | 'nginx';

export const LIMITER_KINDS: readonly LimiterKind[] = [
  'express-legacy',
  'express-draft-6',
  'express-draft-7',
  'express-draft-8',
  'express-stacked',
  'express-hidden',
  'fastify',
  'fastify-draft',
  'fastify-retry-after',
  'hono',
  'nginx',
];

export interface LimiterStats {
  /** Requests that reached the server (any path). */
  requests: number;
  /** Answers below 400. */
  ok: number;
  /** Answers 429: requests the limiter rejected. */
  tooMany: number;
  /**
   * The most requests in flight at once. For nginx it is worked out from the
   * access log's end times and `$request_time` (millisecond resolution), so
   * it is only approximate.
   */
  mostInFlight: number;
}

export interface RunningLimiter {
  /** Base URL ending in `/v1`. */
  url: string;
  stats(): Promise<LimiterStats>;
  /**
   * The most accepted (non-429) requests whose arrivals fall within any
   * half-open interval `[t, t + windowMs)`, sliding over the whole run: the
   * stores' windows start at their first hit (and nginx has no windows), so
   * no fixed grid of windows would be the limiter's own. A limiter that keeps
   * `limit` per fixed window can show up to `2 * limit` here when two of its
   * windows follow each other closely; nginx shows up to
   * `burst + 1 + rate * windowMs`.
   */
  mostPerWindow(windowMs: number): Promise<number>;
  /** Stops the server and every connection to it (nginx: the process), and cleans up. */
  close(): Promise<void>;
}

export interface LimiterOptions {
  /** Requests per window. */
  limit: number;
  windowMs: number;
  /** How long `/v1/pets` takes to answer (default 5 ms). Ignored by nginx, which answers at once. */
  delayMs?: number;
  /** nginx only: `limit_req` burst (default: `limit`). */
  burst?: number;
  /** nginx only: `nodelay` (default true). */
  nodelay?: boolean;
}

/** The one budget everyone shares. */
const KEY = 'everyone';

/** Where an nginx binary is: /usr/sbin/nginx, or on PATH. */
function nginxBinary(): string | undefined {
  const candidates = [
    '/usr/sbin/nginx',
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'nginx')),
  ];
  return candidates.find((path) => path !== 'nginx' && existsSync(path));
}

/** True when an nginx binary is found (/usr/sbin/nginx or on PATH). */
export function nginxAvailable(): boolean {
  return nginxBinary() !== undefined;
}

export function startLimiter(kind: LimiterKind, options: LimiterOptions): Promise<RunningLimiter> {
  if (!(Number.isInteger(options.limit) && options.limit > 0)) {
    throw new RangeError(`limit must be a positive integer, got ${options.limit}`);
  }
  if (!(Number.isFinite(options.windowMs) && options.windowMs > 0)) {
    throw new RangeError(`windowMs must be positive, got ${options.windowMs}`);
  }
  switch (kind) {
    case 'express-legacy':
    case 'express-draft-6':
    case 'express-draft-7':
    case 'express-draft-8':
    case 'express-stacked':
    case 'express-hidden':
      return startExpress(kind, options);
    case 'fastify':
    case 'fastify-draft':
    case 'fastify-retry-after':
      return startFastify(kind, options);
    case 'hono':
      return startHono(options);
    case 'nginx':
      return startNginx(options);
  }
}

// ---------------------------------------------------------------------------
// Counting, shared by every kind.

function mostWithin(arrivals: readonly number[], windowMs: number): number {
  const times = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  let end = 0;
  for (let start = 0; start < times.length; start++) {
    while (end < times.length && times[end]! < times[start]! + windowMs) end++;
    most = Math.max(most, end - start);
  }
  return most;
}

class Counter {
  requests = 0;
  ok = 0;
  tooMany = 0;
  inFlight = 0;
  mostInFlight = 0;
  /** Arrival times (epoch ms) of accepted requests. */
  readonly accepted: number[] = [];

  /** Wraps a request listener so that every request is counted. */
  wrap(listener: RequestListener): RequestListener {
    return (req: IncomingMessage, res: ServerResponse) => {
      const arrived = Date.now();
      this.requests++;
      this.inFlight++;
      this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
      res.once('close', () => {
        this.inFlight--;
        if (res.statusCode === 429) this.tooMany++;
        else if (res.statusCode < 400) {
          this.ok++;
          this.accepted.push(arrived);
        }
      });
      listener(req, res);
    };
  }

  stats(): LimiterStats {
    const { requests, ok, tooMany, mostInFlight } = this;
    return { requests, ok, tooMany, mostInFlight };
  }
}

/** Closes a server and every connection it has, idle or not. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** An in-process limiter: a counted listener on 127.0.0.1, port 0. */
async function running(
  counter: Counter,
  server: Server,
  stop: () => Promise<void>,
): Promise<RunningLimiter> {
  const port = await listen(server);
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    // A turn of the event loop first, so that an answer the caller has just
    // read has been counted ('close' follows the last write).
    stats: async () => {
      await new Promise(setImmediate);
      return counter.stats();
    },
    mostPerWindow: async (windowMs) => {
      await new Promise(setImmediate);
      return mostWithin(counter.accepted, windowMs);
    },
    close: () => {
      closed ??= stop();
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------
// express + express-rate-limit

async function startExpress(
  kind:
    | 'express-legacy'
    | 'express-draft-6'
    | 'express-draft-7'
    | 'express-draft-8'
    | 'express-stacked'
    | 'express-hidden',
  { limit, windowMs, delayMs = 5 }: LimiterOptions,
): Promise<RunningLimiter> {
  const stores: ExpressMemoryStore[] = [];
  const limiter = (
    headers: 'legacy' | 'draft-6' | 'draft-7' | 'draft-8',
    sized = { windowMs, limit },
  ) => {
    const store = new ExpressMemoryStore();
    stores.push(store);
    return rateLimitExpress({
      ...sized,
      store,
      keyGenerator: () => KEY,
      legacyHeaders: headers === 'legacy',
      standardHeaders: headers === 'legacy' ? false : headers,
    });
  };
  const app = express();
  app.disable('x-powered-by');
  if (kind === 'express-stacked') {
    app.use(limiter('legacy', { windowMs: windowMs * 5, limit: limit * 4 }));
    app.use(limiter('draft-7'));
  } else if (kind === 'express-hidden') {
    app.use(limiter('draft-6'));
    app.use(limiter('draft-6', { windowMs: windowMs * 4, limit: limit * 4 }));
  } else {
    app.use(limiter(kind === 'express-legacy' ? 'legacy' : (kind.slice(8) as 'draft-6')));
  }
  app.get('/v1/pets', async (_req, res) => {
    await sleep(delayMs);
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json');
    res.end('[]');
  });
  const counter = new Counter();
  const server = createServer(counter.wrap(app));
  return running(counter, server, async () => {
    await closeServer(server);
    for (const store of stores) store.shutdown(); // their cleanup timers
  });
}

// ---------------------------------------------------------------------------
// fastify + @fastify/rate-limit

async function startFastify(
  kind: 'fastify' | 'fastify-draft' | 'fastify-retry-after',
  { limit, windowMs, delayMs = 5 }: LimiterOptions,
): Promise<RunningLimiter> {
  const quiet = {
    'x-ratelimit-limit': false,
    'x-ratelimit-remaining': false,
    'x-ratelimit-reset': false,
  };
  const counter = new Counter();
  let server: Server | undefined;
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    serverFactory: (handler) => {
      server = createServer(counter.wrap(handler));
      return server;
    },
  });
  await app.register(rateLimitFastify, {
    max: limit,
    timeWindow: windowMs,
    keyGenerator: () => KEY,
    ...(kind === 'fastify-draft' && { enableDraftSpec: true }),
    ...(kind === 'fastify-retry-after' && {
      addHeadersOnExceeding: quiet,
      addHeaders: { ...quiet, 'retry-after': true },
    }),
  });
  app.get('/v1/pets', async (_request, reply) => {
    await sleep(delayMs);
    return reply.code(200).type('application/json').send('[]');
  });
  await app.ready();
  // fastify.listen would listen on the server too; listening ourselves keeps
  // one code path (and the port) for every in-process kind.
  return running(counter, server!, async () => {
    await closeServer(server!).catch(() => {});
    await app.close();
  });
}

// ---------------------------------------------------------------------------
// hono + hono-rate-limiter

async function startHono({
  limit,
  windowMs,
  delayMs = 5,
}: LimiterOptions): Promise<RunningLimiter> {
  const store = new HonoMemoryStore();
  const app = new Hono();
  app.use('*', rateLimitHono({ windowMs, limit, store, keyGenerator: () => KEY }));
  app.get('/v1/pets', async (c) => {
    await sleep(delayMs);
    return c.body('[]', 200, { 'content-type': 'application/json' });
  });
  const counter = new Counter();
  const server = createServer(counter.wrap(getRequestListener(app.fetch)));
  return running(counter, server, async () => {
    await closeServer(server);
    store.shutdown(); // its cleanup timer
  });
}

// ---------------------------------------------------------------------------
// nginx limit_req

/** Live nginx children, killed if this process exits without closing them. */
const children = new Set<ChildProcess>();
let exitHookInstalled = false;

function killChildrenOnExit() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
}

/** A port that was free a moment ago: bind port 0, read it, close. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const quote = (path: string) => `"${path.replace(/["\\]/g, '\\$&')}"`;

function nginxConfig(
  dir: string,
  port: number,
  { limit, windowMs, burst = limit, nodelay = true }: LimiterOptions,
): string {
  const perMinute = Math.max(1, Math.round((limit * 60_000) / windowMs));
  const at = (name: string) => quote(join(dir, name));
  return `daemon off;
master_process off;
worker_processes 1;
pid ${at('nginx.pid')};
lock_file ${at('nginx.lock')};
error_log ${at('error.log')} warn;

events {
  worker_connections 1024;
}

http {
  log_format counted '$msec $status $request_time';
  access_log ${at('access.log')} counted;
  client_body_temp_path ${at('client_body')};
  proxy_temp_path ${at('proxy')};
  fastcgi_temp_path ${at('fastcgi')};
  uwsgi_temp_path ${at('uwsgi')};
  scgi_temp_path ${at('scgi')};

  # One budget for everyone. The key must not be empty: nginx does not count
  # requests whose key is empty, and $server_name is empty unless set.
  limit_req_zone $server_name zone=z:1m rate=${perMinute}r/m;

  server {
    listen 127.0.0.1:${port};
    server_name limiter;
    limit_req zone=z burst=${burst}${nodelay ? ' nodelay' : ''};
    limit_req_status 429;

    # A static file, not "return 200": return runs in the rewrite phase,
    # before limit_req (preaccess), so it would never be limited.
    location = /v1/pets {
      root ${at('www')};
      default_type application/json;
    }
  }
}
`;
}

interface LogLine {
  /** Epoch ms when the answer was logged (its end). */
  end: number;
  status: number;
  /** Seconds from the first byte read to the log write. */
  took: number;
}

function parseLog(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of text.split('\n')) {
    const [msec, status, took] = line.trim().split(' ');
    if (msec === undefined || status === undefined || took === undefined) continue;
    lines.push({ end: Number(msec) * 1000, status: Number(status), took: Number(took) });
  }
  return lines;
}

async function startNginx(options: LimiterOptions): Promise<RunningLimiter> {
  const binary = nginxBinary();
  if (binary === undefined) throw new Error('nginx is not installed (/usr/sbin/nginx or on PATH)');
  const dir = await mkdtemp(join(tmpdir(), 'limiter-nginx-'));
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  await mkdir(join(dir, 'www', 'v1'), { recursive: true });
  await writeFile(join(dir, 'www', 'v1', 'pets'), '[]');
  await writeFile(join(dir, 'access.log'), '');
  await writeFile(conf, nginxConfig(dir, port, options));

  const child = spawn(binary, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  killChildrenOnExit();
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    if (stderr.length < 10_000) stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      children.delete(child);
      resolve();
    });
    // A spawn error (no binary after all) is followed by 'close', not always 'exit'.
    child.once('error', (error) => {
      stderr += String(error);
      children.delete(child);
      resolve();
    });
  });

  const stop = async () => {
    if (children.has(child)) child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(killer);
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!children.has(child)) {
      const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
      await stop();
      throw new Error(`nginx exited before it listened: ${stderr}${log}`.trim());
    }
    if (await accepts(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not listen on 127.0.0.1:${port} within 10 s: ${stderr}`);
    }
    await sleep(20);
  }

  // nginx writes a request's log line just after its answer; wait until the
  // log stops growing so that an answer just read is counted.
  const log = async () => {
    let text = await readFile(join(dir, 'access.log'), 'utf8');
    for (let tries = 0; tries < 20; tries++) {
      await sleep(20);
      const again = await readFile(join(dir, 'access.log'), 'utf8');
      if (again === text) break;
      text = again;
    }
    return parseLog(text);
  };

  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats: async () => {
      const lines = await log();
      // In flight: sweep the intervals [end - took, end], starts before ends.
      const events = lines.flatMap(
        ({ end, took }): Array<[number, number]> => [
          [end - took * 1000, 1],
          [end, -1],
        ],
      );
      events.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
      let inFlight = 0;
      let mostInFlight = 0;
      for (const [, step] of events) {
        inFlight += step;
        mostInFlight = Math.max(mostInFlight, inFlight);
      }
      return {
        requests: lines.length,
        ok: lines.filter(({ status }) => status < 400).length,
        tooMany: lines.filter(({ status }) => status === 429).length,
        mostInFlight,
      };
    },
    mostPerWindow: async (windowMs) => {
      const lines = await log();
      const accepted = lines
        .filter(({ status }) => status < 400)
        .map(({ end, took }) => end - took * 1000);
      return mostWithin(accepted, windowMs);
    },
    close: () => {
      closed ??= stop();
      return closed;
    },
  };
}

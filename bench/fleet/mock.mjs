// The mock service for the fleet benchmark, in its own process:
// `node bench/fleet/mock.mjs LIMIT WINDOW_MS LATENCY_MS`. Prints its base URL.
// Besides the API it answers GET /__stats (what each window saw) and
// POST /__reset. A window is named by the X-RateLimit-Limit and -Reset its
// responses carried; it is "closed" once a response said 0 remain or was a 429,
// and every request arriving in it after that is counted as sent into a closed window.
import { createServer } from 'node:http';
import { createMockService } from '../../dist/mock.js';

const [limit, windowMs, latencyMs] = process.argv.slice(2).map(Number);
const service = createMockService({
  plan: 'enterprise',
  limits: { perMinute: limit, perDay: 10_000_000, windowMs },
  seed: [{ name: 'Rex', categoryId: 1, status: 'available' }],
  baseUrl: 'http://127.0.0.1/v1',
});

let windows = new Map();
const windowOf = (id) => {
  let w = windows.get(id);
  if (!w) {
    w = { ok: 0, limited: 0, intoClosed: 0, closed: false };
    windows.set(id, w);
  }
  return w;
};

const server = createServer(async (req, res) => {
  if (req.url === '/__stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(Object.fromEntries(windows)));
    return;
  }
  if (req.url === '/__reset') {
    windows = new Map();
    service.reset();
    res.end();
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  for await (const _ of req);
  const response = await service.handle(
    new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers }),
  );
  const id = `${response.headers.get('x-ratelimit-limit')}:${response.headers.get('x-ratelimit-reset')}`;
  const w = windowOf(id);
  if (w.closed) w.intoClosed++;
  if (response.status === 429) w.limited++;
  else if (response.ok) w.ok++;
  if (response.status === 429 || response.headers.get('x-ratelimit-remaining') === '0')
    w.closed = true;
  const body = Buffer.from(await response.arrayBuffer());
  const out = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  out['content-length'] = String(body.length);
  setTimeout(() => {
    res.writeHead(response.status, out);
    res.end(body);
  }, latencyMs);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}/v1`);
});

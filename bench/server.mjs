// Loopback server for the benchmark, run in its own process so that its work
// does not share the client's event loop. Prints its port, then serves until killed.
import { createServer } from 'node:http';

const pets = Array.from({ length: 100 }, (_, i) => ({
  id: i + 1,
  name: `pet-${i + 1}`,
  categoryId: (i % 7) + 1,
  status: ['available', 'pending', 'sold'][i % 3],
}));
const list = JSON.stringify(pets);
const one = JSON.stringify(pets[0]);
const headers = (body) => ({
  'content-type': 'application/json',
  'content-length': Buffer.byteLength(body),
  'x-ratelimit-limit': '1000000',
  'x-ratelimit-remaining': '999999',
  'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
});

const server = createServer((req, res) => {
  if (req.method === 'POST') {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, headers(one));
      res.end(one);
    });
    return;
  }
  const body = req.url.startsWith('/v1/pets/') ? one : list;
  res.writeHead(200, headers(body));
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));

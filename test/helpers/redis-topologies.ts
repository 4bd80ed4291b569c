import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis-server.js';
import { serverEnv } from './server-env.js';
import { sleep } from './sleep.js';

const run = promisify(execFile);

/** Runs `redis-cli -p PORT ...args` on loopback; its output, trimmed. */
export async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    env: serverEnv(),
  });
  return stdout.trim();
}

/** Starts `redis-server` with `args` on `port` and resolves once it accepts connections. */
function server(port: number, args: string[], dir: string): Promise<ChildProcess> {
  const child = spawn('redis-server', args, {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: serverEnv(),
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`redis-server on ${port} did not start`)),
      10_000,
    );
    child.once('error', reject);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += String(chunk);
      if (/Ready to accept connections|Sentinel ID is/.test(output)) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        resolve(child);
      }
    });
    child.stderr?.resume();
  });
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting until ${what}`);
}

const stop = (children: ChildProcess[]) =>
  Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );

const BASE = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

/** A real Redis Cluster of 3 masters, each with one replica, on loopback. */
export interface RedisCluster {
  readonly ports: number[];
  /** `{ url }` of every node, for node-redis's `createCluster({ rootNodes })`. */
  readonly rootNodes: Array<{ url: string }>;
  /** `{ host, port }` of every node, for ioredis's `new Cluster(nodes)`. */
  readonly nodes: Array<{ host: string; port: number }>;
  /**
   * Fails over the master holding keys that match `pattern` to its replica
   * (`CLUSTER FAILOVER`), and waits until done.
   */
  failover(pattern: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const ports: number[] = [];
  while (ports.length < 6) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const children = await Promise.all(
    ports.map((port) =>
      server(
        port,
        [
          '--port',
          String(port),
          ...BASE,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '2000',
        ],
        dir,
      ),
    ),
  );
  try {
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { env: serverEnv() },
    );
    await until('the cluster is ok on every node', async () => {
      for (const port of ports) {
        if (!(await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
      }
      return true;
    });
  } catch (error) {
    await stop(children);
    throw error;
  }
  const masterOf = async (pattern: string) => {
    const nodes = (await cli(ports[0]!, 'cluster', 'nodes')).split('\n').map((l) => l.split(' '));
    for (const [id, address, flags] of nodes) {
      if (!flags?.includes('master')) continue;
      const port = Number(address!.split(':')[1]!.split('@')[0]);
      if ((await cli(port, '--scan', '--pattern', pattern)) !== '') return { id: id!, nodes };
    }
    throw new Error(`no master holds a key matching ${pattern}`);
  };
  return {
    ports,
    rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })),
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    async failover(pattern) {
      const master = await masterOf(pattern);
      const replica = master.nodes.find(
        ([, , flags, masterId]) => flags?.includes('slave') && masterId === master.id,
      );
      if (!replica) throw new Error('the master has no replica');
      const port = Number(replica[1]!.split(':')[1]!.split('@')[0]);
      await cli(port, 'cluster', 'failover');
      await until('the replica took over', async () =>
        (await cli(port, 'role')).startsWith('master'),
      );
    },
    async stop() {
      await stop(children);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A master, a replica and three Sentinels watching them as `mymaster`, on loopback. */
export interface RedisSentinels {
  readonly name: string;
  /** `{ host, port }` of each Sentinel. */
  readonly sentinels: Array<{ host: string; port: number }>;
  /** The port of the master now. */
  master(): Promise<number>;
  /**
   * Kills the master (SIGKILL), as when its machine dies, and waits until the
   * Sentinels promoted the replica and it takes writes.
   */
  failover(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSentinels(): Promise<RedisSentinels> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const name = 'mymaster';
  const [masterPort, replicaPort, ...sentinelPorts] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const children: ChildProcess[] = [];
  try {
    children.push(await server(masterPort!, ['--port', String(masterPort), ...BASE], dir));
    children.push(
      await server(
        replicaPort!,
        ['--port', String(replicaPort), ...BASE, '--replicaof', '127.0.0.1', String(masterPort)],
        dir,
      ),
    );
    await until('the replica is in sync', async () =>
      (await cli(replicaPort!, 'info', 'replication')).includes('master_link_status:up'),
    );
    for (const port of sentinelPorts) {
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          '',
        ].join('\n'),
      );
      children.push(await server(port!, [file, '--sentinel'], dir));
    }
    await until('every Sentinel sees the replica and the others', async () => {
      for (const port of sentinelPorts) {
        const info = await cli(port!, 'sentinel', 'master', name);
        const field = (key: string) => Number(info.split('\n')[info.split('\n').indexOf(key) + 1]);
        if (field('num-slaves') < 1 || field('num-other-sentinels') < 2) return false;
      }
      return true;
    });
  } catch (error) {
    await stop(children);
    throw error;
  }
  const master = async () =>
    Number(
      (await cli(sentinelPorts[0]!, 'sentinel', 'get-master-addr-by-name', name)).split('\n')[1],
    );
  return {
    name,
    sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port: port! })),
    master,
    async failover() {
      const before = await master();
      children[before === masterPort ? 0 : 1]!.kill('SIGKILL');
      await until('the Sentinels name the new master', async () => (await master()) !== before);
      await until('the new master accepts writes', async () =>
        (await cli(await master(), 'role')).startsWith('master'),
      );
    },
    async stop() {
      await stop(children);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

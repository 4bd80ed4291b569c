import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { serverEnv } from './server-env.js';

/** A real redis-server of our own, on a free loopback port, persisting nothing. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** Pauses the server (SIGSTOP) or resumes it (SIGCONT). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

/** Starts `redis-server` (Debian's package; `.ci/run` installs it). */
export async function startRedis(): Promise<RedisServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv() },
    );
    const ready = await new Promise<boolean>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => resolve(false), 10_000);
      child.once('error', (error) =>
        reject(
          new Error(
            `Could not start redis-server (${error.message}): install it, e.g. apt-get install redis-server.`,
          ),
        ),
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        output += String(chunk);
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (!ready) {
      child.kill('SIGKILL');
      if (attempt < 3) continue; // the port was taken meanwhile
      throw new Error(`redis-server did not start on 127.0.0.1:${port}`);
    }
    child.stdout?.resume();
    child.stderr?.resume();
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      process: child,
      pause: () => child.kill('SIGSTOP'),
      resume: () => child.kill('SIGCONT'),
      stop: () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGCONT');
          child.kill('SIGTERM');
        }),
    };
  }
}

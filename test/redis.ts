/**
 * A real `redis-server` for tests: own port on loopback, no persistence, stopped in `afterAll`.
 * Needs Debian's redis-server (`apt-get install -y redis-server`); it is never started as a service.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './harness.ts';

export interface RedisProcess {
  url: string;
  port: number;
  process: ChildProcess;
  logs(): string;
  stop(): Promise<void>;
}

const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p)) ?? 'redis-server';

export async function startRedis(options: { readyTimeoutMs?: number } = {}): Promise<RedisProcess> {
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const handle: RedisProcess = {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    logs: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`redis-server did not start in time; output:\n${output}`)),
      options.readyTimeoutMs ?? 10_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not run ${REDIS_SERVER} (apt-get install -y redis-server): ${err.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with code ${code} before it was ready; output:\n${output}`));
    });
  });
  return handle;
}

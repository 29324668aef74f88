/**
 * A real `rabbitmq-server` for tests: own AMQP, distribution and epmd ports on loopback, its own
 * node name, database and logs in a temp dir, no plugins; stopped (with its epmd) in `afterAll`.
 * Needs Debian's rabbitmq-server (`apt-get install -y rabbitmq-server`; .ci/run installs it); it is
 * never started as a service. It takes 5–20 s to boot, so each test file shares one.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../test/harness.ts';

export interface RabbitProcess {
  url: string;
  port: number;
  logs(): string;
  /** Stop the broker and start it again on the same port with the same data (durable queues and persistent messages survive). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const SERVER = ['/usr/lib/rabbitmq/bin/rabbitmq-server', '/usr/sbin/rabbitmq-server'].find((p) => existsSync(p)) ?? 'rabbitmq-server';
const EPMD = ['/usr/bin/epmd', '/usr/lib/erlang/bin/epmd'].find((p) => existsSync(p)) ?? 'epmd';

export async function startRabbit(options: { readyTimeoutMs?: number } = {}): Promise<RabbitProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'eng-rabbit-'));
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(dir, 'rabbitmq.conf'), 'loopback_users = none\n');
  const env = {
    ...process.env,
    HOME: dir, // its Erlang cookie lives here, not in the user's home
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_NODENAME: `eng-test-${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_PID_FILE: join(dir, 'rabbit.pid'),
    // its own epmd, so brokers of parallel test files never meet
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
  };
  let child!: ChildProcess;
  let output = '';
  const stopEpmd = () => spawnSync(EPMD, ['-kill'], { env, stdio: 'ignore', timeout: 5000 });
  /** Stop the broker process (its data stays, for a restart). */
  const halt = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => {
        try {
          process.kill(-(child.pid as number), 'SIGKILL');
        } catch {
          // gone
        }
      }, 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const boot = async () => {
    // detached: the script and the Erlang VM it starts form one process group, stopped together
    child = spawn(SERVER, [], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let booting = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`rabbitmq-server did not start in time; output:\n${booting}`)),
        options.readyTimeoutMs ?? 90_000,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        booting += chunk.toString();
        if (/Starting broker\.\.\. completed|Server startup complete/.test(booting)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`could not run ${SERVER} (apt-get install -y rabbitmq-server): ${err.message}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`rabbitmq-server exited with code ${code} before it was ready; output:\n${booting}`));
      });
    });
  };
  const handle: RabbitProcess = {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    port,
    logs: () => output,
    async restart() {
      await halt();
      await boot();
    },
    async stop() {
      await halt();
      stopEpmd();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await boot();
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

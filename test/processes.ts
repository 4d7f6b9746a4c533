// Programs the tests and the bench start beside the origin: Debian's tools, free ports, a child
// process that is ready once it answers, redis-server. No side effect on import, so bench/ can use
// it without test/helpers.ts's fetch check.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');

/** A program from Debian's packages (nginx, redis-server, wrk, chromium), or null when it is not installed (.ci/run installs them; the bench does not). */
export function findProgram(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin'])) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

// `npm test` gives each of its workers a block of ports of its own (TEST_PORT_BASE, below the
// kernel's ephemeral range): a port handed to redis-server or nginx is then never the one the
// kernel hands another file's bind(0) or outgoing connection before the program binds it.
const PORT_BLOCK = 250;
const portBase = Number(process.env.TEST_PORT_BASE ?? 0);

/** Where worker `slot`'s block of ports starts (test/run.ts passes it on as TEST_PORT_BASE). */
export const portBlockOf = (slot: number) => 20_000 + slot * PORT_BLOCK;

/** What `npm run depot` runs: the CLI, bundled once and reused until a source changes. */
export const DEPOT_CLI = 'build/cli/launch.mjs';
let portsHanded = 0;

/** A free loopback port for a program to bind: the next free one of this worker's block, or one the kernel hands out. */
export async function freePort(): Promise<number> {
  if (!portBase) return listenOn(0).then(closeAndReturnPort);
  // Round the block: a port handed out earlier is free again once its program stopped.
  for (let tried = 0; tried < PORT_BLOCK; tried++) {
    const port = portBase + (portsHanded++ % PORT_BLOCK);
    const server = await listenOn(port).catch(() => null);
    if (server) return closeAndReturnPort(server);
  }
  throw new Error(`No free port left in this worker's block ${portBase}-${portBase + PORT_BLOCK - 1}`);
}

function listenOn(port: number): Promise<ReturnType<typeof createNetServer>> {
  const server = createNetServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function closeAndReturnPort(server: ReturnType<typeof createNetServer>): Promise<number> {
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a server process and waits until it answers `probe` with a 2xx (bounded), then hands back a stopper. */
export async function startProcess(command: string, args: string[], probe: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`);
    const ok = await fetch(probe).then(
      (r) => r.arrayBuffer().then(() => r.ok),
      () => false,
    );
    if (ok) return { child, stop: () => stopProcess(child) };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stopProcess(child);
  throw new Error(`${command} did not answer ${probe} within 20 s`);
}

/** SIGTERM, then SIGKILL if the process has not exited 5 s later (a frozen one never would). */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

export type RedisServer = {
  url: string;
  stop: () => Promise<void>;
  start: () => Promise<void>;
  /** SIGSTOP / SIGCONT: Redis hangs with its connections open, the outage a timeout must catch. */
  freeze: () => void;
  thaw: () => void;
};

/**
 * A real redis-server on a loopback port (`port`, or a free one); stop and start it again to test
 * outages. Nothing is saved unless `keepIn` names a folder: then its data survives a restart (an
 * append-only file).
 */
export async function startRedis(
  program: string,
  options: { port?: number; keepIn?: string } = {},
): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  let child: ChildProcess | null = null;
  const persistence = options.keepIn
    ? ['--dir', options.keepIn, '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  const start = async () => {
    child = spawn(program, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], {
      stdio: 'ignore',
    });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (await ping(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not answer on port ${port} within 10 s`);
  };
  await start();
  const signal = (name: NodeJS.Signals) => () => void (child as ChildProcess | null)?.kill(name);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (child) await stopProcess(child);
    },
    start,
    freeze: signal('SIGSTOP'),
    thaw: signal('SIGCONT'),
  };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.setTimeout(1000, () => socket.destroy());
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

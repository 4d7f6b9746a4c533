import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { currentTreeDir, openTree } from '../server/tree/open.ts';
import { downloadPath } from '../server/versions/paths.ts';
import { startProcess } from '../test/processes.ts';
import { WRK, buildWithBigJar, cpuMicros, fmt, median, report, runWrk, type CpuFigures } from './harness.ts';

/**
 * wrk: every request from a new client, named in X-Forwarded-For (the origin trusts loopback):
 * 10.x.y.z counting up from the offset passed after `--`, so no round repeats another's clients.
 */
const NEW_CLIENTS_LUA = `
local n = 0
init = function(args) n = tonumber(args[1]) end
request = function()
  n = n + 1
  local address = string.format("10.%d.%d.%d", math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
  return wrk.format(nil, nil, { ["X-Forwarded-For"] = address })
end
`;

const CONNECTIONS = 8;
/** Addresses a round may use: 10.0.0.0/8 holds 16M, a round at a few thousand answers a second a few tens of thousands. */
const CLIENTS_PER_ROUND = 1_000_000;

/** wrk's options, and what follows the URL (`-- <script arguments>`). */
type WrkArgs = { options: string[]; scriptArgs: string[] };

/** One wrk run against `url` while the origin `pid`'s CPU time (user + system, /proc) is read before and after. */
async function loadWithCpu(pid: number, url: string, seconds: number, wrk: WrkArgs): Promise<CpuFigures> {
  const before = cpuMicros(pid);
  const { requestsPerSecond, requests } = await runWrk([
    `-c${CONNECTIONS}`,
    `-d${seconds}s`,
    ...wrk.options,
    url,
    ...wrk.scriptArgs,
  ]);
  return { requestsPerSecond, cpuMicrosPerRequest: (cpuMicros(pid) - before) / requests };
}

/** The origins compared: counting on, off, and off once more (the same run's noise floor). */
const ORIGINS = [
  { name: 'on', port: 4111, counts: 'on' },
  { name: 'off', port: 4112, counts: 'off' },
  { name: 'off again', port: 4113, counts: 'off' },
] as const;
type Side = (typeof ORIGINS)[number]['name'];

/**
 * Issue 17: a JAR answer from the tree with download counting on against DOWNLOAD_COUNTS=off, on
 * the embedded store without request log, with the rate limit off (counting parses each new
 * client's address itself) and on, in three patterns: the demo's newest JAR (614 bytes) from one
 * client repeating (counted once, then skipped), the same from a new client every request (each
 * counted, its digest stored), and a 5 MB JAR (as plugins weigh) from a new client every request.
 * One origin is loaded at a time, in short runs taken in turn (on, off, off again, then the other
 * way round), so a drift of the machine falls on all alike; loaded at once, the origins and their
 * wrk processes fought over the 2 cores and two identical origins read 0.66 to 1.29 apart. A
 * second origin with counting off shows how far identical origins read apart in the same runs.
 * Figures: the origin's own CPU time per answer (all its threads), and requests/s, and what
 * counting costs per answer in µs (on less off). Target: at most 5% apart.
 */
export async function benchCounting(
  ws: { dataDir: string; distDir: string; dir: string },
  rounds: number,
  seconds: number,
) {
  console.log(`\n# Download counting (wrk, ${seconds} s per run, ${rounds} rounds, one origin loaded at a time)`);
  if (!WRK) return console.log('wrk not found: apt-get install -y wrk (a Lua script names a new client per request)');
  const big = await buildWithBigJar(ws);
  const tree = await openTree((await currentTreeDir(ws.distDir))!);
  const small = downloadPath(tree.catalog.versions.find((version) => version.id !== big)!.id);
  const script = join(ws.dir, 'new-clients.lua');
  await writeFile(script, NEW_CLIENTS_LUA);
  const oneClient = () => ({ options: ['-H', 'X-Forwarded-For: 198.51.100.1'], scriptArgs: [] });
  const newClients = (run: number) => ({
    options: ['-s', script],
    scriptArgs: ['--', String(run * CLIENTS_PER_ROUND)],
  });
  const patterns: { name: string; path: string; args: (run: number) => WrkArgs }[] = [
    { name: 'one repeating client', path: small, args: oneClient },
    { name: 'a new client each request', path: small, args: newClients },
    { name: 'a new client each request, 5 MB JAR', path: downloadPath(big), args: newClients },
  ];
  // Without the rate limit, counting resolves each client's address itself; with it (the default,
  // at a limit no run reaches) the limiter has already, and every origin keeps a window per client.
  for (const [limiter, rateLimit] of [
    ['rate limit off', '0'],
    ['rate limit on', '9999999/1h'],
  ] as const) {
    const origins: { name: Side; port: number; stop: () => Promise<void>; pid: number }[] = [];
    try {
      for (const { name, port, counts } of ORIGINS) {
        const origin = await startProcess(
          process.execPath,
          ['--import', 'tsx', 'server/main.ts'],
          `http://127.0.0.1:${port}${small}`,
          {
            PORT: String(port),
            HOST: '127.0.0.1',
            RATE_LIMIT: rateLimit,
            LOG_REQUESTS: 'off',
            TRUST_PROXY: '127.0.0.1',
            DOWNLOAD_COUNTS: counts,
            DIST_DIR: ws.distDir,
            DATA_DIR: ws.dataDir,
            STORAGE_DIR: join(ws.dir, `storage-${port}-${rateLimit === '0' ? 'unlimited' : 'limited'}`),
          },
        );
        origins.push({ name, port, stop: origin.stop, pid: origin.child.pid! });
      }
      for (const { name: pattern, path, args } of patterns) {
        const figures = new Map<Side, CpuFigures[]>(ORIGINS.map(({ name }) => [name, []]));
        // Each run its own clients: a client counted in one run is not new in the next.
        let run = 0;
        const inTurn = async (round: number) => {
          for (const { name, pid, port } of round % 2 ? [...origins].reverse() : origins) {
            const figure = await loadWithCpu(pid, `http://127.0.0.1:${port}${path}`, seconds, args(run++));
            if (round >= 0) figures.get(name)!.push(figure);
          }
        };
        await inTurn(-1); // warm-up (JIT, file cache)
        for (let round = 0; round < rounds; round++) await inTurn(round);
        const cpu = (side: Side) => median(figures.get(side)!.map((f) => f.cpuMicrosPerRequest));
        const rps = (side: Side) => median(figures.get(side)!.map((f) => f.requestsPerSecond));
        console.log(`${pattern}, ${limiter}:`);
        report('  JAR, counting: CPU', cpu('on'), 'µs/req', 'DOWNLOAD_COUNTS=off', cpu('off'), '<= 1.05');
        report('  JAR, counting', rps('on'), 'req/s', 'off, same runs', rps('off'), '>= 0.95');
        report('  noise: off again, CPU', cpu('off again'), 'µs/req', 'off, same runs', cpu('off'));
        console.log(`${''.padEnd(36)}counting costs ${fmt(cpu('on') - cpu('off'))} µs of CPU per answer`);
      }
    } finally {
      for (const origin of origins) await origin.stop();
    }
  }
}

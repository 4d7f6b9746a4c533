import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { runBuild } from '../build/build.ts';
import { standaloneNginxConfig } from '../build/deploy-configs.ts';
import { findProgram, startProcess, startRedis } from '../test/processes.ts';
import { WRK, load, median, report } from './harness.ts';

const PORTS = { embedded: 4120, origins: [4121, 4122], nginx: 4123, redis: 4124 };
const PATHS = { static: '/api/plugin-versions/latest/papermc', dynamic: '/api/plugin-versions/latest/PaperMC' };

/**
 * The deployment at scale beside the embedded default, same tree, same machine: nginx (the build's
 * nginx.conf, 2 workers) in front of two origins sharing a redis-server, against one origin process.
 * The static answer is a precomputed file; the dynamic one a name in another letter case, which
 * only an origin answers. No rate limit and no request log anywhere, so serving alone is measured.
 */
export async function benchScale(
  ws: { dataDir: string; distDir: string; dir: string },
  rounds: number,
  seconds: number,
) {
  console.log(
    `\n# At scale: nginx + 2 origins + Redis vs the embedded single process (${WRK ? 'wrk' : 'autocannon'}, ${seconds} s per run, ${rounds} rounds)`,
  );
  const nginxBin = findProgram('nginx');
  const redisBin = findProgram('redis-server');
  if (!nginxBin || !redisBin) {
    console.log('nginx or redis-server not found: apt-get install -y nginx redis-server for this benchmark');
    return;
  }
  const distDir = resolve(ws.distDir);
  await runBuild({
    ...ws,
    rateLimit: null,
    deploy: {
      origins: PORTS.origins.map((port) => `127.0.0.1:${port}`),
      listen: `127.0.0.1:${PORTS.nginx}`,
      realIpFrom: [],
      distDir,
      originUrl: `http://127.0.0.1:${PORTS.embedded}`,
    },
  });
  const env = {
    HOST: '127.0.0.1',
    RATE_LIMIT: '0',
    LOG_REQUESTS: 'off',
    DIST_DIR: ws.distDir,
    DATA_DIR: ws.dataDir,
    STORAGE_DIR: join(ws.dir, 'storage'),
  };
  const started: { stop: () => Promise<void> }[] = [];
  try {
    started.push(await startRedis(redisBin, { port: PORTS.redis }));
    started.push(
      await startProcess(
        process.execPath,
        ['--import', 'tsx', 'server/main.ts'],
        `http://127.0.0.1:${PORTS.embedded}${PATHS.static}`,
        { ...env, PORT: String(PORTS.embedded) },
      ),
    );
    for (const port of PORTS.origins) {
      started.push(
        await startProcess(
          process.execPath,
          ['--import', 'tsx', 'server/main.ts'],
          `http://127.0.0.1:${port}${PATHS.static}`,
          { ...env, PORT: String(port), REDIS_URL: `redis://127.0.0.1:${PORTS.redis}`, TRUST_PROXY: '127.0.0.1' },
        ),
      );
    }
    const nginxDir = join(ws.dir, 'nginx');
    await mkdir(nginxDir, { recursive: true });
    const conf = join(nginxDir, 'nginx.conf');
    await writeFile(conf, standaloneNginxConfig(nginxDir, join(distDir, 'current/nginx.conf')));
    started.push(
      await startProcess(nginxBin, ['-c', conf, '-g', 'daemon off;'], `http://127.0.0.1:${PORTS.nginx}${PATHS.static}`),
    );

    for (const [kind, path] of Object.entries(PATHS)) {
      const [embedded, scaled] = [
        `http://127.0.0.1:${PORTS.embedded}${path}`,
        `http://127.0.0.1:${PORTS.nginx}${path}`,
      ];
      for (const url of [embedded, scaled]) await load(url, 32, 2);
      const figures = { embedded: [] as number[], scaled: [] as number[] };
      for (let round = 0; round < rounds; round++) {
        figures.embedded.push(await load(embedded, 32, seconds));
        figures.scaled.push(await load(scaled, 32, seconds));
      }
      report(
        `${kind}: nginx + 2 origins`,
        median(figures.scaled),
        'req/s',
        'embedded, one process',
        median(figures.embedded),
      );
    }
  } finally {
    for (const process of started.reverse()) await process.stop();
  }
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  findProgram,
  makeWorkspace,
  runDepot,
  snapshotFiles,
  spawnOrigin,
  startRedis,
  until,
  type OriginProcess,
} from './helpers.ts';

// Issue 30 items 1 and 7: `depot token revoke` is refused at once on every origin. Two full origins
// (server/main.ts, each its own process) share one Redis, where `depot token add` put the token
// because REDIS_URL is set; both publish (PUBLISH=on, the default) on one data/.

const REDIS = findProgram('redis-server');
if (!REDIS) console.warn('publish-revoke-origins.test.ts: redis-server not installed, not run');

/** A demo version the PATCHes change. */
const VERSION_ID = 'plugin-1768035600000-f8d161e085';

const patch = (origin: OriginProcess, token: string, body: unknown) =>
  fetch(`${origin.url}/api/plugin-versions/${VERSION_ID}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });

if (REDIS)
  test('a revoked token is refused by the very next request on each of two origins sharing Redis', async () => {
    const workspace = await makeWorkspace();
    const redis = await startRedis(REDIS);
    const env = { REDIS_URL: redis.url };
    const origins: OriginProcess[] = [];
    try {
      const added = await runDepot(
        ['token', 'add', 'alice', '--name', 'ci', '--scopes', 'publish,edit,withdraw', '--any-version'],
        workspace,
        env,
      );
      assert.is(added.code, 0, added.stderr);
      const { id, token } = JSON.parse(added.stdout) as { id: string; token: string };
      // The token is on Redis, not in STORAGE_DIR's files: neither origin could read it otherwise.
      assert.not.match(JSON.stringify(await snapshotFiles(workspace.dir)), /publish-tokens/);
      origins.push(await spawnOrigin(workspace, env), await spawnOrigin(workspace, env));

      // Accepted on both: each PATCH is served by the origin that answered it.
      for (const [i, channel] of (['beta', 'alpha'] as const).entries()) {
        const answer = await patch(origins[i]!, token, { channel });
        const body = (await answer.json()) as { version: { channel: string; id: string } };
        assert.is(answer.status, 200, JSON.stringify(body));
        assert.is(body.version.channel, channel);
      }
      await until(() => !existsSync(join(workspace.distDir, '.build.lock')), 'the PATCHes’ builds', 120_000);
      const data = await snapshotFiles(workspace.dataDir);

      const revoked = await runDepot(['token', 'revoke', id], workspace, env);
      assert.is(revoked.code, 0, revoked.stderr);
      assert.is((JSON.parse(revoked.stdout) as { revoked: boolean }).revoked, true);

      // The very next request on each origin, no wait: 401 with WWW-Authenticate: Bearer.
      for (const origin of origins) {
        const answer = await patch(origin, token, { channel: 'release' });
        const body = (await answer.json()) as { error: string };
        assert.is(answer.status, 401, `${origin.url}: ${JSON.stringify(body)}`);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer\b/);
        assert.not.ok(JSON.stringify(body).includes(token));
      }
      assert.equal(await snapshotFiles(workspace.dataDir), data);
    } finally {
      for (const origin of origins) {
        origin.child.kill('SIGTERM');
        await origin.exited;
      }
      await redis.stop();
      await workspace.remove();
    }
  });

test.run();

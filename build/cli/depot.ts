import { readConfig, type Config } from '../../server/config.ts';
import { DataError } from '../../server/data-files.ts';
import { sweepLeftovers } from '../../server/sweep-leftovers.ts';
import { BuildLockTimeoutError } from '../build-lock.ts';
import { RefusedError } from '../changes/refused.ts';

// Each command imports what it runs when it runs: the release's build loads the whole app (about
// 250 modules), which `depot help` or `stats add` should not wait for.
const release = () => Promise.all([import('./release.ts'), import('../changes/release.ts')]);
const accounts = () => import('./accounts.ts');
const userAdmin = () => import('./user-admin.ts');
const serverAdmin = () => import('./server-admin.ts');
const migrate = () => import('./migrate.ts');
const webhooks = () => import('./webhooks.ts');
const counts = () => import('./counts.ts');
const chartUrls = () => import('./chart-url.ts');
const audit = () => import('./audit.ts');
const lifecycle = () => import('./revise.ts');
const tokens = () => import('./tokens.ts');
const publish = () => import('./publish.ts');
const staticExport = () => import('../static-export.ts');

const USAGE = `usage: npm run depot -- <command>
  release <file.jar> --version 1.4.0 --java 21 --software PaperMC,Folia [--minecraft 1.20.6-1.21.4] [--proxy 3.4] [--by alice] [--changelog notes.md] [--channel beta] [--no-descriptor-check]
  publish <file.jar> --url https://depot.example.org --token-env DEPOT_TOKEN --version 1.4.0 --java 21 --software PaperMC,Folia [--minecraft R] [--proxy V] [--channel C] [--changelog notes.md]   (over HTTP: no data/ needed)
  withdraw <id> --reason "<text>" [--by alice]   (no longer latest, resolved or offered; still downloadable by id)
  restore <id> [--by alice]
  edit <id> [--channel release|beta|alpha] [--changelog notes.md] [--minecraft 1.20.6-1.21.4] [--proxy 3.4] [--by alice]
  user add <username> [--nickname N] [--image URL] [--by alice]
  user list | user remove <username> [--force] [--by alice]   (--force: their servers and webhooks go too)
  server add --owner <username> [--private] [--name N] [--by alice]
  server list [--owner <username>] | server remove <id> --yes [--by alice] | server token <id> [--by alice]   (a new ingest key)
  stats add <serverId> <players> [--at ISO-8601]
  chart-url <serverId> [--days 7] [--expires 30d] [--width W] [--height H] [--theme light|dark|auto] [--background solid|transparent] [--format svg|png|json|csv]
  migrate [--to redis://host:6379]      (STORAGE_DIR's servers, tokens and samples into Redis)
  webhook add <url> [--format json|discord] [--events release,withdraw] [--owner <username>] [--by alice]
  webhook list | webhook remove <id> [--by alice] | webhook test <id>
  token add <username> [--name ci] [--expires 90d|never] [--scopes publish,edit,withdraw] [--any-version] [--by alice]   (a publishing token, printed once; publish only and 90d unless told)
  token list | token revoke <id> [--by alice]
  audit [--since 7d] [--target <id>]    (the changes made, one JSON line each, newest last; --by defaults to the OS user)
  counts import <access.log>             (JAR downloads nginx served, from its log, into the download counts)
  counts repair                          (rewrites the download journals without torn lines a full disk left)
  export-static <dir>                    (the current tree as plain files for Netlify, Cloudflare Pages, S3 or GitHub Pages)`;

/** The operator CLI: each command prints one JSON object on stdout; progress goes to stderr. */
async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  // `publish` asks a depot over HTTP: it reads no configuration and no data/, and takes no build lock.
  if (command === 'publish') {
    const { publishJar, sayFailedDeploy } = await publish();
    return publishJar(args, process.env).then(
      (answer) => print(answer) || sayFailedDeploy(answer),
      (error: unknown) => printRefusal(command, error),
    );
  }
  const config = readConfig();
  // data/ is written by the CLI alone and small; STORAGE_DIR, which may hold thousands of files, is
  // swept by the origin at its start.
  await sweepLeftovers([config.dataDir]);
  try {
    switch (command) {
      case 'release': {
        const [{ parseReleaseArgs }, { releaseJar }] = await release();
        return print(await releaseJar(parseReleaseArgs(args), config, new Date()));
      }
      case 'withdraw':
      case 'restore':
      case 'edit': {
        const { withdrawVersion, restoreVersion, editVersion } = await lifecycle();
        const run = { withdraw: withdrawVersion, restore: restoreVersion, edit: editVersion }[command];
        return print(await run(args, config, new Date()));
      }
      case 'audit': {
        const lines = await (await audit()).readAudit(args, config, Date.now());
        if (lines.length > 0) console.log(lines.join('\n'));
        return 0;
      }
      case 'chart-url':
        return print(await (await chartUrls()).chartUrl(args, config));
      case 'migrate':
        return print(await (await migrate()).migrateToRedis(args, config));
      case 'webhook': {
        const result = await (await webhooks()).runWebhookCommand(args, config);
        if (result) return print(result);
        break;
      }
      case 'token': {
        const result = (await tokens()).runTokenCommand(args, config);
        if (result) return print(await result);
        break;
      }
      case 'counts': {
        const [verb, ...rest] = args;
        if (verb === 'repair') return print(await (await counts()).repairCounts(rest, config));
        if (verb !== 'import') break;
        return print(await (await counts()).importAccessLog(rest, config, Date.now()));
      }
      case 'user':
      case 'server': {
        const result = await runAccountCommand(command, args, config);
        if (result) return print(result);
        if (args[0] !== 'add') break;
        const { addUser, addServer } = await accounts();
        return print(await { user: addUser, server: addServer }[command](args.slice(1), config));
      }
      case 'export-static': {
        const { exportStatic, exportStaticArgs } = await staticExport();
        return print(await exportStatic(config.distDir, exportStaticArgs(args), config.deploy.originUrl));
      }
      case 'stats': {
        const [verb, ...rest] = args;
        if (verb !== 'add') break;
        return print(await (await accounts()).addStats(rest, config));
      }
    }
    console.error(
      command ? `depot: unknown command ${JSON.stringify([command, ...args.slice(0, 1)].join(' '))}\n${USAGE}` : USAGE,
    );
    return 1;
  } catch (error) {
    return printRefusal(command, error);
  }
}

/** A refusal as one line on stderr (exit 1); anything else is thrown on. */
function printRefusal(command: string | undefined, error: unknown): number {
  if (
    error instanceof RefusedError ||
    error instanceof DataError ||
    error instanceof BuildLockTimeoutError ||
    String((error as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS')
  ) {
    console.error(`depot ${command}: ${(error as Error).message}`);
    return 1;
  }
  throw error;
}

/** `user list|remove` and `server list|remove|token`; null for another verb. */
async function runAccountCommand(command: 'user' | 'server', args: string[], config: Config): Promise<object | null> {
  const [verb, ...rest] = args;
  if (command === 'user' && (verb === 'list' || verb === 'remove'))
    return (await userAdmin())[verb === 'list' ? 'listUsers' : 'removeUser'](rest, config);
  if (command !== 'server') return null;
  const { listServers, removeServer, rotateIngestKey } = await serverAdmin();
  const verbs: Record<string, (args: string[], config: Config) => Promise<object>> = {
    list: listServers,
    remove: removeServer,
    token: rotateIngestKey,
  };
  return verb !== undefined && Object.hasOwn(verbs, verb) ? verbs[verb]!(rest, config) : null;
}

function print(result: object): number {
  console.log(JSON.stringify(result, null, 2));
  return 0;
}

process.exitCode = await main(process.argv.slice(2));

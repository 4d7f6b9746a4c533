import { readConfig } from '../../server/config.ts';
import { DataError } from '../../server/data-files.ts';
import { BuildLockTimeoutError } from '../build-lock.ts';
import { addServer, addStats, addUser } from './accounts.ts';
import { migrateToRedis } from './migrate.ts';
import { RefusedError, parseReleaseArgs, releaseJar } from './release.ts';
import { runWebhookCommand } from './webhooks.ts';

const USAGE = `usage: npm run depot -- <command>
  release <file.jar> --version 1.4.0 --java 21 --software PaperMC,Folia [--minecraft 1.21.4] [--proxy 3.4] [--by alice]
  user add <username> [--nickname N] [--image URL]
  server add --owner <username> [--private] [--name N]
  stats add <serverId> <players> [--at ISO-8601]
  migrate [--to redis://host:6379]      (STORAGE_DIR's servers, tokens and samples into Redis)
  webhook add <url> [--format json|discord] [--events release]
  webhook list | webhook remove <id> | webhook test <id>`;

/** The operator CLI: each command prints one JSON object on stdout; progress goes to stderr. */
async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const config = readConfig();
  try {
    switch (command) {
      case 'release':
        return print(await releaseJar(parseReleaseArgs(args), config, new Date()));
      case 'migrate':
        return print(await migrateToRedis(args, config));
      case 'webhook': {
        const result = await runWebhookCommand(args, config);
        if (result) return print(result);
        break;
      }
      case 'user':
      case 'server':
      case 'stats': {
        const [verb, ...rest] = args;
        if (verb !== 'add') break;
        return print(await { user: addUser, server: addServer, stats: addStats }[command](rest, config));
      }
    }
    console.error(
      command ? `depot: unknown command ${JSON.stringify([command, ...args.slice(0, 1)].join(' '))}\n${USAGE}` : USAGE,
    );
    return 1;
  } catch (error) {
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
}

function print(result: object): number {
  console.log(JSON.stringify(result, null, 2));
  return 0;
}

process.exitCode = await main(process.argv.slice(2));

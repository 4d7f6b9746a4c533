import { readConfig } from '../server/config.ts';
import { DataError } from '../server/data-files.ts';
import { BuildLockTimeoutError } from './build-lock.ts';
import { runBuild } from './build.ts';

const config = readConfig();
try {
  await runBuild({
    ...config,
    cacheDir: config.buildCacheDir,
    ifChanged: process.argv.includes('--if-changed'),
    log: (line) => console.log(line),
  });
} catch (error) {
  if (error instanceof BuildLockTimeoutError) console.error(`[build] ${error.message}`);
  else if (error instanceof DataError) console.error(`[build] invalid data: ${error.message}`);
  else throw error;
  process.exit(1);
}

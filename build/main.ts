import { readConfig } from '../server/config.ts';
import { DataError } from '../server/versions/catalog.ts';
import { runBuild } from './build.ts';

const config = readConfig();
try {
  await runBuild({ ...config, cacheDir: config.buildCacheDir, ifChanged: process.argv.includes('--if-changed'), log: (line) => console.log(line) });
} catch (error) {
  if (!(error instanceof DataError)) throw error;
  console.error(`[build] invalid data: ${error.message}`);
  process.exit(1);
}

import { readConfig } from './config.ts';
import { startOrigin } from './origin.ts';
import { createFileStorage } from './storage.ts';

const config = readConfig();
const origin = await startOrigin({
  ...config,
  storage: createFileStorage(config.storageDir),
  log: (entry) => console.log(JSON.stringify({ time: new Date().toISOString(), ...entry })),
});
console.log(`plugin depot serving ${config.distDir}/current on ${origin.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`${signal}: closing`);
    void origin.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  });
}

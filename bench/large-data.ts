import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Hex } from '../server/helpers/digest.ts';
import { PluginVersionRecord } from '../server/versions/schema.ts';
import { SERVER_SOFTWARE } from '../server/versions/software.ts';
import { ROOT } from '../test/processes.ts';
import { pluginJar } from './harness.ts';

/** data/ with `count` versions over every software and Java version, small distinct JARs. */
export async function writeLargeData(dataDir: string, count: number) {
  await mkdir(join(dataDir, 'versions'), { recursive: true });
  await mkdir(join(dataDir, 'jars'), { recursive: true });
  const javas = ['8', '11', '17', '21'] as const;
  for (let i = 0; i < count; i++) {
    const bytes = pluginJar(`v${i}`, 2048);
    const sha256 = sha256Hex(bytes);
    const at = new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString();
    const id = `plugin-${Date.parse(at)}-${sha256.slice(0, 8)}`;
    const record = PluginVersionRecord.parse({
      id,
      serverSoftware: [SERVER_SOFTWARE[i % 11]!, SERVER_SOFTWARE[(i + 3) % 11]!],
      pluginVersion: `1.${Math.floor(i / 100)}.${i % 100}`,
      javaVersion: javas[i % 4],
      fileName: `Bench-${i}.jar`,
      fileSize: bytes.length,
      sha256,
      createdAt: at,
      updatedAt: at,
      createdBy: 'alice',
    });
    await writeFile(join(dataDir, 'jars', `${id}.jar`), bytes);
    await writeFile(join(dataDir, 'versions', `${id}.json`), JSON.stringify(record));
  }
  await cp(join(ROOT, 'data/users.json'), join(dataDir, 'users.json'));
  await cp(join(ROOT, 'data/brands'), join(dataDir, 'brands'), { recursive: true });
}

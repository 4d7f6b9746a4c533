import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { readClassFiles } from '../server/versions/class-files.ts';
import { readDescriptors } from '../server/versions/descriptor.ts';
import { ROOT } from '../test/processes.ts';
import { median, report } from './harness.ts';

/**
 * Issue 39: a 5 MB JAR of 3,000 classes (javac's headers, then bytes that deflate about as a class
 * file's constant pool does), deflated as jar tools do: its class headers read beside its
 * descriptors, the check a release already makes on every JAR.
 */
function classHeadersJar(classes = 3000, bytes = 5 * 1024 * 1024): Uint8Array {
  const compiled = ['java8', 'java11', 'java17', 'java21'].map((name) =>
    readFileSync(join(ROOT, 'test/fixtures/class-files', `${name}.class`)),
  );
  const entries: Zippable = {
    'META-INF/MANIFEST.MF': strToU8('Manifest-Version: 1.0\r\n\r\n'),
    'plugin.yml': strToU8('name: Bench\nversion: 1.0.0\nmain: dev.example.Main\n'),
  };
  let seed = 1;
  const size = Math.round(bytes / classes / 0.93); // these bytes deflate to about 93 %
  for (let i = 0; i < classes; i++) {
    const entry = new Uint8Array(size);
    entry.set(compiled[i % compiled.length]!);
    for (let at = 300; at < size; at++) {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      entry[at] = seed & 1 ? 97 + ((seed >>> 8) & 15) : (seed >>> 24) & 0xff;
    }
    entries[`dev/example/p${i % 40}/C${i}.class`] = entry;
  }
  return zipSync(entries, { level: 6 });
}

export function benchClassHeaders(rounds: number) {
  const jar = classHeadersJar();
  const time = (run: () => unknown) => {
    const runs: number[] = [];
    for (let round = 0; round < Math.max(rounds, 5); round++) {
      const started = performance.now();
      run();
      runs.push(performance.now() - started);
    }
    return median(runs);
  };
  time(() => readClassFiles(jar)); // warm
  const classes = time(() => readClassFiles(jar));
  const descriptors = time(() => readDescriptors(jar));
  console.log(`\n# Class headers of a ${(jar.length / 1024 / 1024).toFixed(1)} MB JAR of 3,000 classes (issue 39)`);
  report('class headers, 3,000 classes', classes, 'ms', 'descriptor check, same JAR', descriptors, '< 50 ms');
}

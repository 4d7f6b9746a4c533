// Issue 39: the demo's JARs hold real class files, compiled for the Java each build claims, so the
// depot reads from their bytes the Java they need as it does for any release. javac is the JDK on
// the machine (JDK 25 compiles for every Java the depot lists); its output is the same for the same
// source and compiler, so the demo data stays deterministic.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { JavaVersion } from '../server/versions/java.ts';

const JDK_25 = '/usr/lib/jvm/temurin-25-jdk-amd64/bin/javac';

/** Where the demo plugin's main class lives in its JARs: plugin.yml's `main`. */
export const DEMO_CLASS_ENTRY = 'org/example/depotdemo/DepotDemo.class';

const SOURCE = `package org.example.depotdemo;

/** The demo plugin's main class: what plugin.yml's main names. */
public final class DepotDemo {
    public static String describe() {
        return "DepotDemo, demo content of plugin depot";
    }
}
`;

/** The main class compiled with `javac --release <java>` for each Java asked. */
export async function compileDemoClasses(javas: readonly JavaVersion[]): Promise<Map<JavaVersion, Uint8Array>> {
  const javac = existsSync(JDK_25) ? JDK_25 : 'javac';
  const dir = await mkdtemp(join(tmpdir(), 'depot-demo-classes-'));
  try {
    const source = join(dir, 'src', 'DepotDemo.java');
    await mkdir(join(dir, 'src'));
    await writeFile(source, SOURCE);
    const classes = new Map<JavaVersion, Uint8Array>();
    for (const java of new Set(javas)) {
      const out = join(dir, `java${java}`);
      // -Xlint:-options: javac 25 warns that --release 8 is deprecated; it still compiles for it.
      await promisify(execFile)(javac, ['-nowarn', '-Xlint:-options', '--release', java, '-d', out, source]).catch(
        (error: Error) => {
          throw new Error(
            `javac --release ${java} failed (a JDK 25 at ${JDK_25} or on PATH is needed): ${error.message}`,
          );
        },
      );
      classes.set(java, await readFile(join(out, DEMO_CLASS_ENTRY)));
    }
    return classes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

import { decideJava, readClassFiles, type ClassFiles, type JarFix } from '../../server/versions/class-files.ts';
import type { JavaVersion } from '../../server/versions/java.ts';
import { RefusedError } from './refused.ts';

/**
 * Issue 39, item 2: the Java a release (or an edit) lists the JAR under, decided from its class
 * files: the claim when every class loads on it, else a refusal in one line; without a claim, the
 * smallest listed Java that loads them. Over HTTP a wrong claim is a 400 naming javaVersion, bytes
 * that no claim can fix a 422.
 */
export function checkJava(
  jar: Uint8Array | ClassFiles,
  claimed: JavaVersion | undefined,
  context: { jar: string; fix: JarFix; metadata?: boolean | undefined },
): { java: JavaVersion; classFileVersion?: number } {
  const decided = decideJava(jar instanceof Uint8Array ? readClassFiles(jar) : jar, claimed, context);
  if (!decided.ok) {
    if (decided.wrong === 'jar') throw new RefusedError(decided.line, { kind: 'not-a-jar' });
    // Asked through the API's metadata: a missing javaVersion is refused as a missing field always was (issue 30).
    const missing = claimed === undefined && context.metadata === true;
    const line = missing ? 'metadata.javaVersion: is required, e.g. "21"' : decided.line;
    throw new RefusedError(line, { kind: 'field', field: 'javaVersion' });
  }
  return decided.classFileVersion === undefined
    ? { java: decided.java }
    : { java: decided.java, classFileVersion: decided.classFileVersion };
}

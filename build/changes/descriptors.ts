import { checkClaims, declaredFor } from '../../server/versions/descriptor-check.ts';
import type { Declared } from '../../server/versions/descriptor-schema.ts';
import { readDescriptors } from '../../server/versions/descriptor.ts';
import type { ServerSoftware } from '../../server/versions/software.ts';
import { RefusedError } from './refused.ts';

const OVERRIDE = '--no-descriptor-check';
/** How a refusal says to override, for both ways a release comes: the CLI, and a publish over HTTP (its metadata). */
const OVERRIDE_HINT = `pass ${OVERRIDE} (over HTTP: "descriptorCheck": false in the metadata)`;

/** What a release stores of its JAR's descriptors: what they declare, and the warnings an override left. */
export type DescriptorFields = Declared & { descriptorWarnings?: string[] };

/**
 * Issue 31: the JAR's descriptors back every claimed software, or the release is refused in one line
 * naming the file and the key to fix. `--no-descriptor-check` releases anyway: each problem is kept
 * in the record (and printed by the release, overrideWarnings). A malformed descriptor is a 422 (the
 * JAR is what is wrong), a claim it does not back a 400 naming serverSoftware (either may be).
 */
export function checkDescriptors(
  jar: Uint8Array,
  software: readonly ServerSoftware[],
  override: boolean,
): DescriptorFields {
  const read = readDescriptors(jar);
  if (!read.ok) {
    if (!override) throw new RefusedError(`${read.problem}, or ${OVERRIDE_HINT}`, { kind: 'not-a-jar' });
    return { descriptorWarnings: [read.problem] };
  }
  const problems = checkClaims(read.found, software);
  const declared = declaredFor(read.found, software);
  if (problems.length === 0) return declared;
  if (!override) {
    const [{ problem, fix }] = problems as [(typeof problems)[0]];
    throw new RefusedError(`${problem}; ${fix}, or ${OVERRIDE_HINT}`, { kind: 'field', field: 'serverSoftware' });
  }
  return { ...declared, descriptorWarnings: problems.map(({ problem }) => problem) };
}

/** The warning lines of a release made with the override, one per problem its descriptors have. */
export function overrideWarnings(fields: DescriptorFields): string[] {
  return (fields.descriptorWarnings ?? []).map(
    (problem) => `[depot] warning: released with ${OVERRIDE} although ${problem}`,
  );
}

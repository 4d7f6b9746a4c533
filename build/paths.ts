import type { Catalog } from '../server/versions/catalog.ts';
import { downloadPath } from '../server/versions/present.ts';
import { JAVA_VERSIONS, SERVER_SOFTWARE } from '../server/versions/software.ts';

/** Every finite URL of SPEC 4.1-4.6: the list, latest per software (+ Java), each version's JAR. */
export function listStaticPaths(catalog: Catalog): string[] {
  const paths = ['/api/plugin-versions'];
  for (const software of SERVER_SOFTWARE) {
    // SPEC 4.1: the dedicated lowercase paths; other letter cases are answered by the origin.
    const name = software.toLowerCase();
    for (const kind of ['latest', 'download/latest']) {
      paths.push(`/api/plugin-versions/${kind}/${name}`);
      for (const java of JAVA_VERSIONS) paths.push(`/api/plugin-versions/${kind}/${name}/${java}`);
    }
  }
  for (const version of catalog.versions) paths.push(downloadPath(version.id));
  return paths;
}

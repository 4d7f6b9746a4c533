import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Tree } from '../server/tree/open.ts';

/**
 * A one-worker nginx that serves the given tree routes from their files with the recorded headers:
 * the static-server baseline: the plainest nginx, beside which the origin is measured (the deployable
 * config is build/deploy-configs.ts; `--only scale` measures that one).
 */
export async function writeNginxConfig(dir: string, tree: Tree, paths: string[], port: number): Promise<string> {
  await mkdir(join(dir, 'logs'), { recursive: true });
  const locations = paths.map((path) => {
    const entry = tree.routes.get(path)!;
    const headers = Object.entries(entry.headers)
      .filter(([name]) => name !== 'content-type')
      .map(([name, value]) => `      add_header ${name} '${value.replaceAll("'", "\\'")}' always;`)
      .join('\n');
    return `    location = ${path} {\n      default_type "${entry.headers['content-type']}";\n      etag off;\n${headers}\n      alias ${join(tree.dir, entry.file)};\n    }`;
  });
  // mkdtemp folders are private to their owner: workers run as that owner (root in CI) to read them.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  const config = `${user}worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'logs/error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  types {}
  client_body_temp_path ${join(dir, 'tmp')};
  server {
    listen 127.0.0.1:${port};
${locations.join('\n')}
  }
}
`;
  const file = join(dir, 'nginx.conf');
  await mkdir(join(dir, 'tmp'), { recursive: true });
  await writeFile(file, config);
  return file;
}

// Node's own ceiling: node:http answering from bytes in memory, with the same headers the tree
// records. Usage: node --import tsx bench/node-baseline.ts <treeDir> <port> <path>...
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { openTree } from '../server/tree/open.ts';

const [treeDir, port, ...paths] = process.argv.slice(2);
const tree = await openTree(treeDir!);
const answers = new Map(
  paths.map((path) => {
    const entry = tree.routes.get(path)!;
    return [path, { bytes: readFileSync(join(tree.dir, entry.file)), headers: entry.headers }];
  }),
);
createServer((req, res) => {
  const answer = answers.get(req.url ?? '');
  if (!answer) return res.writeHead(404).end();
  res.writeHead(200, { ...answer.headers, 'content-length': answer.bytes.length }).end(answer.bytes);
}).listen(Number(port), '127.0.0.1', () => console.log('ready'));

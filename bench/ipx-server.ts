// The peer: unjs/ipx serving data/brands over HTTP, one process, default settings.
// Usage: node --import tsx bench/ipx-server.ts <brandsDir> <port>
import { createServer } from 'node:http';
import { createIPX, createIPXNodeServer, ipxFSStorage } from 'ipx';

const [dir, port] = process.argv.slice(2);
const ipx = createIPX({ storage: ipxFSStorage({ dir: dir! }) });
createServer(createIPXNodeServer(ipx)).listen(Number(port), '127.0.0.1');

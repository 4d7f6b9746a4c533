import type { RunningOrigin } from '../server/origin.ts';
import { currentTreeDir } from '../server/tree/open.ts';
import { contractSuite } from './contract.ts';
import { makeWorkspace, startTestOrigin, type Workspace } from './helpers.ts';

// The HTTP contract against the embedded default, one origin serving the tree and the live routes.
// test/topology.test.ts runs the same suite through nginx in front of two origins.
const ctx = {} as { workspace: Workspace; origin: RunningOrigin };
contractSuite('the embedded origin', {
  start: async () => {
    ctx.workspace = await makeWorkspace();
    ctx.origin = await startTestOrigin(ctx.workspace);
    return { url: ctx.origin.url, treeDir: (await currentTreeDir(ctx.workspace.distDir))! };
  },
  stop: async () => {
    await ctx.origin.close();
    await ctx.workspace.remove();
  },
});

import type { Tree } from './tree.ts';

/** What route families need: the tree they answer from (the one being built, or the one served). */
export type AppContext = {
  tree: () => Tree;
};

import { readTreeCatalog } from '../../../server/tree/open.ts';

/** Set by build/site.ts: the tree being built, whose catalog.json the pages render. */
declare const __DEPOT_TREE_DIR__: string;

/** The tree's catalog.json, validated by the same schema the origin answers from: no second reader of data/. */
export const { catalog, brands, project } = await readTreeCatalog(__DEPOT_TREE_DIR__);

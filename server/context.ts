import type { ByteCache } from './byte-cache.ts';
import type { BrandRenderer } from './brands/render.ts';
import type { FileCache } from './http/file-cache.ts';
import type { Tree } from './tree.ts';

/** What route families need, passed in: the build and the origin each make their own. */
export type AppContext = {
  /** The tree answers come from: the one being built, or the one served. */
  tree: () => Tree;
  files: FileCache;
  imageCache: ByteCache;
  renderer: BrandRenderer;
  /** Render every brand query, skipping precomputed files and the cache (benchmarks, debugging). */
  renderAlways?: boolean;
};

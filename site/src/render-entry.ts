import type { SSRManifest } from 'astro';
import { App } from 'astro/app';
import type { SiteRender } from './lib/tree.ts';

/** The server bundle's export (astro.config.mjs): one page rendered with the data the build gives it. */
export function createExports(manifest: SSRManifest) {
  const app = new App(manifest);
  return {
    render: (request: Request, depot: SiteRender) => app.render(request, { locals: { depot } }),
  };
}

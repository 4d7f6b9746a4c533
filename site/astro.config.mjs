// The human site. build/site.ts compiles it once per change of its sources into a renderer (Astro's
// server output, with the adapter below), then renders each page the build asks for with the data
// it reads: a release renders the few pages whose data changed, not the site.
import { defineConfig } from 'astro/config';

/** The build's own adapter: the server bundle exports `render(request, locals)` (src/render-entry.ts); nothing is served by Astro. */
const depotRenderer = {
  name: 'depot-renderer',
  hooks: {
    'astro:config:done': ({ setAdapter }) =>
      setAdapter({
        name: 'depot-renderer',
        serverEntrypoint: new URL('./src/render-entry.ts', import.meta.url),
        exports: ['render'],
        supportedAstroFeatures: {
          serverOutput: 'stable',
          staticOutput: 'stable',
          hybridOutput: 'stable',
          sharpImageService: 'stable',
        },
        adapterFeatures: {},
      }),
  },
};

export default defineConfig({
  output: 'server',
  adapter: depotRenderer,
  build: { inlineStylesheets: 'never', assets: '_site' },
  trailingSlash: 'never',
  // Pages embed their scripts as files, never inline, so the pages' Content-Security-Policy can say script-src 'self'.
  vite: { build: { assetsInlineLimit: 0 } },
  devToolbar: { enabled: false },
});

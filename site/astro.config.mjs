// The human site. Built by build/site.ts (npm run build), which passes root, outDir and the tree to
// read through the inline config; this file holds only what does not change per build.
import { defineConfig } from 'astro/config';

export default defineConfig({
  output: 'static',
  // /versions, not /versions/: pages are files (versions.html) the manifest maps to clean paths.
  build: { format: 'file', inlineStylesheets: 'never', assets: '_site' },
  trailingSlash: 'never',
  // Pages embed their scripts as files, never inline, so the pages' Content-Security-Policy can say script-src 'self'.
  vite: { build: { assetsInlineLimit: 0 } },
  devToolbar: { enabled: false },
});

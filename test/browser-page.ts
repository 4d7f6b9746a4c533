import type { Browser } from 'playwright-core';

export type PageOptions = {
  width?: number;
  height?: number;
  scheme?: 'light' | 'dark';
  javaScript?: boolean;
  /** JavaScript on for the test's own code (axe), the site's scripts served empty. */
  siteScripts?: false;
};

/** A page in a fresh context (the CSP bypassed so axe can be injected) that records console and page errors. */
export async function openPage(browser: Browser, options: PageOptions = {}) {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1440, height: options.height ?? 900 },
    colorScheme: options.scheme ?? 'light',
    javaScriptEnabled: options.javaScript ?? true,
    bypassCSP: true,
  });
  if (options.siteScripts === false)
    await context.route('**/_site/*.js', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: '' }),
    );
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { page, problems, close: () => context.close() };
}

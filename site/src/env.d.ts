declare namespace App {
  interface Locals {
    depot: import('./lib/tree.ts').SiteRender;
  }
}

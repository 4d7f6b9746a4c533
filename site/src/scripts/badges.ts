import { SERVER_ID_PLACEHOLDER, badgeSnippets, type BadgeChoice, type BadgeStyle } from '../lib/badge-snippets.ts';

// The badges page: the style picker and each kind's picker redraw its preview, snippets and links,
// with this site's address in every URL (the page's HTML has site-relative ones).
const styleForm = document.getElementById('badge-style') as HTMLFormElement | null;
const kinds = [...document.querySelectorAll<HTMLElement>('[data-badge-kind]')];
/** A server id as the API takes it (a UUID): anything else keeps the placeholder. */
const SERVER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

if (styleForm) {
  for (const control of document.querySelectorAll<HTMLElement>('#badge-style, [data-badge-kind] [data-js-only]'))
    control.hidden = false;
  const style = () => (new FormData(styleForm).get('style') ?? 'flat') as BadgeStyle;
  const update = () => kinds.forEach((kind) => redraw(kind, style()));
  styleForm.addEventListener('change', update);
  styleForm.addEventListener('submit', (event) => event.preventDefault());
  for (const kind of kinds) kind.addEventListener('input', () => redraw(kind, style()));
  update();
}

/** The choice a kind shows: its picker's, or its only one (the players badge's id typed in). */
function choiceOf(kind: HTMLElement): BadgeChoice {
  const picked = kind.querySelector<HTMLSelectElement>('select[data-badge-choice]')?.selectedOptions[0];
  const choice = {
    label: '',
    path: picked?.value ?? kind.dataset.path ?? '',
    alt: picked?.dataset.alt ?? kind.dataset.alt ?? '',
  };
  const id = kind.querySelector<HTMLInputElement>('input[data-badge-server]')?.value.trim() ?? '';
  if (SERVER_ID.test(id)) choice.path = choice.path.replace(SERVER_ID_PLACEHOLDER, id.toLowerCase());
  return choice;
}

function redraw(kind: HTMLElement, style: BadgeStyle): void {
  const choice = choiceOf(kind);
  const snippets = badgeSnippets(choice, style, location.href);
  const ready = !choice.path.includes(SERVER_ID_PLACEHOLDER);
  const preview = kind.querySelector<HTMLImageElement>('img[data-badge-preview]')!;
  preview.parentElement!.hidden = !ready;
  if (ready && preview.src !== snippets.svg) {
    preview.src = snippets.svg;
    preview.alt = choice.alt;
  }
  for (const snippet of kind.querySelectorAll<HTMLElement>('[data-badge-snippet]')) {
    const text = snippet.dataset.badgeSnippet === 'html' ? snippets.html : snippets.markdown;
    snippet.querySelector('code')!.textContent = text;
    snippet.querySelector<HTMLButtonElement>('button[data-copy]')!.dataset.copy = text;
  }
  const links = kind.querySelector<HTMLElement>('.badge-links')!;
  links.hidden = !ready;
  for (const link of links.querySelectorAll<HTMLAnchorElement>('a[data-badge-link]')) {
    const form = link.dataset.badgeLink as 'svg' | 'png' | 'json' | 'shields';
    link.href = snippets[form] ?? '';
  }
}

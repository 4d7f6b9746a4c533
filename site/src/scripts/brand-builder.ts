import type { BuilderData } from '../lib/brand-kit.ts';

// The brand URL builder: the brand image API's query from the form, checked as the API checks it, with a preview.
const form = document.getElementById('brand-builder') as HTMLFormElement | null;
const dataElement = document.getElementById('brand-builder-data');

if (form && dataElement) {
  const data = JSON.parse(dataElement.textContent ?? '{}') as BuilderData;
  const field = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const brand = field<HTMLSelectElement>('bb-brand');
  const variant = field<HTMLSelectElement>('bb-variant');
  const size = field<HTMLInputElement>('bb-size');
  const format = field<HTMLSelectElement>('bb-format');
  const download = field<HTMLInputElement>('bb-download');
  const error = field<HTMLElement>('bb-error');
  const url = field<HTMLElement>('bb-url');
  const open = field<HTMLAnchorElement>('bb-open');
  const preview = field<HTMLImageElement>('bb-preview');
  const copy = form.querySelector<HTMLButtonElement>('button[data-copy]');

  const fillVariants = () => {
    const choices = data.brands[brand.value]?.variants ?? [];
    variant.replaceChildren(...choices.map((name) => new Option(name, name, name === 'default', name === 'default')));
    const svg = format.querySelector<HTMLOptionElement>('option[value="svg"]');
    if (svg) svg.disabled = !data.brands[brand.value]?.svg;
    if (svg?.disabled && format.value === 'svg') format.value = '';
  };

  /** The URL box, Copy and Open follow the form: while a field is invalid they offer no URL. */
  const offer = (path: string | undefined) => {
    url.textContent = path ?? 'No URL while the width is invalid';
    url.classList.toggle('invalid', path === undefined);
    if (path === undefined) open.removeAttribute('href');
    else open.href = path;
    open.setAttribute('aria-disabled', String(path === undefined));
    if (copy) {
      copy.disabled = path === undefined;
      copy.dataset.copy = path ?? '';
    }
  };

  const update = () => {
    const query = new URLSearchParams();
    if (variant.value !== 'default') query.set('variant', variant.value);
    // A number input's value is empty for text it cannot read ("1e"): that is not "the original size".
    const problem =
      size.validity.badInput ||
      (size.value !== '' && (!/^\d+$/.test(size.value) || Number(size.value) < 1 || Number(size.value) > data.maxSize))
        ? `The width must be a whole number from 1 to ${data.maxSize}, or empty for the original size.`
        : '';
    if (size.value !== '' && !problem) query.set('size', String(Number(size.value)));
    if (format.value) query.set('format', format.value);
    if (download.checked) query.set('download', 'true');
    error.textContent = problem;
    size.setAttribute('aria-invalid', String(problem !== ''));
    if (problem) {
      clearTimeout(previewTimer);
      offer(undefined);
      return;
    }
    const search = query.toString();
    const path = `/api/image/brand/${brand.value}${search ? `?${search}` : ''}`;
    offer(path);
    // A download answer would not display: preview the same image inline, a moment after the last
    // change (each new image is a request, and a replaced one would be cut off).
    query.delete('download');
    const inline = query.toString();
    const background = data.brands[brand.value]?.backgrounds[variant.value] ?? 'light';
    const alt = `${data.brands[brand.value]?.name ?? brand.value} ${variant.value} logo${size.value ? ` at ${size.value} px` : ''}${format.value ? ` as ${format.value}` : ''}`;
    clearTimeout(previewTimer);
    previewTimer = setTimeout(() => {
      preview.src = `/api/image/brand/${brand.value}${inline ? `?${inline}` : ''}`;
      preview.alt = alt;
      preview.parentElement?.classList.toggle('dark', background === 'dark');
      preview.parentElement?.classList.toggle('light', background !== 'dark');
    }, 300);
  };
  let previewTimer: ReturnType<typeof setTimeout> | undefined;

  form.addEventListener('submit', (event) => event.preventDefault());
  brand.addEventListener('change', () => {
    fillVariants();
    update();
  });
  for (const input of [variant, size, format, download]) input.addEventListener('input', update);
  fillVariants();
  update();
}

import type { BuilderData } from '../lib/brand-kit.ts';

// The brand URL builder: SPEC 4.7's query from the form, checked as the API checks it, with a preview.
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

  const update = () => {
    const problems: string[] = [];
    const query = new URLSearchParams();
    if (variant.value !== 'default') query.set('variant', variant.value);
    if (size.value !== '') {
      const n = Number(size.value);
      if (!/^\d+$/.test(size.value) || n < 1 || n > data.maxSize)
        problems.push(`The width must be a whole number from 1 to ${data.maxSize}.`);
      else query.set('size', String(n));
    }
    if (format.value) query.set('format', format.value);
    if (download.checked) query.set('download', 'true');
    error.textContent = problems.join(' ');
    size.setAttribute('aria-invalid', String(problems.length > 0));
    if (problems.length > 0) return;
    const search = query.toString();
    const path = `/api/image/brand/${brand.value}${search ? `?${search}` : ''}`;
    url.textContent = path;
    open.href = path;
    if (copy) copy.dataset.copy = path;
    // A download answer would not display: preview the same image inline, a moment after the last
    // change (each new image is a request, and a replaced one would be cut off).
    query.delete('download');
    const inline = query.toString();
    const background = data.brands[brand.value]?.backgrounds[variant.value] ?? 'light';
    const alt = `${brand.value} ${variant.value} logo${size.value ? ` at ${size.value} px` : ''}${format.value ? ` as ${format.value}` : ''}`;
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

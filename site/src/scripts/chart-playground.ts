import type { CHART_RANGES } from '../../../server/charts/schema.ts';

// The chart playground: the example chart redrawn as the options change (a moment after the last
// keystroke: each new chart is a request, and requests are rate limited), and the embed code.
const form = document.getElementById('chart-playground') as HTMLFormElement | null;
const rangesElement = document.getElementById('chart-ranges');

if (form && rangesElement) {
  const ranges = JSON.parse(rangesElement.textContent ?? '{}') as typeof CHART_RANGES;
  const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const chart = byId<HTMLImageElement>('cp-chart');
  const chartLink = byId<HTMLAnchorElement>('cp-chart-link');
  const chartUrl = byId<HTMLElement>('cp-chart-url');
  const error = byId<HTMLElement>('cp-error');
  const server = byId<HTMLInputElement>('cp-server');
  const names = Object.keys(ranges) as (keyof typeof ranges)[];
  let timer: ReturnType<typeof setTimeout> | undefined;

  /** The options that differ from the defaults (the default chart is a precomputed file), or the problems. */
  const read = () => {
    const query = new URLSearchParams();
    const problems: string[] = [];
    for (const name of names) {
      const input = byId<HTMLInputElement>(`cp-${name}`);
      const { min, max, default: fallback } = ranges[name];
      const ok = /^\d+$/.test(input.value) && Number(input.value) >= min && Number(input.value) <= max;
      input.setAttribute('aria-invalid', String(!ok));
      if (!ok) problems.push(`${name} must be a whole number from ${min} to ${max}.`);
      else if (Number(input.value) !== fallback) query.set(name, String(Number(input.value)));
    }
    const theme = new FormData(form).get('theme');
    if (theme === 'dark') query.set('theme', 'dark');
    return { query, problems };
  };

  const embed = (query: URLSearchParams, format: 'svg' | 'png') => {
    const params = new URLSearchParams(query);
    if (format === 'png') params.set('format', 'png');
    const id = server.value.trim() || 'YOUR-SERVER-ID';
    const width = params.get('width') ?? String(ranges.width.default);
    const height = params.get('height') ?? String(ranges.height.default);
    const search = params.toString();
    const src = new URL(
      `/api/servers/${encodeURIComponent(id)}/chart/players${search ? `?${search}` : ''}`,
      location.href,
    ).href;
    return `<img src="${src}" width="${width}" height="${height}" alt="Players on my server">`;
  };

  const update = () => {
    const { query, problems } = read();
    error.textContent = problems.join(' ');
    if (problems.length > 0) return;
    for (const format of ['svg', 'png'] as const) {
      const code = embed(query, format);
      byId<HTMLElement>(`cp-${format}`).textContent = code;
      const copy = byId<HTMLElement>(`cp-${format}-title`).parentElement?.querySelector<HTMLButtonElement>(
        'button[data-copy]',
      );
      if (copy) copy.dataset.copy = code;
    }
    const search = query.toString();
    const src = `/api/charts/example${search ? `?${search}` : ''}`;
    if (chart.getAttribute('src') === src) return;
    chart.src = src;
    chart.width = Number(query.get('width') ?? ranges.width.default);
    chart.height = Number(query.get('height') ?? ranges.height.default);
    chart.alt = `Example chart: peak and average players over the last ${query.get('days') ?? ranges.days.default} days, ${query.get('theme') ?? 'light'} theme`;
    chartLink.href = src;
    chartUrl.textContent = src;
  };

  chart.addEventListener('error', () => {
    error.textContent =
      'The chart could not be drawn: too many requests from this address for now (the limit is 100 per 15 minutes); try again later.';
  });
  form.addEventListener('submit', (event) => event.preventDefault());
  form.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(update, 300);
  });
  update();
}

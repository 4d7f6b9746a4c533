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
    // The radio groups' defaults (light, solid) stay out of the URL, as the numbers' do.
    const choices = new FormData(form);
    for (const [name, fallback] of [
      ['theme', 'light'],
      ['background', 'solid'],
    ] as const) {
      const choice = choices.get(name);
      if (typeof choice === 'string' && choice !== fallback) query.set(name, choice);
    }
    return { query, problems };
  };

  /** This site's URL of the typed server's chart (the id's placeholder until one is typed). */
  const chartSrc = (params: URLSearchParams, path = 'chart/players') => {
    const id = server.value.trim() || 'YOUR-SERVER-ID';
    const search = params.toString();
    return new URL(`/api/servers/${encodeURIComponent(id)}/${path}${search ? `?${search}` : ''}`, location.href).href;
  };

  /** The embed code (svg, png) or the data request (json, csv: the days only, the rest draws). */
  const snippet = (query: URLSearchParams, format: 'svg' | 'png' | 'json' | 'csv') => {
    if (format === 'json' || format === 'csv') {
      const params = new URLSearchParams(query.has('days') ? { days: query.get('days')! } : {});
      params.set('format', format);
      return `curl '${chartSrc(params)}'`;
    }
    const params = new URLSearchParams(query);
    if (format === 'png') params.set('format', 'png');
    const width = params.get('width') ?? String(ranges.width.default);
    const height = params.get('height') ?? String(ranges.height.default);
    return `<img src="${chartSrc(params)}" width="${width}" height="${height}" alt="Players on my server">`;
  };

  /** The owner's request for a signed URL: this site's address, the typed id. */
  const signedRequest = () =>
    `curl -X POST -H 'Authorization: Bearer <owner token>' -H 'Content-Type: application/json' \\\n  -d '{"days": 7, "expires": "30d"}' '${chartSrc(new URLSearchParams(), 'chart-urls')}'`;

  /** A snippet's code and the Copy button after it. */
  const show = (codeId: string, text: string) => {
    const code = byId<HTMLElement>(codeId);
    code.textContent = text;
    const copy = code.closest('pre')?.nextElementSibling;
    if (copy instanceof HTMLButtonElement && copy.dataset.copy !== undefined) copy.dataset.copy = text;
  };

  const update = () => {
    const { query, problems } = read();
    error.textContent = problems.join(' ');
    if (problems.length > 0) return;
    for (const format of ['svg', 'png', 'json', 'csv'] as const) show(`cp-${format}`, snippet(query, format));
    const id = server.value.trim() || 'YOUR-SERVER-ID';
    show('cp-signed-command', `npm run depot -- chart-url ${id} --days 7 --expires 30d`);
    show('cp-signed-request', signedRequest());
    const search = query.toString();
    const src = `/api/charts/example${search ? `?${search}` : ''}`;
    if (chart.getAttribute('src') === src) return;
    chart.src = src;
    chart.width = Number(query.get('width') ?? ranges.width.default);
    chart.height = Number(query.get('height') ?? ranges.height.default);
    chart.alt = `Example chart: peak and average players over the ${query.get('days') ?? ranges.days.default} days up to ${chart.dataset.end}, ${query.get('theme') ?? 'light'} theme`;
    chartLink.href = src;
    chartUrl.textContent = src;
  };

  // An image's error event carries no status: ask the same URL again to tell the user the real cause.
  chart.addEventListener('error', async () => {
    const src = chart.src;
    const reason = await explainFailure(src);
    if (chart.src === src) error.textContent = reason;
  });
  form.addEventListener('submit', (event) => event.preventDefault());
  form.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(update, 300);
  });
  update();
}

/** Why a chart did not load, from the API's own answer: its message, its rate limit, or a server error. */
async function explainFailure(src: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(src);
  } catch {
    return 'The chart could not be loaded: the server did not answer. Check the connection and try again.';
  }
  const message = await response.json().then(
    (body: { error?: unknown }) => (typeof body.error === 'string' ? body.error.replace(/\.$/, '') : undefined),
    () => undefined,
  );
  if (response.status === 429) return rateLimitMessage(response.headers);
  if (response.status >= 500)
    return `The server failed to draw the chart (${response.status}${message ? `: ${message}` : ''}); try again in a moment.`;
  if (response.ok) return 'The chart could not be shown; try again.';
  return `The chart could not be drawn: ${message ?? `the server answered ${response.status}`}.`;
}

/**
 * The limit and the wait, as the answer states them: RateLimit-Policy `"default";q=100;w=900` and
 * RateLimit `"default";r=0;t=42` (the IETF RateLimit fields the origin sends), else Retry-After.
 */
function rateLimitMessage(headers: Headers): string {
  const field = (name: string, key: string) => {
    const match = new RegExp(`;\\s*${key}=(\\d+)`).exec(headers.get(name) ?? '');
    return match ? Number(match[1]) : undefined;
  };
  const limit = field('ratelimit-policy', 'q');
  const window = field('ratelimit-policy', 'w');
  const retryAfter = headers.get('retry-after');
  const wait = field('ratelimit', 't') ?? (retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined);
  const policy = limit !== undefined && window !== undefined ? ` (the limit is ${limit} per ${duration(window)})` : '';
  const retry = wait !== undefined ? `try again in ${duration(Math.max(wait, 1))}` : 'try again later';
  return `Too many chart requests from this address for now${policy}; ${retry}.`;
}

/** 900 -> "15 minutes", 3600 -> "1 hour", 42 -> "42 seconds", 761 -> "13 minutes". */
function duration(seconds: number): string {
  const [count, unit] =
    seconds % 3600 === 0
      ? [seconds / 3600, 'hour']
      : seconds % 60 === 0 || seconds >= 90
        ? [Math.ceil(seconds / 60), 'minute']
        : [seconds, 'second'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/** 1.2 KB, 3.4 MB: sizes as people read them (1 KB = 1,024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** 2026-06-02: the UTC day, the same on every machine that builds. */
export function formatDay(iso: string): string {
  return iso.slice(0, 10);
}

/** March 2024, from 2024-03: a month as people read it, the same on every machine (UTC, English). */
export function formatMonth(yearMonth: string): string {
  const date = new Date(`${yearMonth}-01T00:00:00Z`);
  return date.toLocaleDateString('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' });
}

/**
 * 1,234 downloads; from 100,000 on shortened (123K, 1.2M) with the exact count as the title.
 * Shared by the pages and the browser's counts script.
 */
export function formatCount(count: number): { text: string; exact: string | undefined } {
  const exact = count.toLocaleString('en-US');
  if (count < 100_000) return { text: exact, exact: undefined };
  const text = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 }).format(count);
  return { text, exact };
}

// The history's search box: keeps the rows in which every word typed matches one of the row's
// fields (History.astro's data-*), never its raw text: "21" is not found in a date.
const box = document.getElementById('version-search');
const input = document.getElementById('version-search-input') as HTMLInputElement | null;
const status = document.getElementById('version-search-count');
const table = document.querySelector<HTMLElement>('#history')?.closest<HTMLElement>('.table-scroll');
const caption = document.getElementById('history-count');
const rows = [...document.querySelectorAll<HTMLTableRowElement>('#history tbody tr')];

/** 1.21.4 -> [1, 21, 4]; a part that is not a number makes the whole undefined. */
const parts = (version: string) => {
  const numbers = version.split('.').map(Number);
  return numbers.every(Number.isInteger) ? numbers : undefined;
};

/** Is `word` (1.21, or 1.21.2) within a from-to range of versions, compared on the word's parts? */
function inRange(word: string, range: string): boolean {
  const wanted = parts(word);
  const [from, to = from] = range.split('-').map(parts);
  if (!wanted || !from || !to) return false;
  const compare = (a: number[], b: number[]) => a.map((n, i) => n - (b[i] ?? 0)).find((d) => d !== 0) ?? 0;
  const cut = (v: number[]) => v.slice(0, wanted.length);
  return compare(cut(from), wanted) <= 0 && compare(wanted, cut(to)) <= 0;
}

/** A plugin version matches a word that is it or its first parts: "1.4" finds 1.4.0, not 1.40.0. */
const versionMatches = (version: string, word: string) =>
  version.startsWith(word) && (/\D$/.test(word) || !/^\d/.test(version.slice(word.length)));

/** The question one word asks of a row's fields. */
function matches(row: DOMStringMap, word: string): boolean {
  const javaQuery = /^java:(\d+)$/.exec(word);
  // "java 17": the builds that run on Java 17 (Java is a minimum), as the Java filter pages list.
  if (javaQuery) return Number(row.java) <= Number(javaQuery[1]);
  const words = (field: string | undefined) => (field ?? '').split(' ').filter(Boolean);
  return (
    row.java === word ||
    words(row.software).some((s) => s.startsWith(word)) ||
    versionMatches(row.version ?? '', word) ||
    words(row.platform).some((range) => inRange(word, range)) ||
    (row.channel ?? '').startsWith(word) ||
    words(row.by).some((name) => name.startsWith(word))
  );
}

/** The words of a query: "java 17" and "java17" become one word, java:17; "java" alone asks nothing. */
const wordsOf = (query: string) =>
  query
    .toLowerCase()
    .replace(/\bjava\s*(\d+)/g, 'java:$1')
    .split(/\s+/)
    .filter((word) => word && word !== 'java');

if (box && input && status && table && caption && rows.length > 0) {
  box.hidden = false;
  const total = caption.textContent ?? '';
  input.addEventListener('input', () => {
    const words = wordsOf(input.value);
    const shown = rows.filter((row) => {
      const match = words.every((word) => matches(row.dataset, word));
      row.hidden = !match;
      return match;
    }).length;
    const searching = input.value.trim() !== '';
    table.hidden = shown === 0;
    caption.textContent = searching ? `${shown} of ${total}` : total;
    status.textContent = !searching
      ? ''
      : shown === 0
        ? `No version matches “${input.value.trim()}”.`
        : `${shown} of ${rows.length} shown`;
  });
}

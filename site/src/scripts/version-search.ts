// The history's search box: hides the rows whose text does not hold every word typed.
const box = document.getElementById('version-search');
const input = document.getElementById('version-search-input') as HTMLInputElement | null;
const count = document.getElementById('version-search-count');
const rows = [...document.querySelectorAll<HTMLTableRowElement>('#history tbody tr')];

if (box && input && count && rows.length > 0) {
  box.hidden = false;
  input.addEventListener('input', () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const row of rows) {
      const text = row.textContent?.toLowerCase() ?? '';
      const match = words.every((word) => text.includes(word));
      row.hidden = !match;
      if (match) shown++;
    }
    count.textContent = words.length === 0 ? '' : `${shown} of ${rows.length} shown`;
  });
}

/**
 * Issue 31 item 6: the fields of a form's grid (`.fields`) line up. Fields whose boxes overlap
 * vertically share a row, and within a row each field's first parts (the label or legend, then
 * the control, then the hint) start at the same height, within a pixel. Evaluated in the page: a
 * string, since tsx names the functions of a test's source and those names do not exist there.
 * Answers one line per misaligned part, empty when every row lines up.
 */
export const FORM_MISALIGNMENTS = `(() => {
  const misaligned = [];
  for (const grid of document.querySelectorAll('.fields')) {
    const fields = [...grid.children].filter((field) => field.getBoundingClientRect().height > 0);
    const rows = [];
    for (const field of fields) {
      const box = field.getBoundingClientRect();
      const row = rows.find((r) => box.top < r.bottom && r.top < box.bottom);
      if (row) row.fields.push(field);
      else rows.push({ top: box.top, bottom: box.bottom, fields: [field] });
    }
    for (const row of rows)
      for (const [part, name] of ['label', 'control', 'hint'].entries()) {
        const tops = row.fields
          .map((field) => [field, field.children[part]])
          .filter(([, child]) => child && child.getBoundingClientRect().height > 0)
          .map(([field, child]) => [field.querySelector('[id]')?.id ?? field.textContent.trim().slice(0, 20), Math.round(child.getBoundingClientRect().top)]);
        const lowest = Math.min(...tops.map(([, top]) => top));
        for (const [id, top] of tops)
          if (top - lowest > 1) misaligned.push((grid.closest('form')?.id ?? 'form') + ': ' + id + "'s " + name + ' at ' + top + ', ' + (top - lowest) + ' px below its row');
      }
  }
  return misaligned;
})()`;

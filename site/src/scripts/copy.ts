// Copy buttons (CopyButton.astro): shown once this runs, one listener for the whole page.
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) button.hidden = false;

document.addEventListener('click', async (event) => {
  const button = (event.target as Element | null)?.closest<HTMLButtonElement>('button[data-copy]');
  if (!button) return;
  const text = button.dataset.copy ?? '';
  const value = text.startsWith('/') ? new URL(text, location.href).href : text;
  const label = button.textContent;
  try {
    await navigator.clipboard.writeText(value);
    button.textContent = 'Copied';
  } catch {
    // No clipboard (an insecure origin, or permission refused): show the text to copy by hand.
    window.prompt('Copy this:', value);
  }
  setTimeout(() => (button.textContent = label), 1500);
});

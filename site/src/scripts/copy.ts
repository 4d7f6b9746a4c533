// Copy buttons (CopyButton.astro): shown once this runs, one listener for the whole page. A status
// line (role=status, polite) tells screen readers what the button's "Copied" shows.
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) button.hidden = false;

const status = document.createElement('p');
status.id = 'copy-status';
status.className = 'visually-hidden';
status.setAttribute('role', 'status');
(document.querySelector('main') ?? document.body).append(status);
let statusTimer: ReturnType<typeof setTimeout> | undefined;

document.addEventListener('click', async (event) => {
  const button = (event.target as Element | null)?.closest<HTMLButtonElement>('button[data-copy]');
  if (!button) return;
  const text = button.dataset.copy ?? '';
  const value = text.startsWith('/') ? new URL(text, location.href).href : text;
  // The label before any click: a second click within 1.5 s must not keep "Copied" for good.
  const label = (button.dataset.label ??= button.textContent ?? 'Copy');
  try {
    await navigator.clipboard.writeText(value);
    button.textContent = 'Copied';
    status.textContent = 'Copied';
  } catch {
    // No clipboard (an insecure origin, or permission refused): show the text to copy by hand.
    window.prompt('Copy this:', value);
  }
  setTimeout(() => (button.textContent = label), 1500);
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => (status.textContent = ''), 1500);
});

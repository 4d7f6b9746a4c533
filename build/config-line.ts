/** A config line cannot carry a control character: one in a manifest's path or header is a defect upstream. */
export function refuseControl(text: string): void {
  const control = /[\p{Cc}\p{Zl}\p{Zp}]/u.exec(text);
  if (control)
    throw new Error(
      `deployment configs: ${JSON.stringify(text)} holds U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}, which no config line can carry`,
    );
}

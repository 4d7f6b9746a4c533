/** Text for XML or HTML, in an element or a quoted attribute: the five special characters as character references. */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

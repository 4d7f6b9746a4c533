import { DOMParser } from '@xmldom/xmldom';
import * as assert from 'uvu/assert';

/** `xml` parsed as XML, strictly: any warning or error of the parser fails the test, naming `what`. */
export function parseXmlStrictly(xml: string, what: string) {
  const problems: string[] = [];
  const document = new DOMParser({
    onError: (level, message) => problems.push(`${level}: ${message}`),
  }).parseFromString(xml, 'text/xml');
  assert.equal(problems, [], what);
  return document;
}

/** The text an HTML fragment stands for: its character references decoded in one pass (enough for tests). */
export function htmlText(html: string): string {
  const named: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
  return html.replace(/&(#x[0-9a-f]+|#\d+|lt|gt|quot|apos|amp);/gi, (_, ref: string) =>
    ref.startsWith('#x') || ref.startsWith('#X')
      ? String.fromCodePoint(parseInt(ref.slice(2), 16))
      : ref.startsWith('#')
        ? String.fromCodePoint(Number(ref.slice(1)))
        : named[ref]!,
  );
}

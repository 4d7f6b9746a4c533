/**
 * One route's URLs, written once: its pattern in h3's (rou3's) form (`/feed/:software.atom`), from
 * which the route, the OpenAPI template, a matcher and a builder are derived. Each capability's
 * `paths.ts` lists its rules; everything else that names, lists or recognises its URLs uses them.
 */
export type PathRule<Param extends string = string> = {
  /** The route as h3 registers it, from the root. */
  pattern: string;
  /** The path as the OpenAPI document writes it (`{id}` for `:id`). */
  template: string;
  /**
   * The parameters of a path (its query string ignored; raw, not decoded) when the path is one of
   * this rule's, else undefined. Each parameter matches its shape (any segment text by default).
   */
  match(path: string): Record<Param, string> | undefined;
  /** The path with these parameters (as given: the values our builders pass need no escaping). */
  build(params: Record<Param, string>): string;
  /** The pattern as an app mounted at `prefix` registers it. */
  under(prefix: string): string;
  /** Each parameter's shape, as a regular expression's source (the property test draws values from them). */
  shapes: Readonly<Record<Param, string>>;
};

/** The name of the parameter that starts `text`: up to the next `/` or `.`. */
type NameOf<Text extends string> = Text extends `${infer Name}/${string}`
  ? NameOf<Name>
  : Text extends `${infer Name}.${string}`
    ? Name
    : Text;
/** The parameter names of a pattern, as a union: `'/a/:b/:c.atom'` gives `'b' | 'c'`. */
export type ParamsOf<Pattern extends string> = Pattern extends `${string}:${infer Rest}`
  ? NameOf<Rest> | ParamsOf<Rest>
  : never;

const PARAM = /:([A-Za-z_][A-Za-z0-9_]*)/g;
/** A parameter without a shape: the text of one segment (a `?` starts the query, never a parameter). */
const ANY_SEGMENT = '[^/?]+';
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A rule from its pattern and the shapes of those parameters that have one (regular expression sources). */
export function pathRule<const Pattern extends string>(
  pattern: Pattern,
  shapes: Partial<Record<ParamsOf<Pattern>, string>> = {},
): PathRule<ParamsOf<Pattern>> {
  type Param = ParamsOf<Pattern>;
  const names = [...pattern.matchAll(PARAM)].map((found) => found[1] as Param);
  const shapeOf = (name: Param) => (shapes as Record<Param, string | undefined>)[name] ?? ANY_SEGMENT;
  const literals = pattern.split(PARAM).filter((_, i) => i % 2 === 0);
  const source = literals
    .map((literal, i) => escapeRegExp(literal) + (i < names.length ? `(${shapeOf(names[i]!)})` : ''))
    .join('');
  // Up to the query string, without cutting it off first: no literal of a pattern, and no shape,
  // holds a `?` (a segment is `[^/?]+`), so the match ends where the path does.
  const regex = new RegExp(`^${source}(?:\\?|$)`);
  return {
    pattern,
    template: pattern.replace(PARAM, '{$1}'),
    match(path) {
      const found = regex.exec(path);
      if (!found) return undefined;
      // Groups in the shapes are non-capturing by convention; the parameters' groups come in order.
      return Object.fromEntries(names.map((name, i) => [name, found[i + 1]!])) as Record<Param, string>;
    },
    build: (params) => pattern.replace(PARAM, (_, name: Param) => params[name]),
    under(prefix) {
      if (!pattern.startsWith(prefix)) throw new Error(`${pattern} is not under ${prefix}`);
      return pattern.slice(prefix.length) || '/';
    },
    shapes: Object.fromEntries(names.map((name) => [name, shapeOf(name)])) as Record<Param, string>,
  };
}

/** A shape that is one of these words exactly (a table's names, written once where they live). */
export const oneOf = (words: readonly string[]) => `(?:${words.map(escapeRegExp).join('|')})`;

/** The parameters of the first of these rules a path matches (loosely typed: the rules' parameters differ). */
export function matchFirst(rules: readonly PathRule[], path: string): Record<string, string | undefined> | undefined {
  for (const rule of rules) {
    const params = rule.match(path);
    if (params) return params;
  }
  return undefined;
}

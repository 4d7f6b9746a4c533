// SPEC 2.8: brands, their variants in the list endpoint's order, and which source each one uses.
// `background` is what a variant needs behind it: light text and white marks vanish on white, so
// JPEG (no alpha) flattens those onto a dark colour.

export type VariantSpec = {
  /** The source file under data/brands/<brand>/ (aliases share one: papermc default = none). */
  source: string;
  background: 'light' | 'dark';
};

const DARK = '#1a1a1a';
const LIGHT = '#ffffff';
export const FLATTEN_COLOURS = { light: LIGHT, dark: DARK } as const;

export const BRANDS = {
  papermc: {
    light: { source: 'light.png', background: 'dark' },
    dark: { source: 'dark.png', background: 'light' },
    none: { source: 'none.png', background: 'light' },
    default: { source: 'none.png', background: 'light' },
  },
  velocity: {
    white: { source: 'white.png', background: 'dark' },
    blue: { source: 'blue.png', background: 'light' },
    'blue-no-text': { source: 'blue-no-text.png', background: 'light' },
    'white-no-text': { source: 'white-no-text.png', background: 'dark' },
    default: { source: 'white.png', background: 'dark' },
  },
  folia: { default: { source: 'default.png', background: 'light' } },
  canvasmc: { default: { source: 'default.png', background: 'light' } },
  leafmc: { default: { source: 'default.svg', background: 'light' } },
  purpurmc: { default: { source: 'default.png', background: 'light' } },
} as const satisfies Record<string, Record<string, VariantSpec>>;

export type BrandName = keyof typeof BRANDS;
export const BRAND_NAMES = Object.keys(BRANDS) as BrandName[];

export function variantsOf(brand: BrandName): string[] {
  return Object.keys(BRANDS[brand]);
}

export function findVariant(brand: BrandName, variant: string): VariantSpec | undefined {
  return (BRANDS[brand] as Record<string, VariantSpec>)[variant];
}

export function findBrand(name: string): BrandName | undefined {
  const lower = name.toLowerCase();
  return (BRAND_NAMES as string[]).includes(lower) ? (lower as BrandName) : undefined;
}

/** The sizes the build precomputes for every variant and format. */
export const COMMON_SIZES = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024] as const;

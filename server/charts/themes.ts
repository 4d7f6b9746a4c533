// SPEC 4.9.3-4: the two themes, as data.
export const THEMES = {
  light: {
    background: '#ffffff',
    text: '#1f2937',
    muted: '#6b7280',
    grid: '#e5e7eb',
    peak: '#2563eb',
    average: '#16a34a',
  },
  dark: {
    background: '#1a1a1a',
    text: '#f3f4f6',
    muted: '#9ca3af',
    grid: '#3f3f46',
    peak: '#60a5fa',
    average: '#4ade80',
  },
} as const;

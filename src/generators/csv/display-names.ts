/*
 * Display names for the CSV, kept apart from descriptors.ts so that
 * generate bundle does not load the TypeScript compiler just to title a name.
 */

/** `containerPort` → `Container Port`, `HTTPRoute` → `HTTP Route`, as operator-sdk titles Go names. */
export function spacedWords(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean);
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

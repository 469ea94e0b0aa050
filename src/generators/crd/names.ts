/**
 * The lower-case plural kubebuilder derives for a kind (memcacheds, policies,
 * statuses). Matches the common English rules flect applies; irregular nouns
 * need `plural` in PROJECT or `+kubebuilder:resource:path=`.
 */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

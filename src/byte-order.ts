/**
 * The one string order of the CLI's sorted output (files listed, CSV
 * entries, CRD versions, RBAC rules, PROJECT resources): code-unit order,
 * what `<` does on strings.
 *
 * Why not `localeCompare`: the Go tools we stand for (operator-sdk,
 * kubebuilder, controller-gen) sort with `sort.Strings` / `<`, which is byte
 * order, case-sensitive and locale-free; an ICU collation puts `a` before
 * `B` and `_` before `.`, so the same input could list differently from
 * theirs, and from one Node build (full ICU, small ICU) to another. It also
 * costs ~9 ms on its first call in a process (the collator's set-up), a
 * noticeable share of a short command's wall time.
 *
 * UTF-16 code-unit order equals UTF-8 byte order except between a character
 * above U+FFFF and one in U+E000..U+FFFF; none of the names we sort
 * (Kubernetes names, paths in a project, image references) can hold both.
 */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

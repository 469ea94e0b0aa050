/**
 * Type aliases for API types (`apis/<version>/<kind>_types.ts`). They cost
 * nothing at run time; `generate manifests` reads their names to emit the
 * schema controller-gen would emit for the Go type of the same name.
 */

/** A 32-bit integer field: `type: integer, format: int32`. */
export type int32 = number;
/** A 64-bit integer field: `type: integer, format: int64`. */
export type int64 = number;
/**
 * A floating-point field: `type: number`. Like controller-gen, `generate
 * manifests` rejects it unless floats are allowed (`--allow-dangerous-types`).
 */
export type float64 = number;
/** metav1.Time: an RFC 3339 timestamp string (`format: date-time`). */
export type Time = string;
/** metav1.MicroTime: an RFC 3339 timestamp with microseconds. */
export type MicroTime = string;
/** metav1.Duration: a Go duration string such as `1m30s`. */
export type Duration = string;
/** resource.Quantity: `1Gi`, `500m` or a plain number. */
export type Quantity = string | number;
/** intstr.IntOrString. */
export type IntOrString = string | number;
/** runtime.RawExtension: any embedded JSON, kept as is. */
export type RawExtension = Record<string, unknown>;

/** metav1.Condition, with the same fields and constraints. */
export interface Condition {
  /** Type of condition in CamelCase or in foo.example.com/CamelCase. */
  type: string;
  /** Status of the condition: True, False or Unknown. */
  status: 'True' | 'False' | 'Unknown';
  /** The .metadata.generation the condition was set for. */
  observedGeneration?: int64;
  /** When the condition last changed from one status to another. */
  lastTransitionTime: Time;
  /** A programmatic CamelCase identifier for the last transition. */
  reason: string;
  /** A human-readable message about the transition; may be empty. */
  message: string;
}

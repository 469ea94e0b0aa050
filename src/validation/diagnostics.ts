/**
 * The result model shared by every validator: operator-framework/api's
 * `errors.Error` and `errors.ManifestResult`, rendered exactly as
 * operator-sdk prints them (`<Level>: [Field f, ][Value v][: detail]`).
 */
import { leafText } from './documents.js';

/** Severity of one finding; the words are the ones operator-sdk prints. */
export type Level = 'Error' | 'Warning';

/** One finding. `badValue` undefined plays the role of Go's nil (no `Value` part). */
export interface ApiError {
  level: Level;
  field?: string;
  badValue?: unknown;
  detail: string;
}

/** The findings about one manifest (or the bundle), split by level like the api's ManifestResult. */
export interface ManifestResult {
  name: string;
  errors: ApiError[];
  warnings: ApiError[];
}

/** Creates an empty result named `name`. */
export function manifestResult(name: string, findings: readonly ApiError[] = []): ManifestResult {
  const result: ManifestResult = { name, errors: [], warnings: [] };
  addFindings(result, findings);
  return result;
}

/** Files each finding under errors or warnings by its level. */
export function addFindings(result: ManifestResult, findings: readonly ApiError[]): void {
  for (const finding of findings) (finding.level === 'Error' ? result.errors : result.warnings).push(finding);
}

/** A CSV-level finding: the detail is prefixed with `(<csv-name>)` and the value is empty, as the api's ErrInvalidCSV does. */
export function csvFinding(level: Level, detail: string, csvName: string): ApiError {
  return { level, badValue: '', detail: `(${csvName}) ${detail}` };
}

/** A finding about a value (a GVK, a name), as the api's ErrInvalidBundle / ErrFailedValidation do. */
export function valueFinding(level: Level, detail: string, value: unknown): ApiError {
  return { level, badValue: value, detail };
}

/** A required CSV field that is empty, as the api's ErrFieldMissing reports it (Go struct path, "field" or "struct"). */
export function missingField(goPath: string, kind: 'field' | 'struct'): ApiError {
  return { level: 'Error', field: goPath, badValue: kind, detail: 'required field missing' };
}

/** Renders a finding the way operator-sdk prints it. */
export function renderFinding(finding: ApiError): string {
  let detail = finding.detail === '' ? '' : `: ${finding.detail}`;
  const hasValue = finding.badValue !== undefined;
  if (finding.field && hasValue) detail = `Field ${finding.field}, Value ${goValue(finding.badValue)}${detail}`;
  else if (finding.field) detail = `Field ${finding.field}${detail}`;
  else if (hasValue) detail = `Value ${goValue(finding.badValue)}${detail}`;
  return detail === '' ? 'ErrMessageMissing' : `${finding.level}: ${detail}`;
}

/** A group/version/kind, printed like Go's schema.GroupVersionKind ("g/v, Kind=K"; core group: "v, Kind=K"). */
export class GroupVersionKind {
  constructor(
    readonly group: string,
    readonly version: string,
    readonly kind: string,
  ) {}

  /** The key used to compare GVKs in sets. */
  get key(): string {
    return `${this.group}\u0000${this.version}\u0000${this.kind}`;
  }

  /** Parses an object's apiVersion and kind. */
  static of(apiVersion: string, kind: string): GroupVersionKind {
    const slash = apiVersion.lastIndexOf('/');
    return slash < 0
      ? new GroupVersionKind('', apiVersion, kind)
      : new GroupVersionKind(apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }

  toString(): string {
    const groupVersion = this.group === '' ? this.version : `${this.group}/${this.version}`;
    return `${groupVersion}, Kind=${this.kind}`;
  }
}

/**
 * Formats a value like Go's `%v`: maps as `map[k:v ...]` with sorted keys,
 * lists as `[a b]`, null as `<nil>`. The api embeds such dumps in messages.
 */
export function goValue(value: unknown): string {
  if (value === null) return '<nil>';
  if (value instanceof GroupVersionKind) return value.toString();
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([key, inner]) => `${key}:${goValue(inner)}`).join(' ')}]`;
  }
  return leafText(value);
}

/** Formats a string list like Go's `%+q`: `["a" "b"]` with non-ASCII escaped. */
export function goQuotedList(values: readonly string[]): string {
  return `[${values.map(goQuote).join(' ')}]`;
}

/** Formats a string like Go's `%q` / `%+q` (JSON escaping is close enough for printable input). */
export function goQuote(value: string): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

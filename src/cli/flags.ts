import { InvalidArgumentError } from 'commander';

/** Spellings of true a boolean flag accepts, any case: Go's strconv.ParseBool's plus yes. */
const TRUE_WORDS = ['true', 't', '1', 'yes'];
/** Spellings of false a boolean flag accepts, any case: Go's strconv.ParseBool's plus no. */
const FALSE_WORDS = ['false', 'f', '0', 'no'];

/**
 * Parses the value of every `[bool]` flag written Go-style
 * (`--namespaced=false`), as operator-sdk users type it: true, t, 1 or yes;
 * false, f, 0 or no; in any case. Anything else is commander's usage error.
 */
export function parseBooleanFlag(value: string): boolean {
  const normalised = value.toLowerCase();
  if (TRUE_WORDS.includes(normalised)) return true;
  if (FALSE_WORDS.includes(normalised)) return false;
  throw new InvalidArgumentError(`"${value}" is not true or false`);
}

import { InvalidArgumentError } from 'commander';

/**
 * Parses the value of a boolean flag written Go-style (`--namespaced=false`),
 * as operator-sdk users type it.
 */
export function parseBooleanFlag(value: string): boolean {
  const normalised = value.toLowerCase();
  if (['true', '1', 'yes', 't'].includes(normalised)) return true;
  if (['false', '0', 'no', 'f'].includes(normalised)) return false;
  throw new InvalidArgumentError(`"${value}" is not true or false`);
}

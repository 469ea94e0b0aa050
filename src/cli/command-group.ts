import type { Command } from 'commander';

/**
 * The subcommand group `name` of `parent` (`create`, `generate`,
 * `generate kustomize`, `bundle`), created with `description` (and `setup`,
 * e.g. help text) by whichever command registers first. Every command of the
 * group registers on the one instance, whatever the registration order.
 */
export function commandGroup(
  parent: Command,
  name: string,
  description: string,
  setup?: (group: Command) => void,
): Command {
  const existing = parent.commands.find((command) => command.name() === name);
  if (existing) return existing;
  const group = parent.command(name).description(description);
  setup?.(group);
  return group;
}

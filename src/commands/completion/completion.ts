import type { Command } from 'commander';
import { UsageError } from '../../errors.js';

/** Shells `completion` writes scripts for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;

interface CommandWords {
  /** Space-separated path, e.g. "create api"; "" for the root. */
  path: string;
  subcommands: string[];
  flags: string[];
}

/** Every command's subcommands and flags, read from the registered commander tree. */
function commandWords(root: Command): CommandWords[] {
  const result: CommandWords[] = [];
  const walk = (command: Command, path: string): void => {
    result.push({
      path,
      subcommands: command.commands.map((child) => child.name()),
      flags: [
        ...command.options.map((option) => option.long).filter((flag): flag is string => Boolean(flag)),
        '--help',
      ],
    });
    for (const child of command.commands) walk(child, path ? `${path} ${child.name()}` : child.name());
  };
  walk(root, '');
  return result;
}

/** A completion script for `shell`, generated from the live command tree so it never drifts. */
export function completionScript(shell: string, root: Command): string {
  const name = root.name();
  const words = commandWords(root);
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  switch (shell) {
    case 'bash': {
      const cases = words
        .map((entry) => `    "${entry.path}") words="${[...entry.subcommands, ...entry.flags].join(' ')}" ;;`)
        .join('\n');
      return `# bash completion for ${name}; load with: source <(${name} completion bash)
${fn}() {
  local cur path="" w
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for w in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$w" in -*) ;; *) path="\${path:+$path }$w" ;; esac
  done
  local words=""
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -F ${fn} ${name}
`;
    }
    case 'zsh': {
      const cases = words
        .map((entry) => `    "${entry.path}") words=(${[...entry.subcommands, ...entry.flags].join(' ')}) ;;`)
        .join('\n');
      return `#compdef ${name}
# zsh completion for ${name}; load with: source <(${name} completion zsh)
${fn}() {
  local path="" w
  local -a words
  for w in "\${(@)words[2,CURRENT-1]}"; do
    [[ "$w" == -* ]] || path="\${path:+$path }$w"
  done
  case "$path" in
${cases}
  esac
  compadd -- $words
}
compdef ${fn} ${name}
`;
    }
    case 'fish': {
      const lines = [`# fish completion for ${name}; load with: ${name} completion fish | source`];
      for (const entry of words) {
        const parts = entry.path ? entry.path.split(' ') : [];
        const condition =
          parts.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${parts[parts.length - 1]}`;
        for (const sub of entry.subcommands) lines.push(`complete -c ${name} -f -n '${condition}' -a ${sub}`);
        if (parts.length > 0)
          for (const flag of entry.flags) lines.push(`complete -c ${name} -f -n '${condition}' -l ${flag.slice(2)}`);
      }
      return `${lines.join('\n')}\n`;
    }
    default:
      throw new UsageError(`unsupported shell "${shell}"`, `pass one of: ${COMPLETION_SHELLS.join(', ')}`);
  }
}

import type { Command } from 'commander';
import type { Context } from '../context.ts';
import { examples } from '../help.ts';
import { oneOf } from '../values.ts';

interface CommandWords {
  /** `nodes`, or `config set`. */
  path: string[];
  description: string;
  options: string[];
}

/** Every command of the program with its long options, global ones included. */
function commandTree(program: Command): { top: CommandWords[]; all: CommandWords[]; global: string[] } {
  const optionsOf = (command: Command) => command.options.map((o) => o.long).filter((o): o is string => !!o);
  const global = [...optionsOf(program), '--help'];
  const all: CommandWords[] = [];
  const walk = (command: Command, path: string[]) => {
    for (const sub of command.commands) {
      if (sub.name() === 'help') continue;
      const words = { path: [...path, sub.name()], description: sub.description(), options: optionsOf(sub) };
      all.push(words);
      walk(sub, words.path);
    }
  };
  walk(program, []);
  return { top: all.filter((c) => c.path.length === 1), all, global };
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function bashCompletion(program: Command): string {
  const { top, all, global } = commandTree(program);
  const cases = all
    .map((c) => {
      const subs = all.filter(
        (s) => s.path.length === c.path.length + 1 && s.path.join(' ').startsWith(`${c.path.join(' ')} `),
      );
      const words = [...subs.map((s) => s.path.at(-1)!), ...c.options, ...global];
      return `    ${quote(c.path.join(' '))}) words=${quote(words.join(' '))} ;;`;
    })
    .join('\n');
  return `# bash completion for switchyard: source it, or save it as
# ~/.local/share/bash-completion/completions/switchyard
_switchyard() {
  local cur=\${COMP_WORDS[COMP_CWORD]}
  local cmdpath="" word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    case "$word" in -*) continue ;; esac
    case "$cmdpath" in
      "") cmdpath="$word" ;;
      config|memory) cmdpath="$cmdpath $word" ;;
    esac
  done
  local words
  case "$cmdpath" in
    "") words=${quote([...top.map((c) => c.path[0]), ...global].join(' '))} ;;
${cases}
    *) words=${quote(global.join(' '))} ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _switchyard switchyard
`;
}

export function zshCompletion(program: Command): string {
  const { all, global } = commandTree(program);
  const describe = (list: CommandWords[]) =>
    list
      .map((c) => quote(`${c.path.at(-1)}:${c.description.split('. ')[0]!.replace(/:/g, '\\:')}`))
      .join(' ');
  const optionCases = all
    .map((c) => `    ${quote(c.path.join(' '))}) compadd -- ${[...c.options, ...global].join(' ')} ;;`)
    .join('\n');
  const subcommandCases = all
    .filter((c) => all.some((s) => s.path.length === 2 && s.path[0] === c.path[0]) && c.path.length === 1)
    .map((c) => {
      const subs = all.filter((s) => s.path.length === 2 && s.path[0] === c.path[0]);
      return `      ${c.path[0]}) subs=(${describe(subs)}); _describe 'subcommand' subs; return ;;`;
    })
    .join('\n');
  return `#compdef switchyard
# zsh completion for switchyard: save it as _switchyard in a directory of $fpath
# (or source it after compinit).
_switchyard() {
  local -a commands subs
  local cmdpath=""
  local word
  for word in \${words[2,CURRENT-1]}; do
    [[ $word == -* ]] && continue
    if [[ -z $cmdpath ]]; then cmdpath=$word
    elif [[ $cmdpath == config || $cmdpath == memory ]]; then cmdpath="$cmdpath $word"
    fi
  done
  if [[ \${words[CURRENT]} != -* ]]; then
    if [[ -z $cmdpath ]]; then
      commands=(${describe(all.filter((c) => c.path.length === 1))})
      _describe 'command' commands
      return
    fi
    case $cmdpath in
${subcommandCases}
    esac
    _files
    return
  fi
  case $cmdpath in
${optionCases}
    *) compadd -- ${global.join(' ')} ;;
  esac
}
if (( $+functions[compdef] )); then compdef _switchyard switchyard; fi
`;
}

export function registerCompletionCommand(program: Command, ctx: Context): void {
  examples(
    program
      .command('completion')
      .description('Print the shell completion script for bash or zsh.')
      .argument('<shell>', 'bash or zsh', oneOf(['bash', 'zsh'] as const)),
    'source <(switchyard completion bash)',
    'switchyard completion zsh > ~/.zfunc/_switchyard',
  ).action((shell: 'bash' | 'zsh') => {
    ctx.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
  });
}

// Pure: shell completion scripts for bash, zsh and fish. Session and model names are not baked in:
// the scripts ask `argo __complete sessions|models` (hidden) each time, so they are always current.
import { THINK_LEVELS } from '../replay/prompt.js';


export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface CompletionCommand {
  name: string;
  description: string;
  /** Long and short flags, e.g. ['--json', '-n']. */
  options: string[];
  /** Words that may follow the command name (subcommands, shells). */
  words?: string[];
}

export interface CompletionSpec {
  /** Flags of the bare `argo "question"` command. */
  options: string[];
  commands: CompletionCommand[];
}

/** Flags whose value is completed from Argo's own data or a fixed list. */
const VALUE_SOURCES: readonly { flags: string[]; words: string | null; dynamic: 'sessions' | 'models' | null }[] = [
  { flags: ['--think'], words: ['on', 'off', ...THINK_LEVELS].join(' '), dynamic: null },
  { flags: ['-s', '--session'], words: null, dynamic: 'sessions' },
  { flags: ['-m', '--model'], words: null, dynamic: 'models' },
  { flags: ['-r', '--replay'], words: 'none session last:1 last:3 last:5', dynamic: null },
];
/** Flags that take a value that cannot be completed (the next word is not a command). */
const VALUE_FLAGS = ['-s', '--session', '-m', '--model', '-r', '--replay', '-o', '--option', '--system', '--system-file', '--home', '--host', '--budget', '--persona', '--mode', '--verbosity', '--api', '--reason', '--temperature', '--seed', '--num-ctx', '--keep-alive', '--think'];

export function completionScript(shell: Shell, spec: CompletionSpec): string {
  switch (shell) {
    case 'bash':
      return bashScript(spec);
    case 'zsh':
      return zshScript(spec);
    case 'fish':
      return fishScript(spec);
  }
}

const quoteSingle = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

function bashScript(spec: CompletionSpec): string {
  const names = spec.commands.map((command) => command.name).join(' ');
  const perCommand = spec.commands
    .map((command) => `      ${command.name}) words=${quoteSingle([...(command.words ?? []), ...command.options].join(' '))} ;;`)
    .join('\n');
  const values = VALUE_SOURCES.map(
    (source) =>
      source.dynamic !== null
        ? `    ${source.flags.join('|')}) __argo_names ${source.dynamic}; __argo_colons; return ;;`
        : `    ${source.flags.join('|')}) COMPREPLY=($(compgen -W "${source.words ?? ''}" -- "$cur")); __argo_colons; return ;;`,
  ).join('\n');
  return `# argo completion for bash. Load it with:  source <(argo completion bash)
# or save it:  argo completion bash > ~/.local/share/bash-completion/completions/argo
__argo_names() {
  # Session and model names are text from the data home and from Ollama: matched and quoted as
  # such, never handed to compgen -W or word splitting, which would expand $(…), globs and quotes.
  local name
  COMPREPLY=()
  while IFS= read -r name; do
    [[ -n "$name" && "$name" == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$name")")
  done < <(argo __complete "$1" 2>/dev/null)
}
__argo_colons() {
  # Model names hold a colon (llama3:8b), which bash splits words on.
  if [[ "$cur" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
    local prefix=\${cur%"\${cur##*:}"}
    local i
    for i in "\${!COMPREPLY[@]}"; do COMPREPLY[i]=\${COMPREPLY[i]#"$prefix"}; done
  fi
}
_argo() {
  local cur prev words command="" i skip=0
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${values}
    ${VALUE_FLAGS.join('|')}) return ;;
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    if ((skip)); then skip=0; continue; fi
    case "\${COMP_WORDS[i]}" in
      --) return ;;
      ${VALUE_FLAGS.join('|')}) skip=1 ;;
      -*) ;;
      *) command="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  if [[ -z "$command" ]]; then
    if [[ "$cur" == -* ]]; then words=${quoteSingle(spec.options.join(' '))}; else words=${quoteSingle(`${names} help`)}; fi
  else
    case "$command" in
${perCommand}
      help) words=${quoteSingle(names)} ;;
      *) return ;;
    esac
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _argo argo
`;
}

function zshScript(spec: CompletionSpec): string {
  const names = spec.commands.map((command) => `${command.name}:${command.description.replace(/:/g, '\\:')}`);
  const perCommand = spec.commands
    .map((command) => `    ${command.name}) compadd -- ${[...(command.words ?? []), ...command.options].map(quoteSingle).join(' ')} ;;`)
    .join('\n');
  const values = VALUE_SOURCES.map(
    (source) =>
      `    ${source.flags.join('|')}) compadd -- ${source.dynamic ? `\${(f)"$(argo __complete ${source.dynamic} 2>/dev/null)"}` : (source.words ?? '')}; return ;;`,
  ).join('\n');
  return `#compdef argo
# argo completion for zsh. Load it with:  source <(argo completion zsh)
# or save it as _argo in a directory of your $fpath.
_argo() {
  local prev=\${words[CURRENT-1]}
  case $prev in
${values}
    ${VALUE_FLAGS.join('|')}) return ;;
  esac
  if (( CURRENT == 2 )); then
    if [[ $PREFIX == -* ]]; then
      compadd -- ${spec.options.map(quoteSingle).join(' ')}
    else
      local -a commands
      commands=(${names.map(quoteSingle).join(' ')} 'help:show help for a command')
      _describe command commands
    fi
    return
  fi
  case \${words[2]} in
${perCommand}
    help) compadd -- ${spec.commands.map((command) => quoteSingle(command.name)).join(' ')} ;;
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _argo "$@"; else compdef _argo argo; fi
`;
}

function fishScript(spec: CompletionSpec): string {
  const flag = (option: string): string => (option.startsWith('--') ? `-l ${option.slice(2)}` : `-s ${option.slice(1)}`);
  const lines = [
    '# argo completion for fish. Load it with:  argo completion fish | source',
    '# or save it:  argo completion fish > ~/.config/fish/completions/argo.fish',
    'complete -c argo -f',
    `complete -c argo -n __fish_use_subcommand -a help -d 'show help for a command'`,
    ...spec.commands.map((command) => `complete -c argo -n __fish_use_subcommand -a ${command.name} -d ${quoteSingle(command.description)}`),
    ...VALUE_SOURCES.map(
      (source) =>
        `complete -c argo ${source.flags.map(flag).join(' ')} -x -a ${source.dynamic ? `'(argo __complete ${source.dynamic} 2>/dev/null)'` : quoteSingle(source.words ?? '')}`,
    ),
    ...spec.options.filter((option) => !VALUE_SOURCES.some((source) => source.flags.includes(option))).map((option) => `complete -c argo -n __fish_use_subcommand ${flag(option)}`),
  ];
  for (const command of spec.commands) {
    const when = `-n '__fish_seen_subcommand_from ${command.name}'`;
    if (command.words !== undefined && command.words.length > 0) lines.push(`complete -c argo ${when} -a ${quoteSingle(command.words.join(' '))}`);
    for (const option of command.options) {
      if (!VALUE_SOURCES.some((source) => source.flags.includes(option))) lines.push(`complete -c argo ${when} ${flag(option)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

// Pure: shell completion scripts for bash, zsh and fish. Session and model names are not baked in:
// the scripts ask `argo __complete sessions|models` (hidden) each time, so they are always current,
// passing on the --home and --host of the line being completed.
import { shellQuoted } from '../text/shell-word.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** Where a value's names come from: `argo __complete sessions|models`. */
export type NameSource = 'sessions' | 'models';

/**
 * What a flag's value is completed from: a fixed set of words, names from Argo's data, file or
 * folder names, or nothing (text, a number, a URL).
 */
export type FlagValue = { choices: readonly string[] } | { names: NameSource } | 'files' | 'folders' | 'text';

/** A flag that takes a value, in all its spellings (['-s', '--session']). */
export interface ValueFlag {
  flags: string[];
  value: FlagValue;
}

export interface CompletionCommand {
  name: string;
  aliases?: string[];
  description: string;
  /** Long and short flags, e.g. ['--json', '-n']. */
  options: string[];
  /** Those of its flags that take a value, and what the value is. */
  values?: ValueFlag[];
  /** Fixed words the first argument may be (completion's shells). */
  words?: string[];
  /** What each positional argument is completed from, in order (null: nothing). */
  args?: (NameSource | null)[];
  subcommands?: CompletionCommand[];
}

export interface CompletionSpec {
  /** Flags of the bare `argo "question"` command. */
  options: string[];
  /** Those of them that take a value. */
  values: ValueFlag[];
  /** Every flag, of any command, that takes a value (the next word is that value, not a command or argument). */
  valueFlags: string[];
  commands: CompletionCommand[];
}

/** The flags on the line that say where names come from; passed on to `argo __complete`. */
const WHERE_FLAGS = ['--home', '--host'];

/** A command as the scripts see it: its path ("sessions show"), and what may follow it. */
interface Place {
  path: string;
  options: string[];
  values: ValueFlag[];
  /** Offered as the first word after the command: its subcommands and fixed words. */
  first: string[];
  args: (NameSource | null)[];
  /** The subcommands' names and aliases, each with the place it leads to. */
  subcommands: { name: string; names: string[]; path: string; description: string }[];
}

function placesOf(spec: CompletionSpec): Place[] {
  const place = (command: CompletionCommand, parent: string): Place[] => {
    const path = `${parent}${command.name}`;
    const subcommands = command.subcommands ?? [];
    return [
      {
        path,
        options: command.options,
        values: command.values ?? [],
        first: [...subcommands.map((sub) => sub.name), ...(command.words ?? [])],
        args: command.args ?? [],
        subcommands: subcommands.map((sub) => ({ name: sub.name, names: [sub.name, ...(sub.aliases ?? [])], path: `${path} ${sub.name}`, description: sub.description })),
      },
      ...subcommands.flatMap((sub) => place(sub, `${path} `)),
    ];
  };
  const help: Place = { path: 'help', options: [], values: [], first: spec.commands.map((command) => command.name), args: [], subcommands: [] };
  return [...spec.commands.flatMap((command) => place(command, '')), help];
}

/** Bare `argo "question"` as a place: its path is empty. */
function barePlace(spec: CompletionSpec): Place {
  return { path: '', options: spec.options, values: spec.values, first: [], args: [], subcommands: [] };
}

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

/** What the scripts do for a value: its kind, and for words, the choices. */
type ValueKind = 'sessions' | 'models' | 'words' | 'files' | 'folders' | 'text';

function kindOf(value: FlagValue): { kind: ValueKind; choices: readonly string[] } {
  if (typeof value === 'string') return { kind: value, choices: [] };
  if ('names' in value) return { kind: value.names, choices: [] };
  return { kind: 'words', choices: value.choices };
}

/**
 * The case, on the command the line runs, that sets kind (and choices) from the flag before the
 * cursor: a flag may take one kind of value in one command and another in the next (-o is
 * --option for a question, --output for export). Commands alike share one branch.
 */
function valueCase(spec: CompletionSpec, flag: string, choices: (words: readonly string[]) => string): string {
  const branches = new Map<string, string[]>();
  for (const place of [barePlace(spec), ...placesOf(spec)]) {
    if (place.values.length === 0) continue;
    // Flags alike share one pattern: --budget|--persona|--mode) kind=text.
    const patterns = new Map<string, string[]>();
    for (const { flags: spellings, value } of place.values) {
      const { kind, choices: words } = kindOf(value);
      const set = `kind=${kind}${kind === 'words' ? `; choices=${choices(words)}` : ''}`;
      patterns.set(set, [...(patterns.get(set) ?? []), ...spellings]);
    }
    const branch = `case ${flag} in ${[...patterns].map(([set, spellings]) => `${spellings.join('|')}) ${set} ;;`).join(' ')} esac`;
    branches.set(branch, [...(branches.get(branch) ?? []), place.path]);
  }
  return [...branches].map(([branch, paths]) => `      ${paths.map(shellQuoted).join('|')}) ${branch} ;;`).join('\n');
}

/**
 * The flags that take a value where the line has got to, by place: a word after one is its value,
 * not a command or an argument (-q is --quiet for a question, --grep TEXT for logs, so in
 * `argo logs -q rm` rm is the text). --home and --host everywhere, for where names come from.
 * Places alike share one entry; '' is bare argo.
 */
function takingFlagsByPlace(spec: CompletionSpec): [paths: string[], flags: string[]][] {
  const byFlags = new Map<string, { paths: string[]; flags: string[] }>();
  for (const place of [barePlace(spec), ...placesOf(spec)]) {
    const flags = [...new Set([...place.values.flatMap((value) => value.flags), ...WHERE_FLAGS])];
    const key = flags.join(' ');
    const entry = byFlags.get(key) ?? { paths: [], flags };
    entry.paths.push(place.path);
    byFlags.set(key, entry);
  }
  return [...byFlags.values()].map(({ paths, flags }) => [paths, flags]);
}

/** The scan both bash and zsh run over the words before the cursor (their syntax is alike here). */
function scanLoop(spec: CompletionSpec, shell: 'bash' | 'zsh'): string {
  // A command argo does not know: a flag takes a value if it does in every command that has it.
  const unknownPlace = allValueFlags(spec).join('|');
  const taking = takingFlagsByPlace(spec)
    .map(([paths, flags]) => `          ${paths.map(shellQuoted).join('|')}) case "$word" in ${flags.join('|')}) taking=1 ;; esac ;;`)
    .join('\n');
  const text = shell === 'bash' ? (word: string): string => `"$(__argo_text "${word}")"` : (word: string): string => `"\${(Q)${word}}"`;
  const withSubcommands = placesOf(spec).filter((place) => place.subcommands.length > 0);
  const nested = withSubcommands.map((place) => {
    const subs = place.subcommands.map((sub) => `${sub.names.join('|')}) place=${shellQuoted(sub.path)} ;;`).join(' ');
    return `      ${shellQuoted(place.path)}) case "$word" in ${subs} *) ((nargs++)) ;; esac ;;`;
  });
  const first = shell === 'bash' ? 1 : 2;
  const at = (index: string): string => `\${words[${index}]}`;
  const end = shell === 'bash' ? 'cword' : 'CURRENT';
  return `  for ((i = ${first}; i < ${end}; i++)); do
    word=${at('i')}
    # After --, every word is an argument, whatever it starts with; before a command, the question.
    if ((ended == 0)); then
      case "$word" in
        --) [[ -n "$place" ]] || return; ended=1; continue ;;
        ${WHERE_FLAGS.map((flag) => `${flag}=*`).join('|')}) where+=("\${word%%=*}" ${text('${word#*=}')}); continue ;;
        -*)
          taking=0
          case "$place" in
${taking}
          *) case "$word" in ${unknownPlace}) taking=1 ;; esac ;;
          esac
          ((taking)) || continue
          ((i++))
          if ((i < ${end})) && [[ ${WHERE_FLAGS.map((flag) => `$word == ${flag}`).join(' || ')} ]]; then where+=("$word" ${text(at('i'))}); fi
          continue ;;
      esac
    fi
    case "$place" in
      '') place=$word ;;
${nested.join('\n')}
      *) ((nargs++)) ;;
    esac
  done`;
}

function bashScript(spec: CompletionSpec): string {
  const names = spec.commands.map((command) => command.name).join(' ');
  const perPlace = placesOf(spec)
    .map((place) => {
      const sources = place.args.length > 0 ? ` sources=(${place.args.map((source) => shellQuoted(source ?? '')).join(' ')});` : '';
      return `    ${shellQuoted(place.path)}) options=${shellQuoted(place.options.join(' '))}; first=${shellQuoted(place.first.join(' '))};${sources} ;;`;
    })
    .join('\n');
  return `# argo completion for bash. Load it with:  eval "$(argo completion bash)"  (bash 3.2, macOS's, cannot source <(...))
# or save it:  argo completion bash > ~/.local/share/bash-completion/completions/argo
# Safe under set -u: a word or array element that may be unset is read with a default.
__argo_words() {
  # bash splits a word at each : and = of COMP_WORDBREAKS: llama3:8b reaches COMP_WORDS as llama3, :
  # and 8b, --host=http://h:1 as --host, =, http, :, //h, : and 1. Joins the pieces that no blank
  # parts on the line back into the words as typed (\${words[@]}, \${words[cword]} the cursor's), as
  # bash-completion's _get_comp_words_by_ref -n := does, without needing it installed; $breaks: the
  # characters of the two that bash does split on.
  local rest=$COMP_LINE blank piece before i last
  breaks=\${COMP_WORDBREAKS//[^:=]/}
  words=() cword=0
  for ((i = 0; i < \${#COMP_WORDS[@]}; i++)); do
    piece=\${COMP_WORDS[i]}
    blank=\${rest%%[![:space:]]*}
    rest=\${rest#"$blank"}
    if [[ "$rest" != "$piece"* ]]; then
      # Not the line bash split: leave its words as they are.
      words=("\${COMP_WORDS[@]}") cword=$COMP_CWORD
      return
    fi
    rest=\${rest#"$piece"}
    last=\${#words[@]}
    # A piece of only : and = is glued to its neighbours (never to the command name).
    if [[ -z "$blank" && -n "$breaks" ]] && ((last > 1)); then
      before=\${COMP_WORDS[i-1]}
      if [[ ( -n "$piece" && -z "\${piece//[$breaks]/}" ) || ( -n "$before" && -z "\${before//[$breaks]/}" ) ]]; then ((last--)); fi
    fi
    words[last]=\${words[last]-}$piece
    if ((i == COMP_CWORD)); then cword=$last; fi
  done
}
__argo_names() {
  # Session and model names are text from the data home and from Ollama: matched and quoted as
  # such, never handed to compgen -W or word splitting, which would expand $(…), globs and quotes.
  # They come from the --home and --host on the line (\${where[@]}, set by _argo). With "undashed"
  # ($2), a name starting with - is left out: before --, the command would take it for a flag.
  local name
  COMPREPLY=()
  while IFS= read -r name; do
    [[ -n "$name" && "$name" == "$cur"* ]] || continue
    [[ "\${2-}" == undashed && "$name" == -* ]] && continue
    COMPREPLY+=("$(printf '%q' "$name")")
  done < <(argo __complete "$1" \${where[@]+"\${where[@]}"} 2>/dev/null)
}
__argo_text() {
  # A word as typed (--home 'my dir'), as text: one level of quotes or backslashes off, never evaluated.
  case "$1" in
    \\'*\\' | \\"*\\") printf '%s' "\${1:1:\${#1}-2}" ;;
    *) printf '%s' "\${1//\\\\/}" ;;
  esac
}
__argo_offer() {
  # COMPREPLY holds whole values for $cur, but bash replaces only what follows the last : or = of
  # the word (the text after llama3: in llama3:8, after --model= in --model=ll): each is cut to that.
  # No file names when none match: a model or session is never a file.
  local typed=$flag$cur cut="" i
  [[ -n "$breaks" ]] && cut=\${typed%"\${typed##*[$breaks]}"}
  for i in "\${!COMPREPLY[@]}"; do COMPREPLY[i]=\${flag}\${COMPREPLY[i]}; COMPREPLY[i]=\${COMPREPLY[i]#"$cut"}; done
  if ((BASH_VERSINFO[0] >= 4)); then compopt +o default 2>/dev/null; fi
}
_argo() {
  local cur prev flag="" word place="" options="" first="" i nargs=0 ended=0 taking=0 kind="" choices="" cword breaks
  local -a words where=() sources=()
  __argo_words
  cur=\${words[cword]-}
  prev=\${words[cword-1]-}
  # Which command the line runs (place: "sessions show"), how many of its arguments are typed,
  # whether -- is among them, and the --home and --host given.
${scanLoop(spec, 'bash')}
  if ((ended == 0)); then
    # --model=ll: the value is completed as after --model.
    if [[ "$cur" == --*=* ]]; then
      flag=\${cur%%=*}=
      prev=\${flag%=}
      cur=\${cur#*=}
    fi
    # What the flag before the cursor takes in this command.
    case "$place" in
${valueCase(spec, '"$prev"', (words) => shellQuoted(words.join(' ')))}
    esac
    case "$kind" in
      sessions | models) __argo_names "$kind"; __argo_offer; return ;;
      words) COMPREPLY=($(compgen -W "$choices" -- "$cur")); __argo_offer; return ;;
      # A number, a URL, text: nothing to offer, not even file names.
      text) __argo_offer; return ;;
      # bash's own file names (complete -o default); for a folder, folder names only (bash 4 and later).
      files) return ;;
      folders) if ((BASH_VERSINFO[0] >= 4)); then compopt +o default -o dirnames 2>/dev/null; fi; return ;;
    esac
    # A value for a flag another command takes: not a command or an argument.
    case "$prev" in ${allValueFlags(spec).join('|')}) return ;; esac
  fi
  if [[ -z "$place" ]]; then
    if [[ "$cur" == -* ]]; then first=${shellQuoted(spec.options.join(' '))}; else first=${shellQuoted(`${names} help`)}; fi
    COMPREPLY=($(compgen -W "$first" -- "$cur"))
    return
  fi
  case "$place" in
${perPlace}
    *) return ;;
  esac
  if ((ended)) || [[ "$cur" != -* ]]; then
    case "\${sources[nargs]-}" in
      sessions | models)
        if ((ended)); then __argo_names "\${sources[nargs]}"; else __argo_names "\${sources[nargs]}" undashed; fi
        __argo_offer; return ;;
    esac
    ((ended)) && options=""
    ((nargs == 0)) && options="$first $options"
  fi
  COMPREPLY=($(compgen -W "$options" -- "$cur"))
}
complete -o default -F _argo argo
`;
}

function zshScript(spec: CompletionSpec): string {
  const names = spec.commands.map((command) => `${command.name}:${command.description.replace(/:/g, '\\:')}`);
  const array = (words: readonly string[]): string => `(${words.map(shellQuoted).join(' ')})`;
  const perPlace = placesOf(spec)
    .map((place) => {
      const sources = place.args.length > 0 ? ` sources=${array(place.args.map((source) => source ?? ''))};` : '';
      return `    ${shellQuoted(place.path)}) options=${array(place.options)}; first=${array(place.first)};${sources} ;;`;
    })
    .join('\n');
  return `#compdef argo
# argo completion for zsh. Load it with:  source <(argo completion zsh)
# or save it as _argo in a directory of your $fpath.
__argo_names() {
  # Names come from the --home and --host on the line ($where, set by _argo); compadd takes them as
  # text and quotes them for the line. With "undashed" ($2), a name starting with - is left out:
  # before --, the command would take it for a flag.
  local -a names
  names=(\${(f)"$(argo __complete $1 "\${where[@]}" 2>/dev/null)"})
  [[ \${2-} == undashed ]] && names=(\${names:#-*})
  compadd -- "\${names[@]}"
}
_argo() {
  local prev=\${words[CURRENT-1]} word place='' i nargs=0 ended=0 taking=0 kind=''
  local -a where options first sources choices
  # Which command the line runs (place: "sessions show"), how many of its arguments are typed,
  # whether -- is among them, and the --home and --host given (their quotes taken off by (Q),
  # nothing evaluated).
${scanLoop(spec, 'zsh')}
  # The flag whose value is being typed: the word before, or the one before "=" in --model=ll.
  local flag=$prev
  if ((ended == 0)); then
    if [[ $PREFIX == --*=* ]]; then
      flag=\${PREFIX%%=*}
      compset -P 1 '*='
    fi
    # What that flag takes in this command.
    case $place in
${valueCase(spec, '$flag', array)}
    esac
    case $kind in
      sessions | models) __argo_names $kind; return ;;
      words) compadd -- "\${choices[@]}"; return ;;
      files) _files; return ;;
      # _files -/ would fall back to files when no folder matches.
      folders) _path_files -/; return ;;
      text) return ;;
    esac
    # A value for a flag another command takes: not a command or an argument.
    case $flag in ${allValueFlags(spec).join('|')}) return ;; esac
    [[ $flag == "$prev" ]] || return
  fi
  if [[ -z $place ]]; then
    if [[ $PREFIX == -* ]]; then
      compadd -- ${spec.options.map(shellQuoted).join(' ')}
    else
      local -a commands
      commands=(${names.map(shellQuoted).join(' ')} 'help:show help for a command')
      _describe command commands
    fi
    return
  fi
  case $place in
${perPlace}
    *) return ;;
  esac
  if ((ended)) || [[ $PREFIX != -* ]]; then
    case \${sources[nargs+1]} in
      sessions | models)
        if ((ended)); then __argo_names \${sources[nargs+1]}; else __argo_names \${sources[nargs+1]} undashed; fi
        return ;;
    esac
    ((nargs == 0)) && compadd -- "\${first[@]}"
  fi
  ((ended)) || compadd -- "\${options[@]}"
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _argo "$@"; else compdef _argo argo; fi
`;
}

/** A flag's spellings as fish's complete takes them: -s m -l model. */
function fishFlags(flags: readonly string[]): string {
  return flags.map((flag) => (flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`)).join(' ');
}

/** What fish offers for a flag's value. */
function fishValue(value: FlagValue): string {
  const { kind, choices } = kindOf(value);
  switch (kind) {
    case 'sessions':
    case 'models':
      return `-x -a '(__argo_names ${kind})'`;
    case 'words':
      return `-x -a ${shellQuoted(choices.join(' '))}`;
    case 'files':
      return '-r -F';
    case 'folders':
      return `-x -a '(__fish_complete_directories)'`;
    case 'text':
      return '-x';
  }
}

/** A place's flags for fish, each offered only where the line runs that command. */
function fishOptionLines(place: Place, condition: string): string[] {
  const valued = new Set(place.values.flatMap((value) => value.flags));
  return [
    ...place.values.map((value) => `complete -c argo -n ${condition} ${fishFlags(value.flags)} ${fishValue(value.value)}`),
    ...place.options.filter((option) => !valued.has(option)).map((option) => `complete -c argo -n ${condition} ${fishFlags([option])}`),
  ];
}

function fishScript(spec: CompletionSpec): string {
  const valueFlags = allValueFlags(spec);
  const places = placesOf(spec);
  const nested = places
    .filter((place) => place.subcommands.length > 0)
    .flatMap((place) => [
      `            case ${shellQuoted(place.path)}`,
      '                switch $word',
      ...place.subcommands.flatMap((sub) => [`                    case ${sub.names.map(shellQuoted).join(' ')}`, `                        set -g __argo_place ${shellQuoted(sub.path)}`]),
      `                    case '*'`,
      '                        set -g __argo_nargs (math $__argo_nargs + 1)',
      '                end',
    ]);
  const lines = [
    '# argo completion for fish. Load it with:  argo completion fish | source',
    '# or save it:  argo completion fish > ~/.config/fish/completions/argo.fish',
    '',
    '# Which command the line runs (__argo_place: "sessions show"), how many of its arguments are typed,',
    '# whether -- is among them (__argo_ended), and the --home and --host given (__argo_where), from the',
    '# words before the cursor.',
    'function __argo_scan',
    `    set -g __argo_place ''`,
    '    set -g __argo_nargs 0',
    '    set -g __argo_ended 0',
    '    set -g __argo_where',
    '    set -l tokens (commandline -opc)',
    '    set -l i 1',
    '    while test $i -lt (count $tokens)',
    '        set i (math $i + 1)',
    '        set -l word $tokens[$i]',
    '        # After --, every word is an argument, whatever it starts with; before a command, the question.',
    '        if test $__argo_ended -eq 0',
    '            switch $word',
    `                case '--'`,
    '                    if test -z "$__argo_place"',
    `                        set -g __argo_place '--'`,
    '                        return',
    '                    end',
    '                    set -g __argo_ended 1',
    '                    continue',
    `                case ${WHERE_FLAGS.map((where) => shellQuoted(`${where}=*`)).join(' ')}`,
    '                    set -a __argo_where (string split -m 1 = -- $word)',
    '                    continue',
    `                case '-*'`,
    '                    set -l taking 0',
    '                    switch $__argo_place',
    ...takingFlagsByPlace(spec).flatMap(([paths, flags]) => [
      `                        case ${paths.map(shellQuoted).join(' ')}`,
      `                            contains -- $word ${flags.map(shellQuoted).join(' ')}; and set taking 1`,
    ]),
    `                        case '*'`,
    `                            contains -- $word ${valueFlags.map(shellQuoted).join(' ')}; and set taking 1`,
    '                    end',
    '                    test $taking -eq 1; or continue',
    '                    set i (math $i + 1)',
    `                    if test $i -le (count $tokens); and contains -- $word ${WHERE_FLAGS.join(' ')}`,
    '                        set -a __argo_where $word $tokens[$i]',
    '                    end',
    '                    continue',
    '            end',
    '        end',
    '        switch $__argo_place',
    `            case ''`,
    '                set -g __argo_place $word',
    ...nested,
    `            case '*'`,
    '                set -g __argo_nargs (math $__argo_nargs + 1)',
    '        end',
    '    end',
    'end',
    '# True when the line runs the command $argv ("sessions show"; none: bare argo).',
    'function __argo_at',
    '    __argo_scan',
    '    test "$__argo_place" = "$argv"',
    'end',
    '# True when the next word is argument number $argv[1] (from 0) of the command $argv[2..].',
    'function __argo_arg',
    '    __argo_at $argv[2..]; and test $__argo_nargs -eq $argv[1]',
    'end',
    '# Names as text: fish quotes each for the line, nothing in one is run. With "undashed" ($argv[2]),',
    '# a name starting with - is left out before --: the command would take it for a flag.',
    'function __argo_names',
    '    __argo_scan',
    '    set -l names (argo __complete $argv[1] $__argo_where 2>/dev/null)',
    '    if test "$argv[2]" = undashed; and test $__argo_ended -eq 0',
    `        string match -v -- '-*' $names`,
    '    else',
    `        string match -- '*' $names`,
    '    end',
    'end',
    '',
    'complete -c argo -f',
    `complete -c argo -n __argo_at -a help -d 'show help for a command'`,
    ...spec.commands.map((command) => `complete -c argo -n __argo_at -a ${command.name} -d ${shellQuoted(command.description)}`),
    ...fishOptionLines(barePlace(spec), '__argo_at'),
  ];
  for (const place of places) {
    const arg = (index: number): string => shellQuoted(`__argo_arg ${index} ${place.path}`);
    if (place.path === 'help') {
      lines.push(`complete -c argo -n ${arg(0)} -a ${shellQuoted(place.first.join(' '))}`);
      continue;
    }
    for (const sub of place.subcommands) lines.push(`complete -c argo -n ${arg(0)} -a ${sub.name} -d ${shellQuoted(sub.description)}`);
    const words = place.first.filter((word) => !place.subcommands.some((sub) => sub.name === word));
    if (words.length > 0) lines.push(`complete -c argo -n ${arg(0)} -a ${shellQuoted(words.join(' '))}`);
    place.args.forEach((source, index) => {
      if (source !== null) lines.push(`complete -c argo -n ${arg(index)} -a '(__argo_names ${source} undashed)'`);
    });
    lines.push(...fishOptionLines(place, shellQuoted(`__argo_at ${place.path}`)));
  }
  return `${lines.join('\n')}\n`;
}

function allValueFlags(spec: CompletionSpec): string[] {
  return [...new Set([...spec.valueFlags, ...WHERE_FLAGS])];
}

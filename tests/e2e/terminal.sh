#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# envpin where a person meets it: the completions in real bash, zsh and fish, the man page through
# groff and man, and progress and colour under a pseudo-terminal (util-linux `script`).
#   sh tests/e2e/terminal.sh path/to/envpin
. "$(dirname "$0")/lib.sh"
need bash zsh fish groff man script
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

"$ENVPIN" completion bash > "$T/envpin.bash"
"$ENVPIN" completion zsh > "$T/_envpin"
"$ENVPIN" completion fish > "$T/envpin.fish"
"$ENVPIN" manpage > "$T/envpin.1"

# Every command and every option --help shows, read from --help (CLI11's own formatter), must be
# in each completion and in the man page.
commands=$("$ENVPIN" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && /^  [a-z]/ {print $1}')
[ "$(echo "$commands" | wc -w)" -ge 20 ] && pass || fail "--help lists only: $commands"
for c in $commands; do
  flags=$("$ENVPIN" "$c" --help | grep -oE '^ +(-[a-zA-Z], ?)?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+')
  [ -n "$flags" ] || fail "$c --help shows no options"
  for f in $flags; do
    for file in envpin.bash _envpin envpin.fish; do
      case $file in
        envpin.fish) grep -qE -- "seen_subcommand_from $c' .*-l ${f#--}( |$)" "$T/$file" || fail "$file: $c $f missing" ;;
        *) grep -q -- "$f" "$T/$file" || fail "$file: $c $f missing" ;;
      esac
    done
    # The man page spells '-' as '\-'.
    grep -qF -- "$(echo "$f" | sed 's/-/\\-/g')" "$T/envpin.1" || fail "envpin.1: $c $f missing"
  done
  grep -qF "envpin $c" "$T/envpin.1" || fail "envpin.1: command $c missing"
  grep -qE "^    $c\\) " "$T/envpin.bash" || fail "envpin.bash: command $c missing"
  grep -qE "^    '$c:" "$T/_envpin" || fail "_envpin: command $c missing"
  grep -qE "__fish_use_subcommand -a $c " "$T/envpin.fish" || fail "envpin.fish: command $c missing"
done
pass

# bash: the completion function itself, as readline calls it.
complete_bash() {
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _envpin; printf "%s\n" "${COMPREPLY[@]}"' \
    sh "$T/envpin.bash" "$@"
}
[ "$(complete_bash envpin gen)" = generate ] && pass || fail "bash: 'envpin gen' gave: $(complete_bash envpin gen)"
[ "$(complete_bash envpin generate --ma)" = --manifest ] && pass || fail "bash: 'envpin generate --ma' gave: $(complete_bash envpin generate --ma)"
out=$(complete_bash envpin lock --)
echo "$out" | grep -qx -- --timeout && echo "$out" | grep -qx -- --verbose && pass || fail "bash: lock options: $out"
mkdir -p "$T/proj" && : > "$T/proj/envpin.yaml"
out=$(cd "$T/proj" && complete_bash envpin generate --manifest env)
[ "$out" = envpin.yaml ] && pass || fail "bash: a --manifest value is a file: $out"
shellcheck -s bash "$T/envpin.bash" && pass || fail "shellcheck envpin.bash"

# fish: its own completion engine over the script.
out=$(fish -c "source $T/envpin.fish; complete -C 'envpin gen'")
echo "$out" | grep -q '^generate	write Dockerfile' && pass || fail "fish: 'envpin gen' gave: $out"
out=$(fish -c "source $T/envpin.fish; complete -C 'envpin check --all'")
echo "$out" | grep -q '^--allow-no-gpu' && pass || fail "fish: 'envpin check --all' gave: $out"
out=$(fish -c "source $T/envpin.fish; complete -C 'envpin generate --all'")
[ -z "$out" ] && pass || fail "fish: generate has no --allow-no-gpu, but: $out"

# zsh: the script parses, and compinit loads it as the completion for envpin.
zsh -n "$T/_envpin" && pass || fail "zsh -n _envpin"
out=$(ZDOTDIR=$T zsh -f -c "fpath=($T \$fpath); autoload -Uz compinit; compinit -u -d $T/zcompdump; print -r -- \$_comps[envpin]")
[ "$out" = _envpin ] && pass || fail "zsh: compinit did not take _envpin for envpin: '$out'"
# And completes, in an interactive zsh on a pseudo-terminal (zpty): 'envpin gen<TAB>', then
# ' --ma<TAB>' (what zsh draws holds the completed words; only "gen" and "--ma" were typed).
# Each step waits for what zsh draws, never a fixed sleep: on a loaded machine, keys typed before
# compinit has run reach a line editor without the completion (CI of stop 38).
cat > "$T/zpty.zsh" <<EOF
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='> '; fpath=($T \\\$fpath); autoload -Uz compinit; compinit -u -d $T/zcompdump2; print READY''MARK"
out=''
zpty -r z chunk '*READYMARK*> *' && out+=\$chunk
zpty -w -n z \$'envpin gen\\t'
zpty -r z chunk '*generate*' && out+=\$chunk
zpty -w -n z \$'\\C-e --ma\\t'
zpty -r z chunk '*--manifest*' && out+=\$chunk
print -r -- \$out
zpty -d z
EOF
out=$(ZDOTDIR=$T timeout 30 zsh -f "$T/zpty.zsh" 2>&1)
echo "$out" | grep -q 'envpin generate' && echo "$out" | grep -q -- '--manifest' && pass ||
  fail "zsh: 'envpin gen<TAB> --ma<TAB>' did not complete: $(echo "$out" | cat -v | tail -c 300)"

# The man page: groff finds nothing to warn about; man renders every command.
warnings=$(groff -man -Tutf8 -ww -z "$T/envpin.1" 2>&1)
[ -z "$warnings" ] && pass || fail "groff warnings: $warnings"
rendered=$(MANWIDTH=100 man -l "$T/envpin.1" 2>/dev/null | col -b)
for c in $commands; do
  echo "$rendered" | grep -q "^   envpin $c" || fail "man: no section for $c"
done
echo "$rendered" | grep -q 'NO_COLOR' && pass || fail "man: no ENVIRONMENT entry for NO_COLOR"
# Same envpin, same bytes.
"$ENVPIN" manpage | cmp -s - "$T/envpin.1" && pass || fail "manpage is not deterministic"

# --- progress and colour, under a pseudo-terminal (script) and without one -----------------------
ESC=$(printf '\033')
CR=$(printf '\r')
on_tty() { script -qec "$1" /dev/null; }
printf 'envpin: 1\nname: x\nos: debian12\nbase: debian:12\nnot_a_key: 1\n' > "$T/bad.yaml"
out=$(on_tty "env -u NO_COLOR TERM=xterm $ENVPIN validate -f $T/bad.yaml")
echo "$out" | grep -qF "envpin: ${ESC}[1;31merror${ESC}[0m: " && pass || fail "tty: error is not red: $out"
out=$(on_tty "env NO_COLOR=1 TERM=xterm $ENVPIN validate -f $T/bad.yaml")
echo "$out" | grep -qF "envpin: error: " && ! echo "$out" | grep -qF "$ESC" && pass || fail "NO_COLOR: $out"
out=$(env -u NO_COLOR TERM=xterm "$ENVPIN" validate -f "$T/bad.yaml" 2>&1)
echo "$out" | grep -qF "envpin: error: " && ! echo "$out" | grep -qF "$ESC" && pass || fail "pipe: $out"
# The check table: ok green, MISMATCH red, on a terminal only.
out=$(on_tty "env -u NO_COLOR TERM=xterm $ENVPIN check -f $ROOT/examples/cpu-service/envpin.yaml --allow-no-gpu")
echo "$out" | grep -qF "${ESC}[32mok${ESC}[0m       system.os" && pass || fail "tty: ok is not green: $out"
echo "$out" | grep -qF "skip     lock.integrity" && pass || fail "tty: skip changed: $out"
out=$(env -u NO_COLOR TERM=xterm "$ENVPIN" check -f "$ROOT/examples/cpu-service/envpin.yaml" --allow-no-gpu 2>&1)
echo "$out" | grep -q "^ok       system.os" && ! echo "$out" | grep -qF "$ESC" && pass || fail "pipe: check: $out"

# Progress: hashing a tree that takes more than a second (sparse files: no disk, all SHA-256).
mkdir "$T/tree"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do truncate -s 512M "$T/tree/f$i"; done
on_tty "env -u NO_COLOR TERM=xterm $ENVPIN hash $T/tree" > "$T/tty.out"
grep -qF "${CR}${ESC}[Kenvpin: hashing: " "$T/tty.out" && pass || fail "tty: no progress line: $(cat -v "$T/tty.out")"
# The line is erased before the result, which stands alone on its line.
tr '\r' '\n' < "$T/tty.out" | grep -q "^${ESC}\[Kh1m:[0-9a-f]*  $T/tree (12 files, 6442450944 bytes)" && pass ||
  fail "tty: the progress line was not erased before the result: $(cat -v "$T/tty.out")"
on_tty "env -u NO_COLOR TERM=xterm $ENVPIN hash --quiet $T/tree" > "$T/quiet.out"
! grep -q "hashing" "$T/quiet.out" && grep -q "^h1m:" "$T/quiet.out" && pass || fail "tty --quiet: $(cat -v "$T/quiet.out")"
"$ENVPIN" hash "$T/tree" >"$T/pipe.out" 2>"$T/pipe.err"
! grep -qF "$ESC" "$T/pipe.err" && ! grep -qF "$CR" "$T/pipe.err" && pass || fail "log: escapes in: $(cat -v "$T/pipe.err")"
grep -qx "envpin: hashing: [0-9]* of 12 files, [0-9]* MB" "$T/pipe.err" && pass || fail "log: no plain progress line: $(cat "$T/pipe.err")"
[ "$(cut -d' ' -f1 "$T/pipe.out")" = "$(grep -o 'h1m:[0-9a-f]*' "$T/tty.out")" ] && pass || fail "the digest differs with progress on"
rm -rf "$T/tree"

finish

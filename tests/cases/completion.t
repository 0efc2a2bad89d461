#!/bin/bash
# completion.t — `lobes completion bash|zsh|fish`: the bash script sourced
# and asked through its completion function (what compgen offers for
# `lobes s`, `lobes init --pro`, a role, a profile, a question, a cached
# checkpoint), every command and every option of `-h` offered, and the zsh
# and fish scripts checked by `zsh -n` / `fish -n` where those shells are.
. "${LOBES_SRC:-.}/tests/lib.sh"
export LOBES_DIR=$TMP/deploy HF_HUB_CACHE=$SRC/tests/fixtures/hf/hub
BIN=$TMP/bin; mkdir -p "$BIN"; ln -s "$LOBES" "$BIN/lobes"
export PATH="$BIN:$PATH"

run "$LOBES" completion bash
is "$rc" 0 "completion bash exits 0"
printf '%s\n' "$out" > "$TMP/lobes.bash"
# comp WORDS...: what the bash completion offers for the line (the last word is completed)
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _lobes; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
		_ "$TMP/lobes.bash" "$@"
}
is "$(comp lobes s)" "serve status stop switch " "lobes s<TAB>: serve status stop switch"
is "$(comp lobes init --pro)" "--profile " "lobes init --pro<TAB>: --profile"
is "$(comp lobes init --profile '')" "base orin orin-nano-super spark thor " "lobes init --profile <TAB>: the profiles"
is "$(comp lobes explain c)" "cortex " "lobes explain c<TAB>: cortex (a role)"
is "$(comp lobes switch c)" "cortex " "lobes switch c<TAB>: cortex (a role)"
like "$(comp lobes switch cortex Qwen/Qwen3.)" "Qwen/Qwen3.5-4B" "lobes switch cortex <TAB>: the cached checkpoints"
is "$(comp lobes --json explain --profile thor c)" "cortex " "… after global options and an option's value"
is "$(comp lobes probe cortex e)" "embedder " "lobes probe takes roles again and again"
is "$(comp lobes verify '')" "attention-backend-env fp8-kv-accuracy fp8-kv-attribution mtp-acceptance " "lobes verify <TAB>: the question ids"
is "$(comp lobes triage --role r)" "reranker " "lobes triage --role r<TAB>: reranker"
is "$(comp lobes completion '')" "bash fish zsh " "lobes completion <TAB>: the shells"
is "$(comp lobes --j)" "--json " "global options before the command"
like "$(comp lobes doctor --)" "--image-probe" "doctor's options include --image-probe"

# An operator profile is offered (lists are asked for at completion time).
mkdir -p "$LOBES_DIR/profiles"
sed 's/^name: base$/name: lab-box/' "$SRC/data/profiles/base.yaml" > "$LOBES_DIR/profiles/lab-box.yaml"
is "$(comp lobes explain --profile la)" "lab-box " "an operator profile in DIR/profiles is offered"
run "$LOBES" completion --values models
like "$out" "^Qwen/Qwen3.5-4B$" "--values models lists the cached checkpoints …"
like "$out" "^mistralai/Mistral-7B-Instruct-v0.3$" "… by their model id"

# Every command of the table and every option its -h shows is offered.
cmds=$("$LOBES" --help | awk '/^commands:/ { f = 1; next } /^$/ { f = 0 } f { print $1 }' | sort | tr '\n' ' ')
is "$(comp lobes '')" "$cmds" "every command of lobes --help is offered"
for c in $cmds; do
	want=$( { "$LOBES" "$c" -h | grep -oE '^ +--[a-z][a-z0-9-]*|\[--[a-z][a-z0-9-]*' | tr -d ' [' ; } | sort -u | tr '\n' ' ')
	got=$(comp lobes "$c" -- | tr ' ' '\n' | grep -E '^--[a-z]' | sort -u | tr '\n' ' ')
	missing=$(comm -23 <(tr ' ' '\n' <<<"$want" | grep .) <(tr ' ' '\n' <<<"$got" | grep .) | tr '\n' ' ')
	is "$missing" "" "lobes $c: every option of its -h is offered"
done

run "$LOBES" completion tcsh
is "$rc" 2 "an unknown shell is a usage error"
run "$LOBES" completion --values colours
is "$rc" 2 "an unknown --values kind is a usage error"

run "$LOBES" completion zsh
is "$rc" 0 "completion zsh exits 0"
printf '%s\n' "$out" > "$TMP/_lobes"
like "$out" "^#compdef lobes" "the zsh script is a #compdef file"
if command -v zsh >/dev/null; then
	zsh -n "$TMP/_lobes"; is "$?" 0 "zsh -n accepts the zsh script"
else
	ok 0 "# SKIP zsh is not installed"
fi
run "$LOBES" completion fish
is "$rc" 0 "completion fish exits 0"
printf '%s\n' "$out" > "$TMP/lobes.fish"
like "$out" "complete -c lobes -n __lobes_no_cmd -a serve" "the fish script completes the commands"
if command -v fish >/dev/null; then
	fish -n "$TMP/lobes.fish"; is "$?" 0 "fish -n accepts the fish script"
	# fish itself, asked for a completion of the line
	got=$(HOME=$TMP fish -c "source $TMP/lobes.fish; complete -C 'lobes explain c'" 2>&1 | cut -f1 | tr '\n' ' ')
	is "$got" "cortex " "fish completes a role for lobes explain c"
	got=$(HOME=$TMP fish -c "source $TMP/lobes.fish; complete -C 'lobes init --pro'" 2>&1 | cut -f1 | tr '\n' ' ')
	is "$got" "--profile " "fish completes lobes init --pro"
else
	ok 0 "# SKIP fish is not installed"
fi
done_testing

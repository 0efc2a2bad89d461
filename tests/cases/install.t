#!/bin/bash
# install.t — `make install DESTDIR=... [PREFIX=...]` puts the binary where
# the gateway's systemd unit finds it (PREFIX/bin on systemd's search path),
# the man page (it renders with man -l) and the bash, zsh and fish
# completions where those shells look; the installed binary runs and its
# installed bash completion completes; `make uninstall` removes every file
# it installed and nothing else.
. "${LOBES_SRC:-.}/tests/lib.sh"
command -v make >/dev/null || skip_all "make is needed"
BUILD_DIR=${LOBES_BUILD:-$SRC/build}
[ -x "$BUILD_DIR/lobes" ] || skip_all "no built lobes in $BUILD_DIR"
mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$SRC" BUILD="$BUILD_DIR" "$@"; }

R=$TMP/root
mkdir -p "$R/usr/local/share/keep"; echo mine > "$R/usr/local/share/keep/other-file"
run mk DESTDIR="$R" install
is "$rc" 0 "make install DESTDIR=... exits 0"
for f in usr/local/bin/lobes usr/local/share/man/man1/lobes.1 \
	usr/local/share/bash-completion/completions/lobes usr/local/share/zsh/site-functions/_lobes \
	usr/local/share/fish/vendor_completions.d/lobes.fish; do
	ok "$([ -f "$R/$f" ]; echo $?)" "installed /$f"
done
is "$(stat -c %a "$R/usr/local/bin/lobes")" 755 "the binary is mode 0755"
unlike "$out" "not on systemd's search path" "PREFIX=/usr/local: no note, the unit finds /usr/local/bin/lobes"
grep -q '^ExecStart=lobes ' "$SRC/data/template/lobes-gateway@.service"
is "$?" 0 "the unit runs 'lobes' from systemd's search path (/usr/local/bin is on it)"

run "$R/usr/local/bin/lobes" --version
is "$rc" 0 "the installed binary runs"
like "$out" "^lobes " "… and says its version"
if command -v man >/dev/null; then
	page=$(MANWIDTH=80 man -l "$R/usr/local/share/man/man1/lobes.1" 2>/dev/null | col -b 2>/dev/null)
	like "$page" "fit a local vLLM fleet" "man -l renders the installed page"
	like "$page" "lobes completion SHELL" "… with every command, completion included"
else
	ok 0 "# SKIP man is not installed"
fi
# The installed bash completion completes, against the installed binary.
got=$(PATH="$R/usr/local/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(lobes s); COMP_CWORD=1; _lobes; printf "%s " "${COMPREPLY[@]}"' \
	_ "$R/usr/local/share/bash-completion/completions/lobes")
is "$got" "serve status stop switch " "the installed bash completion completes lobes s"
got=$(PATH="$R/usr/local/bin:$PATH" LOBES_DIR=$TMP/d bash -c '. "$1"; COMP_WORDS=(lobes init --profile t); COMP_CWORD=3; _lobes; printf "%s " "${COMPREPLY[@]}"' \
	_ "$R/usr/local/share/bash-completion/completions/lobes")
is "$got" "thor " "… and asks the installed binary for the profiles"

run mk DESTDIR="$R" uninstall
is "$rc" 0 "make uninstall exits 0"
left=$(cd "$R" && find . -type f | sort | tr '\n' ' ')
is "$left" "./usr/local/share/keep/other-file " "uninstall removed every file it installed, and only those"

# PREFIX=/usr: zsh's Debian vendor directory; another PREFIX gets a note for the unit.
run mk DESTDIR="$R" PREFIX=/usr install
ok "$([ -f "$R/usr/share/zsh/vendor-completions/_lobes" ] && [ -x "$R/usr/bin/lobes" ]; echo $?)" "PREFIX=/usr: /usr/bin/lobes and zsh's vendor-completions"
run mk DESTDIR="$R" PREFIX=/usr uninstall
run mk DESTDIR="$R" PREFIX=/opt/lobes install
like "$out" "/opt/lobes/bin is not on systemd's search path: write /opt/lobes/bin/lobes into ExecStart=" "another PREFIX: install says what to write into the unit"
run mk DESTDIR="$R" PREFIX=/opt/lobes uninstall
is "$(cd "$R" && find . -type f | sort | tr '\n' ' ')" "./usr/local/share/keep/other-file " "every prefix uninstalls cleanly"
done_testing

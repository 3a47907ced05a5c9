#!/usr/bin/env bats
# The manual: installed with the program, opened by 'git help kopt', and
# its SYNOPSIS matches the usage every step prints with -h.

load helper

setup() {
	setup_repo
}

# One usage per line, whitespace collapsed, from 'git kopt <step> -h'.
usages() {
	git kopt "$1" -h | awk '
		/^$/ { exit }
		/^usage: / { sub(/^usage: /, ""); cur = $0; next }
		/^   or: / { print cur; sub(/^   or: /, ""); cur = $0; next }
		/^ / { cur = cur " " $0 }
		END { if (cur != "") print cur }' | tr -s ' \t' ' '
}

# The SYNOPSIS of the manual, the same way.
synopsis() {
	MANWIDTH=300 man -l "$TOP/Documentation/git-kopt.1" 2>/dev/null | col -bx | awk '
		/^SYNOPSIS/ { on = 1; next }
		on && /^[A-Z]/ { exit }
		on && /^       git kopt/ { if (cur != "") print cur; cur = $0; next }
		on && /^        / { cur = cur " " $0 }
		END { if (cur != "") print cur }' | sed 's/^ *//' | tr -s ' \t' ' '
}

@test "the SYNOPSIS names every step with the usage its -h prints" {
	command -v man >/dev/null || skip "no man"
	syn=$(synopsis)
	[ -n "$syn" ]
	steps=$(git kopt -h | awk '/^   [a-z]/ { print $1 }')
	[ -n "$steps" ]
	for step in $steps; do
		usages "$step" >"$BATS_TEST_TMPDIR/u"
		[ -s "$BATS_TEST_TMPDIR/u" ] || fail "no usage from 'git kopt $step -h'"
		while read -r u; do
			grep -qxF -- "$u" <<<"$syn" ||
				fail "SYNOPSIS of Documentation/git-kopt.1 lacks: $u"
		done <"$BATS_TEST_TMPDIR/u"
	done
}

@test "the manual has a section per step" {
	for step in $(git kopt -h | awk '/^   [a-z]/ { print $1 }'); do
		grep -q "^\.SS \"git kopt $step" "$TOP/Documentation/git-kopt.1" ||
			fail "no .SS section for '$step'"
	done
}

@test "make install puts the manual where 'git help kopt' finds it" {
	command -v man >/dev/null || skip "no man"
	prefix="$BATS_TEST_TMPDIR/prefix"
	make -C "$TOP" --no-print-directory -s install PREFIX="$prefix" BUILD="${BUILD:-build}" >/dev/null
	[ -x "$prefix/bin/git-kopt" ]
	[ -f "$prefix/share/man/man1/git-kopt.1" ]
	[ -f "$prefix/share/git-kopt/templates/init/.kopt" ]
	[ -x "$prefix/share/git-kopt/hooks/pre-commit" ]
	export PATH="$prefix/bin:$PATH" MANPATH="$prefix/share/man" MANPAGER=cat MANWIDTH=80
	run git help kopt
	assert_success
	assert_line --index 0 --regexp '^GIT-KOPT\(1\) +Git Manual +GIT-KOPT\(1\)$'
	assert_line "       git kopt init [--force] [-q] [--ci github|gitlab]"
	run git kopt --help
	assert_success
	assert_line --index 0 --regexp '^GIT-KOPT\(1\)'
}

@test "an installed git-kopt finds its templates without the source tree" {
	prefix="$BATS_TEST_TMPDIR/prefix"
	make -C "$TOP" --no-print-directory -s install PREFIX="$prefix" BUILD="${BUILD:-build}" >/dev/null
	cp -R "$prefix/share/git-kopt/templates" "$BATS_TEST_TMPDIR/elsewhere"
	echo "# installed copy" >>"$prefix/share/git-kopt/templates/init/docs/kernels/README.md"
	unset KOPT_TEMPLATE_DIR
	run --separate-stderr "$prefix/bin/git-kopt" init -q
	assert_success
	tail -n 1 docs/kernels/README.md | grep -qxF "# installed copy"
}

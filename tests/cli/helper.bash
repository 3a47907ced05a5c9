# Shared set-up for the CLI tests: each test gets its own HOME and a
# fresh repository in $BATS_TEST_TMPDIR, a fixed locale, time zone and
# dates, and no system git config.

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

TOP=${KOPT_TEST_TOP:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
FIXTURES="$TOP/tests/fixtures"

setup_repo() {
	export HOME="$BATS_TEST_TMPDIR/home"
	mkdir -p "$HOME"
	# the GPU lock and temporary files of one test are its own
	export XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/run"
	export TMPDIR="$BATS_TEST_TMPDIR/tmp"
	mkdir -p "$XDG_RUNTIME_DIR" "$TMPDIR"
	export LC_ALL=C TZ=UTC GIT_CONFIG_NOSYSTEM=1
	export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL="author@example.com"
	export GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL="committer@example.com"
	export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
	export GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
	git config --global init.defaultBranch main
	git config --global user.name "A U Thor"
	git config --global user.email author@example.com
	REPO="$BATS_TEST_TMPDIR/repo"
	git init -q "$REPO"
	cd "$REPO"
}

# Assert stdout with `run --separate-stderr cmd`, which also sets $stderr.
bats_require_minimum_version 1.5.0

# Log every start of git-kopt ("git-kopt <args>", one a line) to
# $BATS_TEST_TMPDIR/trace: the hooks start it straight from PATH.
trace_kopt() {
	local bin="$BATS_TEST_TMPDIR/tracebin" real
	real=$(command -v git-kopt)
	mkdir -p "$bin"
	cat >"$bin/git-kopt" <<SH
#!/bin/sh
echo "git-kopt \$*" >>"$BATS_TEST_TMPDIR/trace"
exec "$real" "\$@"
SH
	chmod +x "$bin/git-kopt"
	PATH="$bin:$PATH"
	export PATH
}

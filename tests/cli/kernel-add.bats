#!/usr/bin/env bats
# git kopt kernel add: the .kopt section and the devlog.

load helper

setup() {
	setup_repo
	git kopt init -q
	cp .kopt "$BATS_TEST_TMPDIR/kopt.orig"
}

add_mla() {
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--build 'make -C kernels/mla_decode VERSION={version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--flops '2*b*s*h*t*(dqk+dv)' \
		--bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 \
		--target 'spec-decode duration_us <= 1100' "$@"
}

# .kopt is as it was, and no devlog appeared.
assert_nothing_written() {
	cmp "$BATS_TEST_TMPDIR/kopt.orig" .kopt
	[ -z "$(ls docs/kernels | grep -v README.md)" ]
	[ -z "$(find . -name '*.lock')" ]
}

@test "kernel add appends the section and creates the devlog" {
	mkdir -p kernels/mla_decode/v0
	run --separate-stderr add_mla
	assert_success
	assert_output "added kernel 'mla-decode' to .kopt
created: docs/kernels/mla-decode.md"
	[ -z "$stderr" ]
	cat "$BATS_TEST_TMPDIR/kopt.orig" "$FIXTURES/kernel/mla-decode.kopt" >expected
	cmp expected .kopt
	cmp "$FIXTURES/kernel/mla-decode.md" docs/kernels/mla-decode.md
	run git config -f .kopt --get-all kernel.mla-decode.param
	assert_output "h=128
dqk=576
dv=512"
}

@test "the devlog has the title, Overview, Target and Development log" {
	add_mla >/dev/null
	run grep -E '^#{1,2} ' docs/kernels/mla-decode.md
	assert_output "# mla-decode
## Overview
## Target
## Development log"
}

@test "a kernel without a target says how to set one" {
	git kopt kernel add k --language cute-dsl --source 'k/{version}' --run 'k/{version}/run'
	grep -qF 'Not set yet: add `target = <trial> <condition>`' docs/kernels/k.md
	run git config -f .kopt --get-regexp '^kernel\.k\.'
	assert_output "kernel.k.language cute-dsl
kernel.k.source k/{version}
kernel.k.run k/{version}/run"
}

@test "values with quotes, semicolons and hashes read back unchanged" {
	run='bench --name "a b" ; echo done # not a comment'
	git kopt kernel add k --language cuda-c --source 'k/{version}' --run "$run" --build 'make\ x'
	[ "$(git config -f .kopt kernel.k.run)" = "$run" ]
	[ "$(git config -f .kopt kernel.k.build)" = 'make\ x' ]
	run --separate-stderr git kopt kernel list --json
	assert_success
	[[ "$output" == *'"run":	"bench --name \"a b\" ; echo done # not a comment"'* ]]
}

@test "a .kopt without a final newline is extended cleanly" {
	printf '[kopt]\n\tnoise = 3%%\n[language "c"]\n\tcontrol = thread' >.kopt
	git kopt kernel add k --language c --source 's/{version}' --run r
	run git config -f .kopt --list
	assert_output "kopt.noise=3%
language.c.control=thread
kernel.k.language=c
kernel.k.source=s/{version}
kernel.k.run=r"
}

@test "kernel add from a subdirectory writes at the top" {
	mkdir sub && cd sub
	add_mla >/dev/null
	[ -f "$REPO/docs/kernels/mla-decode.md" ]
	[ -z "$(ls -A "$REPO/sub")" ]
}

@test "an existing devlog is kept" {
	echo "# My notes" >docs/kernels/mla-decode.md
	run --separate-stderr add_mla
	assert_success
	assert_output "added kernel 'mla-decode' to .kopt
kept: docs/kernels/mla-decode.md"
	[ "$(cat docs/kernels/mla-decode.md)" = "# My notes" ]
}

@test "a kernel that exists is refused" {
	add_mla >/dev/null
	cp .kopt "$BATS_TEST_TMPDIR/kopt.orig"
	cp docs/kernels/mla-decode.md "$BATS_TEST_TMPDIR/devlog"
	run --separate-stderr add_mla
	assert_failure 128
	assert_output ""
	line=$(grep -n '^\[kernel "mla-decode"\]' .kopt | cut -d: -f1)
	[ "$stderr" = "fatal: kernel 'mla-decode' already exists (.kopt:$line)" ]
	cmp "$BATS_TEST_TMPDIR/kopt.orig" .kopt
	cmp "$BATS_TEST_TMPDIR/devlog" docs/kernels/mla-decode.md
}

@test "bad kernel names are refused" {
	for name in MLA a/b .. a..b ../x -x 'a b' ''; do
		run --separate-stderr git kopt kernel add --language cuda-c --source s --run r -- "$name"
		assert_failure 128
		assert_output ""
		[ "$stderr" = "fatal: bad kernel name '$name' (use lower-case letters, digits, '.', '_' and '-'; no '/' or '..')" ]
	done
	assert_nothing_written
}

@test "an unknown language is refused, naming the known ones" {
	run --separate-stderr git kopt kernel add k --language rust --source s --run r
	assert_failure 128
	[ "$stderr" = "fatal: unknown language 'rust' (known: cutile-dsl, cute-dsl, cuda-c)" ]
	assert_nothing_written
}

@test "bad expressions and params are refused before anything is written" {
	run --separate-stderr git kopt kernel add k --language cuda-c --source s --run r --flops '2*b*heads'
	assert_failure 128
	[ "$stderr" = "fatal: cannot add kernel 'k': unknown name 'heads' in 'flops'" ]
	run --separate-stderr git kopt kernel add k --language cuda-c --source s --run r --bytes '2*(b'
	assert_failure 128
	[ "$stderr" = "fatal: cannot add kernel 'k': bad expression in 'bytes': column 5: expected ')' at end of expression" ]
	run --separate-stderr git kopt kernel add k --language cuda-c --source s --run r --param h
	assert_failure 128
	[ "$stderr" = "fatal: cannot add kernel 'k': bad param 'h' (expected name=number)" ]
	run --separate-stderr git kopt kernel add k --language cuda-c --source s --run r --target 'stress duration_us < 5'
	assert_failure 128
	[ "$stderr" = "fatal: cannot add kernel 'k': target names unknown trial 'stress'" ]
	assert_nothing_written
}

@test "missing options are usage errors" {
	run --separate-stderr git kopt kernel add k --language cuda-c --source s
	assert_failure 129
	assert_output ""
	[[ "$stderr" == "error: --run is required"$'\n'"usage: git kopt kernel add <name>"* ]]
	run --separate-stderr git kopt kernel add --language cuda-c --source s --run r
	assert_failure 129
	[[ "$stderr" == "error: which kernel? give its name"* ]]
	run --separate-stderr git kopt kernel add a b --language cuda-c --source s --run r
	assert_failure 129
	[[ "$stderr" == "error: too many arguments"* ]]
	assert_nothing_written
}

@test "kernel add in a repository without .kopt says to run init" {
	rm .kopt
	run --separate-stderr add_mla
	assert_failure 128
	[ "$stderr" = "fatal: no .kopt in '$REPO/'; run 'git kopt init' first" ]
	[ ! -e .kopt ]
}

@test "kernel add writes nothing when the devlog cannot be written" {
	rm -r docs/kernels
	echo "a file" >docs/kernels
	run --separate-stderr add_mla
	assert_failure 128
	[ "$stderr" = "fatal: cannot create 'docs/kernels/mla-decode.md': 'docs/kernels' is not a directory; nothing was written" ]
	cmp "$BATS_TEST_TMPDIR/kopt.orig" .kopt
}

@test "kernel add -h prints its usage" {
	run --separate-stderr git kopt kernel add -h
	assert_success
	assert_line --index 0 "usage: git kopt kernel add <name> --language <l> --source <pattern> --run <cmd>"
	[ -z "$stderr" ]
}

@test "a source folder without versions gets the advice every step gives" {
	run --separate-stderr add_mla
	assert_success
	[ "$stderr" = "warning: there is no folder 'kernels/mla_decode' yet: commit the base version v0 under 'kernels/mla_decode/v0'" ] ||
		fail "$stderr"
	mkdir -p kernels/other/notes
	run --separate-stderr git kopt kernel add other --language cuda-c --source 'kernels/other/{version}/src' --run 'x {version}'
	assert_success
	[ "$stderr" = "warning: 'kernels/other' holds no version of 'other' yet: commit the base version v0 under 'kernels/other/v0/src'" ] ||
		fail "$stderr"
	git add -A && git commit -qm kernels
	run git kopt analyze mla-decode
	assert_line "No versions yet: commit the base version v0 under 'kernels/mla_decode/v0', then profile it with 'git kopt profile mla-decode v0'."
	run --separate-stderr git kopt design mla-decode
	assert_failure 128
	[[ $stderr == *"commit the base version v0 under 'kernels/mla_decode/v0' first" ]] || fail "$stderr"
	run git kopt status
	assert_output --partial "next: commit the base version v0 under 'kernels/mla_decode/v0'"
}

@test "a source without {version} and unknown placeholders are refused, nothing written" {
	run --separate-stderr git kopt kernel add k --language cuda-c --source 'kernels/k' --run 'k/run'
	assert_failure 128
	[ "$stderr" = "fatal: cannot add kernel 'k': kernel 'k': 'source' must name {version} once (e.g. kernels/k/{version})" ] ||
		fail "$stderr"
	assert_nothing_written
	run --separate-stderr git kopt kernel add k --language cuda-c --source 'k/{version}' --run 'k/{vresion}/run --b {b}'
	assert_failure 128
	[ "$stderr" = "fatal: cannot add kernel 'k': unknown placeholder '{vresion}' in 'run'" ] ||
		fail "$stderr"
	run --separate-stderr git kopt kernel add k --language cuda-c --source 'k/{version}' --build 'make {target}' --run 'k/{version}/run'
	assert_failure 128
	[ "$stderr" = "fatal: cannot add kernel 'k': unknown placeholder '{target}' in 'build'" ] ||
		fail "$stderr"
	assert_nothing_written
}

@test "an add killed between its two files is finished by running it again" {
	mkdir -p kernels/mla_decode/v0
	add_mla >/dev/null
	cp .kopt kopt.full
	rm docs/kernels/mla-decode.md
	run --separate-stderr add_mla
	assert_success
	assert_output "kernel 'mla-decode' was in .kopt already, without its devlog
created: docs/kernels/mla-decode.md"
	cmp kopt.full .kopt
	cmp "$FIXTURES/kernel/mla-decode.md" docs/kernels/mla-decode.md
	# with its devlog there, or with other settings, it is a second add
	run --separate-stderr add_mla
	assert_failure 128
	[[ $stderr == "fatal: kernel 'mla-decode' already exists (.kopt:"* ]] || fail "$stderr"
	rm docs/kernels/mla-decode.md
	run --separate-stderr add_mla --param extra=1
	assert_failure 128
	[[ $stderr == "fatal: kernel 'mla-decode' already exists (.kopt:"* ]] || fail "$stderr"
}

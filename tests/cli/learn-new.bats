#!/usr/bin/env bats
# git kopt learn new: a detail file from the template and its catalog
# row, both or neither, once.

load helper

SHARED=.claude/skills/optimization-catalog/SKILL.md

setup() {
	setup_repo
	cp -R "$FIXTURES/knowledge/kb/." .
	git add -A
	git commit -qm "Knowledge base and results"
}

@test "learn new writes the file from the template and appends the row" {
	run --separate-stderr git kopt learn new optimization "Flash split"
	assert_success
	assert_output "created docs/knowledge/optimizations/flash-split.md
added O6 to $SHARED
next: fill in the placeholders of docs/knowledge/optimizations/flash-split.md and its catalog row; 'git kopt learn lint' lists what is left"
	[ -z "$stderr" ]
	sed '1s/.*/# [Optimization Name]/' docs/knowledge/optimizations/flash-split.md >got
	cmp "$TOP/templates/optimization.md" got
	run git diff --no-color -U0 -- "$SHARED"
	assert_line '+| O6 | Flash split | [trigger conditions] | [est. impact] | [pitfalls] | `docs/knowledge/optimizations/flash-split.md` |'
	[ "$(git diff --numstat -- "$SHARED")" = "1	0	$SHARED" ]
}

@test "a second run does nothing and says so" {
	git kopt learn new anti-pattern bank-conflicts >/dev/null
	cp "$SHARED" catalog.before
	cp docs/knowledge/anti-patterns/bank-conflicts.md file.before
	run --separate-stderr git kopt learn new anti-pattern bank-conflicts
	assert_success
	assert_output "anti-pattern 'bank-conflicts' exists already: docs/knowledge/anti-patterns/bank-conflicts.md (A3 in $SHARED); nothing to do"
	cmp catalog.before "$SHARED"
	cmp file.before docs/knowledge/anti-patterns/bank-conflicts.md
}

@test "IDs follow the largest of their index" {
	git kopt learn new optimization one >/dev/null
	git kopt learn new anti-pattern two >/dev/null
	git kopt learn new optimization three >/dev/null
	run grep -oE '^\| [OA][0-9]+ ' "$SHARED"
	assert_output "| O1 
| O2 
| O3 
| O4 
| O5 
| O6 
| O7 
| A1 
| A2 
| A3 "
}

@test "--language writes under the language and into its catalog" {
	run --separate-stderr git kopt learn new optimization multicast --language cute-dsl
	assert_success
	assert_line --index 0 "created docs/knowledge/languages/cute-dsl/optimizations/multicast.md"
	assert_line --index 1 "added O2 to .claude/skills/optimization-catalog-cute-dsl/SKILL.md"
	git diff --quiet -- "$SHARED"
}

@test "--from fills the evidence from the version and its parent" {
	run --separate-stderr git kopt learn new optimization split-kv-decode --from mla-decode/v1
	assert_success
	cmp "$FIXTURES/knowledge/filled.md" <(sed '1s/.*/# Split-KV decode/' docs/knowledge/optimizations/split-kv-decode.md)
	run git diff --no-color -U0 -- "$SHARED"
	assert_line '+| O6 | Split kv decode | [trigger conditions] | ~15% (measured: mla-decode v1) | [pitfalls] | `docs/knowledge/optimizations/split-kv-decode.md` |'
}

@test "the new file fails lint until its placeholders are filled" {
	git kopt learn new optimization fresh >/dev/null
	run --separate-stderr git kopt learn lint
	assert_failure 1
	assert_line --index 0 "$SHARED:12: O6: template placeholder '[trigger conditions]' left in the 'Trigger Conditions' column"
	assert_line "docs/knowledge/optimizations/fresh.md:16: template placeholder '[Context 1: e.g., specific kernel design or reference la...' left in"
	assert_line "docs/knowledge/optimizations/fresh.md:20: template placeholder '[block / warp / thread]' left in"
	assert_line "docs/knowledge/optimizations/fresh.md:36: template placeholder '[local experiment / external report]' left in"
	refute_line --partial "fresh.md:1:"
	[ "$stderr" = "19 problems in the knowledge base" ]
}

@test "bad input: kind, name, language, --from" {
	run --separate-stderr git kopt learn new optimisation x
	assert_failure 129
	[[ "$stderr" == "error: unknown kind 'optimisation' (expected optimization or anti-pattern)"* ]]

	run --separate-stderr git kopt learn new optimization
	assert_failure 129

	run --separate-stderr git kopt learn new optimization '!!!'
	assert_failure 128
	[ "$stderr" = "fatal: '!!!' is not a usable name; use letters and digits" ]

	run --separate-stderr git kopt learn new optimization x --language fortran
	assert_failure 128
	[ "$stderr" = "fatal: unknown language 'fortran' (known: cutile-dsl, cute-dsl, cuda-c)" ]

	run --separate-stderr git kopt learn new optimization x --from mla-decode
	assert_failure 129
	[[ "$stderr" == "error: --from takes <kernel>/<version>, not 'mla-decode'"* ]]

	run --separate-stderr git kopt learn new optimization x --from nope/v1
	assert_failure 128
	[[ "$stderr" == "fatal: unknown kernel 'nope'"* ]]

	run --separate-stderr git kopt learn new optimization x --from mla-decode/v7
	assert_failure 128
	[ "$stderr" = "error: no numbers for mla-decode v7: neither docs/kernels/mla-decode/results/v7.json nor a performance block in its devlog entry; run 'git kopt profile mla-decode v7' first" ]

	run --separate-stderr git kopt learn new optimization x --from mla-decode/v0
	assert_failure 128
	[ "$stderr" = "fatal: mla-decode v0 has no parent to compare with; --from needs a version designed from another" ]

	# nothing was written by any of them
	[ -z "$(git status --porcelain)" ]
}

@test "a held catalog lock writes neither file" {
	touch "$SHARED.lock"
	run --separate-stderr git kopt learn new optimization blocked
	assert_failure 128
	[[ "$stderr" == "error: cannot lock '"*"$SHARED': '"*"$SHARED.lock' exists; another git kopt may be running, otherwise remove it" ]]
	[ ! -e docs/knowledge/optimizations/blocked.md ]
	[ ! -e docs/knowledge/optimizations/blocked.md.lock ]
	rm "$SHARED.lock"
	[ -z "$(git status --porcelain)" ]
}

@test "without a shared catalog it says to run init" {
	git rm -q "$SHARED"
	run --separate-stderr git kopt learn new optimization x
	assert_failure 128
	[ "$stderr" = "fatal: the shared catalog '$SHARED' does not exist; run 'git kopt init'" ]
}

@test "a catalog that ends inside an open code fence is refused, nothing written" {
	# no anti-pattern table, and the last section leaves a fence open:
	# a table appended after it would be code, not rows
	sed -i '/^## Anti-Patterns/,$d' "$SHARED"
	printf '## Notes\n\n~~~~\nscratch\n' >>"$SHARED"
	git add -A && git commit -qm "open fence"
	run --separate-stderr git kopt learn new optimization flash-split
	assert_success
	cp "$SHARED" before
	run --separate-stderr git kopt learn new anti-pattern bank-conflicts
	assert_failure 128
	[[ $stderr == *"$SHARED: the new row A1 would not read back"* ]] ||
		fail "stderr: $stderr"
	cmp before "$SHARED"
	[ ! -e docs/knowledge/anti-patterns/bank-conflicts.md ] ||
		fail "detail file written"
}

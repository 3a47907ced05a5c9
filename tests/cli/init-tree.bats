#!/usr/bin/env bats
# git kopt init: the tree it lays, idempotence, files changed by hand.

load helper

setup() {
	setup_repo
}

# Every file of templates/init/, relative, sorted as the tool sorts.
template_files() {
	(cd "$TOP/templates/init" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
}

@test "init lays every template and installs the hooks" {
	run --separate-stderr git kopt init
	assert_success
	[ -z "$stderr" ]
	expected=$(template_files | sed 's/^/created: /'
		printf 'installed: .git/hooks/%s\n' commit-msg pre-commit pre-push
		echo "Initialised git kopt in $REPO/")
	assert_output "$expected"
	for f in $(template_files); do
		cmp "$TOP/templates/init/$f" "$f"
	done
	for h in commit-msg pre-commit pre-push; do
		[ -x ".git/hooks/$h" ]
		cmp "$TOP/hooks/$h" ".git/hooks/$h"
	done
}

@test "init lays the tree of the design" {
	git kopt init -q
	for f in .kopt docs/kernels/README.md \
		docs/knowledge/optimizations/README.md \
		docs/knowledge/anti-patterns/README.md \
		.claude/agents/profiler.md .claude/agents/kernel-designer.md \
		.claude/skills/orchestration-workflow/SKILL.md \
		.claude/skills/profile-kernel/SKILL.md \
		.claude/skills/design-kernel/SKILL.md \
		.claude/skills/optimization-catalog/SKILL.md; do
		[ -f "$f" ] || fail "missing $f"
	done
	for l in cutile-dsl cute-dsl cuda-c; do
		[ -f ".claude/skills/optimization-catalog-$l/SKILL.md" ] || fail "no catalog for $l"
		[ -f ".claude/skills/design-$l-kernel/SKILL.md" ] || fail "no design skill for $l"
		[ -f "docs/knowledge/languages/$l/optimizations/README.md" ] || fail "$l"
		[ -f "docs/knowledge/languages/$l/anti-patterns/README.md" ] || fail "$l"
	done
}

@test "the .kopt it writes holds the default trials, noise, catalog and languages" {
	git kopt init -q
	run git config -f .kopt --list
	assert_success
	assert_output "kopt.noise=3%
kopt.catalog=.claude/skills/optimization-catalog/SKILL.md
trial.decode.b=32
trial.decode.s=1
trial.decode.t=4096
trial.spec-decode.b=32
trial.spec-decode.s=16
trial.spec-decode.t=4096
language.cutile-dsl.control=block
language.cute-dsl.control=warp
language.cuda-c.control=thread"
	run --separate-stderr git kopt kernel list
	assert_success
	assert_output ""
}

@test "the catalogs hold the two index tables" {
	git kopt init -q
	for c in .claude/skills/optimization-catalog*/SKILL.md; do
		grep -qxF '| ID | Optimization | Trigger Conditions | Est. Impact | Pitfalls | Detail File |' "$c" ||
			fail "no optimization index in $c"
		grep -qxF '| ID | Anti-Pattern | Failure Mode | Source | Detail File |' "$c" ||
			fail "no anti-pattern index in $c"
	done
}

@test "a second run changes nothing and says so" {
	git kopt init -q
	before=$(find . -type f -exec ls -l --time-style=+%s.%N {} + | sort)
	run --separate-stderr git kopt init
	assert_success
	assert_output "already initialised: nothing to do"
	[ -z "$stderr" ]
	after=$(find . -type f -exec ls -l --time-style=+%s.%N {} + | sort)
	[ "$before" = "$after" ]
}

@test "-q prints nothing" {
	run --separate-stderr git kopt init -q
	assert_success
	assert_output ""
	[ -z "$stderr" ]
}

@test "a file changed by hand is kept, said once, and --force restores it" {
	git kopt init -q
	echo "my own note" >>.claude/agents/profiler.md
	cp .claude/agents/profiler.md "$BATS_TEST_TMPDIR/edited"
	run --separate-stderr git kopt init
	assert_success
	assert_output "kept: .claude/agents/profiler.md
already initialised: nothing to do"
	[ "$stderr" = "hint: files changed or deleted by hand were left as they are; 'git kopt init --force' restores them" ]
	cmp "$BATS_TEST_TMPDIR/edited" .claude/agents/profiler.md

	# said once: the same edit is not reported again, a new one is
	run --separate-stderr git kopt init
	assert_success
	assert_output "already initialised: nothing to do"
	[ -z "$stderr" ]
	echo "another note" >>.claude/agents/profiler.md
	run --separate-stderr git kopt init
	assert_output "kept: .claude/agents/profiler.md
already initialised: nothing to do"

	run --separate-stderr git kopt init --force
	assert_success
	assert_output "restored: .claude/agents/profiler.md
Initialised git kopt in $REPO/"
	cmp "$TOP/templates/init/.claude/agents/profiler.md" .claude/agents/profiler.md
}

@test "a file deleted by hand stays deleted, said once, and --force restores it" {
	git kopt init -q
	rm docs/kernels/README.md
	echo "Our own words." >>docs/knowledge/README.md
	run --separate-stderr git kopt init
	assert_success
	assert_output "deleted by you, not restored: docs/kernels/README.md
kept: docs/knowledge/README.md
already initialised: nothing to do"
	[[ "$stderr" == "hint: files changed or deleted by hand"* ]]
	[ ! -e docs/kernels/README.md ]
	tail -n 1 docs/knowledge/README.md | grep -qxF "Our own words."

	run --separate-stderr git kopt init
	assert_success
	assert_output "already initialised: nothing to do"
	[ -z "$stderr" ]
	[ ! -e docs/kernels/README.md ]

	run --separate-stderr git kopt init --force
	assert_success
	assert_output "created: docs/kernels/README.md
restored: docs/knowledge/README.md
Initialised git kopt in $REPO/"
	cmp "$TOP/templates/init/docs/kernels/README.md" docs/kernels/README.md
	cmp "$TOP/templates/init/docs/knowledge/README.md" docs/knowledge/README.md
	run --separate-stderr git kopt init
	assert_output "already initialised: nothing to do"
}

@test "the manifest records the blob of every file init laid down" {
	git kopt init -q
	[ "$(head -n 1 .git/kopt/init-manifest)" = "# git kopt init: the files it laid down (blob id, reported, path)" ]
	[ "$(tail -n +2 .git/kopt/init-manifest | wc -l)" -eq "$(template_files | wc -l)" ]
	for f in $(template_files); do
		grep -qxF "$(git hash-object "$f") - $f" .git/kopt/init-manifest ||
			fail "no line for $f"
	done
	# nothing of it is committed or shown as untracked
	[ -z "$(git status --porcelain --untracked-files=all -- .git)" ]
}

@test "a file init laid down and nobody changed follows a new template" {
	git kopt init -q
	cp -r "$TOP/templates" "$BATS_TEST_TMPDIR/templates"
	echo "A new line." >>"$BATS_TEST_TMPDIR/templates/init/docs/kernels/README.md"
	echo "Another." >>"$BATS_TEST_TMPDIR/templates/init/docs/knowledge/README.md"
	echo "Ours." >>docs/knowledge/README.md
	cp docs/knowledge/README.md "$BATS_TEST_TMPDIR/ours"
	KOPT_TEMPLATE_DIR="$BATS_TEST_TMPDIR/templates" run --separate-stderr git kopt init
	assert_success
	assert_output "updated: docs/kernels/README.md
kept: docs/knowledge/README.md
Initialised git kopt in $REPO/"
	cmp "$BATS_TEST_TMPDIR/templates/init/docs/kernels/README.md" docs/kernels/README.md
	cmp "$BATS_TEST_TMPDIR/ours" docs/knowledge/README.md
}

@test "a repository set up before the manifest gets its missing files" {
	git kopt init -q
	rm -r .git/kopt docs/kernels/README.md
	run --separate-stderr git kopt init
	assert_success
	assert_output "created: docs/kernels/README.md
Initialised git kopt in $REPO/"
	[ -f .git/kopt/init-manifest ]
}

@test "a damaged manifest stops init with its line, writing nothing" {
	git kopt init -q
	rm docs/kernels/README.md
	echo "not a line" >>.git/kopt/init-manifest
	cp .git/kopt/init-manifest "$BATS_TEST_TMPDIR/m"
	n=$(wc -l <.git/kopt/init-manifest)
	run --separate-stderr git kopt init --force
	assert_failure 128
	assert_output ""
	[[ "$stderr" == *".git/kopt/init-manifest:$n: not a manifest line"* ]]
	[ ! -e docs/kernels/README.md ]
	cmp "$BATS_TEST_TMPDIR/m" .git/kopt/init-manifest
}

@test ".kopt and the catalogs belong to the project once written, even with --force" {
	git kopt init -q
	git kopt kernel add k --language cuda-c --source 'k/{version}' --run r >/dev/null
	echo '| O1 | Split KV | `waves < 1` | 2x | none | `docs/knowledge/optimizations/split-kv.md` |' \
		>>.claude/skills/optimization-catalog/SKILL.md
	echo "# ours" >>.claude/skills/optimization-catalog-cuda-c/SKILL.md
	cp .kopt .claude/skills/optimization-catalog/SKILL.md "$BATS_TEST_TMPDIR/"
	run --separate-stderr git kopt init
	assert_success
	assert_output "already initialised: nothing to do"
	[ -z "$stderr" ]
	run --separate-stderr git kopt init --force
	assert_success
	assert_output "already initialised: nothing to do"
	cmp "$BATS_TEST_TMPDIR/.kopt" .kopt
	cmp "$BATS_TEST_TMPDIR/SKILL.md" .claude/skills/optimization-catalog/SKILL.md
	rm .kopt
	run --separate-stderr git kopt init
	assert_success
	assert_output "deleted by you, not restored: .kopt
already initialised: nothing to do"
	[ ! -e .kopt ]
	run --separate-stderr git kopt init --force
	assert_success
	assert_output "created: .kopt
Initialised git kopt in $REPO/"
	cmp "$TOP/templates/init/.kopt" .kopt
}

@test "agent and skill files are YAML front matter and Markdown" {
	git kopt init -q
	files=$(ls .claude/agents/*.md .claude/skills/*/SKILL.md)
	[ "$(echo "$files" | wc -l)" -eq 12 ]
	for f in $files; do
		# strict shape: '---' first line, keys, '---', a Markdown body
		awk 'NR == 1 && $0 != "---" { exit 1 }
		     NR > 1 && $0 == "---" { closed = NR; exit }
		     NR > 1 && !/^[a-z-]+: [^ ]/ { exit 1 }
		     END { if (!closed) exit 1 }' "$f" || fail "bad front matter in $f"
		grep -q '^# ' "$f" || grep -q '^## ' "$f" || fail "no Markdown heading in $f"
	done
	if python3 -c 'import yaml' 2>/dev/null; then
		python3 - $files <<'PY'
import sys, yaml
for path in sys.argv[1:]:
    text = open(path).read()
    assert text.startswith("---\n"), path
    fm, body = text[4:].split("\n---\n", 1)
    meta = yaml.safe_load(fm)
    assert isinstance(meta, dict), path
    assert isinstance(meta.get("name"), str) and meta["name"], path
    assert isinstance(meta.get("description"), str) and meta["description"], path
    assert len(meta["description"]) <= 1024, path
    if "/agents/" in path:
        assert meta["name"] == path.split("/")[-1][:-3], path
        assert isinstance(meta.get("tools"), str) and "Bash" in meta["tools"], path
    else:
        assert meta["name"] == path.split("/")[-2], path
    assert "git kopt" in body, path
PY
	fi
}

@test "the agents return the contracts of the workflow" {
	git kopt init -q
	grep -qxF '## Profile: [kernel] [version] | b=X, s=X, t=X' .claude/agents/profiler.md
	grep -qxF '| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |' .claude/agents/profiler.md
	grep -qxF '### vs Baseline (if applicable)' .claude/agents/profiler.md
	grep -qxF '## New Version: [kernel] [version]' .claude/agents/kernel-designer.md
	grep -qxF '### Correctness: [PASS/FAIL]' .claude/agents/kernel-designer.md
	grep -qxF '### Devlog Entry Written: [path]' .claude/agents/kernel-designer.md
}

@test "the workflow skill names a git kopt command for every step" {
	git kopt init -q
	for step in analyze profile select strategize design verify evaluate \
		"learn new" "learn lint" status check review; do
		grep -q "git kopt $step" .claude/skills/orchestration-workflow/SKILL.md ||
			fail "no 'git kopt $step'"
	done
}

@test "init takes no arguments" {
	run --separate-stderr git kopt init foo
	assert_failure 129
	assert_output ""
	[[ "$stderr" == "error: too many arguments"* ]]
	[ ! -e .kopt ]
}

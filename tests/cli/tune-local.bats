#!/usr/bin/env bats
# git kopt tune on this machine: searches, the tuning cache, invalid
# configurations, the budget, and what is written.

load helper
load tune

setup() {
	tune_setup
	tune_kopt "tune-default = BN=32,ST=2"
	tune_devlog
	git add -A
	git commit -qm base
}

@test "exhaustive finds the best, caches every evaluation, writes results and devlog" {
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 0 --regexp '^k v1: exhaustive on cpu \(local executor\), [0-9]+s$'
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=3 at 44.5 us; hand-picked BN=32,ST=2 at 83.5 us (gain 46.7%)"
	assert_line --index 2 "  21 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	assert_line --index 3 "wrote docs/kernels/k/tuning/v1.tsv and docs/kernels/k/results/v1.json, and the tuning block of v1 in docs/kernels/k.md"
	# one line per evaluation, sorted, after the two header lines
	run sed -n 1p docs/kernels/k/tuning/v1.tsv
	assert_output "# git-kopt tuning cache 1"
	assert_equal "$(grep -vc '^#' docs/kernels/k/tuning/v1.tsv)" 21
	grep -v '^#' docs/kernels/k/tuning/v1.tsv >lines
	LC_ALL=C sort -c lines
	tree=$(git rev-parse HEAD:k/v1)
	# the spread of its runs: (max - min) / median
	run grep -F "BN=64,ST=3" lines
	assert_output --regexp "^cpu	host-[^	]*	32	1	4096	$tree	[0-9a-f]{12}	BN=64,ST=3	ok	44.500	2.25	[0-9.]+	2[0-9-]+T[0-9:]+Z$"
	# every configuration built once, in its own directory
	assert_equal "$(wc -l <"$BUILDLOG")" 21
	test -d out/v1-bn64-st3
	# the results file says what won
	run python3 -c 'import json,sys; t=json.load(open("docs/kernels/k/results/v1.json"))["tuning"]["decode"]; print(t["best"], t["best_us"], t["hand_picked_us"], t["evaluated"], t["space"])'
	assert_output "BN=64,ST=3 44.5 83.5 21 21"
	# the devlog gets a block at the end of the version's entry, spliced
	run sed -n '/^### V1/,$p' docs/kernels/k.md
	assert_output "### V1: tiled

Tiles.

- a list item

**Tuning** (cpu, exhaustive, $(date -u +%Y-%m-%d)):

| Trial | Best configuration | Best us | Hand-picked | Hand-picked us | Gain | Evaluated |
|---|---|---|---|---|---|---|
| decode (b=32, s=1, t=4096) | BN=64,ST=3 | 44.5 | BN=32,ST=2 | 83.5 | 46.7% | 21 of 21 (0 invalid) |"
	run git diff --numstat -- docs/kernels/k.md
	assert_output "6	0	docs/kernels/k.md"
}

@test "a second run is served from the cache and changes nothing" {
	git kopt tune k v1 --trial decode --strategy exhaustive 2>/dev/null
	cp docs/kernels/k.md devlog.before
	cp docs/kernels/k/tuning/v1.tsv cache.before
	: >"$RUNLOG"
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 2 "  21 of 21 configurations evaluated (21 from the cache, 0 invalid; 25 before restrictions)"
	assert_equal "$(wc -c <"$RUNLOG")" 0
	cmp docs/kernels/k.md devlog.before
	cmp docs/kernels/k/tuning/v1.tsv cache.before
}

@test "changed sources are never served from the cache" {
	git kopt tune k v1 --trial decode --strategy exhaustive 2>/dev/null
	echo '// edited' >>k/v1/k.cu
	: >"$RUNLOG"
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 2 "  21 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	assert_equal "$(wc -l <"$RUNLOG")" 21
	# both source trees keep their lines
	assert_equal "$(grep -vc '^#' docs/kernels/k/tuning/v1.tsv)" 42
}

@test "invalid configurations are reported each, cached, and never the best" {
	cat >"$FAIL" <<-EOF
	64 3 check
	64 2 crash
	64 4 hang
	128 1 silent
	32 3 build
	EOF
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=1 at 58.5 us; hand-picked BN=32,ST=2 at 83.5 us (gain 29.9%)"
	assert_line --index 2 "  21 of 21 configurations evaluated (0 from the cache, 5 invalid; 25 before restrictions)"
	assert_line "  invalid: BN=32,ST=3: the build failed (exit code 2): k.cu:1: error: too many registers"
	assert_line "  invalid: BN=64,ST=2: crashed: killed by signal 11 (Segmentation fault)"
	assert_line "  invalid: BN=64,ST=3: failed: exit code 1 (its own check failed or it could not run)"
	assert_line "  invalid: BN=64,ST=4: hung: timed out after 3 s (kopt.timeout)"
	assert_line "  invalid: BN=128,ST=1: printed no time (tune-time)"
	run cut -f8,9 docs/kernels/k/tuning/v1.tsv
	assert_line "BN=64,ST=3	failed"
	assert_line "BN=64,ST=2	crashed"
	assert_line "BN=64,ST=4	hung"
	assert_line "BN=32,ST=3	build-failed"
	assert_line "BN=128,ST=1	no-time"
}

@test "coarse-to-fine refines only a promising coarse best" {
	# the hand-picked configuration is already the best: no fine step
	sed -i 's/tune-default = .*/tune-default = BN=64,ST=3/' .kopt
	run --separate-stderr git kopt tune k v1 --trial decode --max-evals 12
	assert_success
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=3 at 44.5 us; hand-picked BN=64,ST=3 at 44.5 us (gain 0.0%)"
	assert_line --index 2 "  4 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	assert_line --index 3 "  no fine tuning: the coarse best does not beat hand-picked (44.5 us) beyond the noise (3%); go on with the next design instead"
	# a poor hand-picked one: the coarse steps (BN, then ST from the best
	# BN) beat it, the climb around the best finds nothing better
	sed -i 's/tune-default = .*/tune-default = BN=16,ST=1/' .kopt
	run --separate-stderr git kopt tune k v1 --trial decode --max-evals 12
	assert_success
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=3 at 44.5 us; hand-picked BN=16,ST=1 at 106.5 us (gain 58.2%)"
	assert_line --index 2 "  9 of 21 configurations evaluated (3 from the cache, 0 invalid; 25 before restrictions)"
	refute_output --partial "no fine tuning"
	# without --max-evals it stops at 15% of the space (but evaluates the
	# hand-picked configuration and one per parameter)
	run --separate-stderr git kopt tune k v1 --trial decode
	assert_success
	assert_line --index 2 "  3 of 21 configurations evaluated (3 from the cache, 0 invalid; 25 before restrictions)"
}

@test "the parent's numbers are the bar for a fine step" {
	mkdir -p docs/kernels/k/results
	python3 - <<-'PY'
	import json
	e = {"trial": "decode", "config": {"b": 32, "s": 1, "t": 4096},
	     "metrics": {"duration_us": 40.0}, "device": {"name": "cpu"}}
	json.dump({"schema": 1, "kernel": "k", "version": "v0", "parent": None,
	           "entries": [e]}, open("docs/kernels/k/results/v0.json", "w"))
	PY
	sed -i 's/tune-default = .*/tune-default = BN=16,ST=1/' .kopt
	run --separate-stderr git kopt tune k v1 --trial decode --max-evals 12
	assert_success
	assert_line --index 2 "  5 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	assert_line --index 3 "  no fine tuning: the coarse best does not beat parent v0 (40.0 us) beyond the noise (3%); go on with the next design instead"
}

@test "a plan that cannot fit the budget is refused unless forced" {
	export SLEEP=0.4
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive --budget 3s
	assert_failure 1
	assert_output ""
	printf '%s\n' "$stderr" | grep -q '^error: the tuning of k v1 at trial .decode. would take about [0-9]* s more (20 configurations at [0-9.]* s each), past the budget of 3 s: prune the space (tune-restrict), choose --strategy coarse-to-fine or random, lower --max-evals, or --force$'
	# what was measured is kept
	assert_equal "$(grep -vc '^#' docs/kernels/k/tuning/v1.tsv)" 1
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive --budget 3s --force
	assert_success
	assert_line "  stopped at the budget"
	test "$(grep -vc '^#' docs/kernels/k/tuning/v1.tsv)" -lt 21
}

@test "random sampling is reproducible by its seed and bounded by --max-evals" {
	run --separate-stderr git kopt tune k v1 --trial decode --strategy random --seed 7
	assert_success
	assert_line --index 2 "  6 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	first=$(cat "$RUNLOG")
	: >"$RUNLOG"
	rm docs/kernels/k/tuning/v1.tsv
	git kopt tune k v1 --trial decode --strategy random --seed 7 >/dev/null 2>&1
	assert_equal "$(cat "$RUNLOG")" "$first"
	rm docs/kernels/k/tuning/v1.tsv
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive --max-evals 5
	assert_success
	assert_line --index 2 "  5 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	assert_line --index 3 "  stopped at --max-evals 5"
}

@test "the GPU lock is held: a second tune on the same GPU is refused" {
	exec 9>"$XDG_RUNTIME_DIR/kopt-gpu-0.lock"
	flock -n 9
	run --separate-stderr git kopt tune k v1 --trial decode
	assert_failure 128
	assert_equal "$stderr" "error: GPU 0 is busy: another git-kopt holds '$XDG_RUNTIME_DIR/kopt-gpu-0.lock'; wait for it to finish, or let runs wait for it (kopt.gpuWait)"
	exec 9>&-
}

@test "a damaged cache is reported with its line and nothing is written" {
	mkdir -p docs/kernels/k/tuning
	printf '# git-kopt tuning cache 1\ncpu\thost\t32\n' >docs/kernels/k/tuning/v1.tsv
	run --separate-stderr git kopt tune k v1 --trial decode
	assert_failure 128
	assert_equal "$stderr" "error: docs/kernels/k/tuning/v1.tsv:2: 3 fields, expected 13"
	test ! -e docs/kernels/k/results/v1.json
	run git status --porcelain
	assert_output "?? docs/kernels/k/"
}

@test "a tuning cache lock left by a killed tune is named, with how to clear it" {
	mkdir -p docs/kernels/k/tuning
	: >docs/kernels/k/tuning/v1.tsv.lock
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_failure 128
	assert_equal "$stderr" "error: cannot lock 'docs/kernels/k/tuning/v1.tsv': 'docs/kernels/k/tuning/v1.tsv.lock' exists; another git kopt may be running, otherwise remove it"
	assert_equal "$output" ""
	# nothing measured, nothing written
	[ ! -s "$RUNLOG" ]
	[ -z "$(git status --porcelain --untracked-files=no)" ]
	rm docs/kernels/k/tuning/v1.tsv.lock
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
}

@test "within the noise the steadier configuration is kept, and said" {
	cat >"$FAIL" <<-EOF
	64 3 time:44.5:42.5:46.1
	64 2 time:45.5:45.3:45.7
	EOF
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=2 at 45.5 us; hand-picked BN=32,ST=2 at 83.5 us (gain 45.5%)"
	assert_line --index 3 "  kept BN=64,ST=2 (spread 0.9%) over the fastest, BN=64,ST=3 at 44.5 us (spread 8.1%): within the noise, and steadier"
	run python3 -c 'import json; t=json.load(open("docs/kernels/k/results/v1.json"))["tuning"]["decode"]; print(t["best"], t["best_us"])'
	assert_output "BN=64,ST=2 45.5"
	# beyond the noise the fastest is kept, however much it spreads
	echo '// edited' >>k/v1/k.cu
	sed -i 's/^64 2 .*/64 2 time:49.5:49.3:49.7/' "$FAIL"
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 1 --partial "best BN=64,ST=3 at 44.5 us"
	refute_output --partial "steadier"
}

@test "--resume goes on with the interrupted plan and evaluates only what it had left" {
	# interrupted at its fourth run, as Ctrl-C would
	STOP_AT=4 git-kopt tune k v1 --trial decode --strategy random --seed 7 \
		--max-evals 10 >tune.out 2>tune.err && status=0 || status=$?
	assert_equal "$status" 130
	grep -q "^interrupted: .*; run it again with --resume to go on with its plan$" tune.err
	assert_equal "$(wc -l <"$RUNLOG")" 4
	run sed -n '1,4p' .git/kopt/tune/k/v1.plan
	assert_output "# git-kopt tuning plan 1
strategy	random
seed	7
max-evals	10"
	assert_equal "$(grep -c '^eval	decode	' .git/kopt/tune/k/v1.plan)" 4
	# the plan, not the cache, says where it stood
	rm docs/kernels/k/tuning/v1.tsv
	: >"$RUNLOG"
	run --separate-stderr git kopt tune k v1 --resume
	assert_success
	assert_line --index 0 --regexp '^k v1: random on cpu \(local executor\), [0-9]+s$'
	assert_line --index 2 "  10 of 21 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	assert_line --index 3 "  resumed: 4 of 10 done"
	assert_equal "$(wc -l <"$RUNLOG")" 6
	test ! -e .git/kopt/tune/k/v1.plan
	# the plan it finished is the one it started: the same sample
	: >"$RUNLOG"
	git checkout -q -- docs/kernels/k/tuning 2>/dev/null || :
	run --separate-stderr git kopt tune k v1 --trial decode --strategy random --seed 7 --max-evals 10
	assert_success
	assert_line --index 2 "  10 of 21 configurations evaluated (6 from the cache, 0 invalid; 25 before restrictions)"
	assert_equal "$(wc -l <"$RUNLOG")" 4
}

@test "--resume without a plan, or with changed sources, is refused" {
	run --separate-stderr git kopt tune k v1 --resume
	assert_failure 128
	assert_output ""
	assert_equal "$stderr" "error: no interrupted tuning of k v1 to resume; run it without --resume"
	STOP_AT=2 git-kopt tune k v1 --trial decode >/dev/null 2>&1 || :
	test -s .git/kopt/tune/k/v1.plan
	cp .git/kopt/tune/k/v1.plan plan.before
	echo '// edited' >>k/v1/k.cu
	run --separate-stderr git kopt tune k v1 --resume
	assert_failure 128
	assert_equal "$stderr" "error: the sources or commands of k v1 changed since its tuning was interrupted; run it again without --resume"
	cmp .git/kopt/tune/k/v1.plan plan.before
}

@test "--resume refuses a strategy, seed, --max-evals or trial that differs from its plan" {
	STOP_AT=3 git-kopt tune k v1 --trial decode --strategy random --seed 7 \
		--max-evals 10 >/dev/null 2>&1 || :
	test -s .git/kopt/tune/k/v1.plan
	cp .git/kopt/tune/k/v1.plan plan.before
	: >"$RUNLOG"
	run --separate-stderr git kopt tune k v1 --resume --seed 8
	assert_failure 128
	assert_output ""
	assert_equal "$stderr" "error: --resume follows the interrupted tuning of k v1, whose --seed is 7, not 8; drop --seed, or tune again without --resume"
	run --separate-stderr git kopt tune k v1 --resume --strategy exhaustive
	assert_failure 128
	assert_equal "$stderr" "error: --resume follows the interrupted tuning of k v1, whose --strategy is random, not exhaustive; drop --strategy, or tune again without --resume"
	run --separate-stderr git kopt tune k v1 --resume --max-evals 5
	assert_failure 128
	assert_equal "$stderr" "error: --resume follows the interrupted tuning of k v1, whose --max-evals is 10, not 5; drop --max-evals, or tune again without --resume"
	run --separate-stderr git kopt tune k v1 --resume --trial spec
	assert_failure 128
	assert_equal "$stderr" "error: --resume follows the interrupted tuning of k v1, whose --trial is decode, not spec; drop --trial, or tune again without --resume"
	# nothing ran, and the plan is as it was
	test ! -s "$RUNLOG"
	cmp .git/kopt/tune/k/v1.plan plan.before
	# the same values given again are the plan's: it goes on
	run --separate-stderr git kopt tune k v1 --resume --seed 7 --strategy random --trial decode --max-evals 10
	assert_success
	assert_line --index 3 "  resumed: 3 of 10 done"
	assert_line --index 4 "  stopped at --max-evals 10"
}

#!/usr/bin/env bats
# Two steps at once on one repository, or on one GPU: the GPU lock (taken
# over when its holder died), the catalog's lock, and readers while a
# profile writes.

load helper

GPU="$FIXTURES/gpu"

# A kernel measured by a stand-in benchmark (as in profile-faults.bats):
# it writes a recorded capture where the injection library would, after
# $BENCH_SLEEP seconds.
stand_in_bench() {
	mkdir -p k/v0
	cat >bench <<-'SH'
	#!/bin/sh
	sleep "${BENCH_SLEEP:-0}"
	cp "$CAPTURE" "$KOPT_INJECT_OUT"
	SH
	chmod +x bench
	export CAPTURE="$GPU/mla-decode-v1-decode.json"
	export KOPT_TEST_NO_DEVICE=1 KOPT_INJECT_LIB=/dev/null
}

stand_in_kernel() {
	stand_in_bench
	cat >.kopt <<-'KOPT'
	[trial "decode"]
		b = 32
		s = 1
		t = 4096
	[language "cuda-c"]
		control = thread
	[kernel "k"]
		language = cuda-c
		source = k/{version}
		run = ./bench {b} {s} {t}
	KOPT
}

@test "a second profile on a busy GPU is refused at once and writes nothing" {
	setup_repo
	stand_in_kernel
	# another repository of the same user, profiling on the same GPU
	git init -q "$BATS_TEST_TMPDIR/other"
	cp -R .kopt bench k "$BATS_TEST_TMPDIR/other/"
	(cd "$BATS_TEST_TMPDIR/other" && BENCH_SLEEP=3 git kopt profile k v0 \
		>"$BATS_TEST_TMPDIR/first.out" 2>&1; echo $? >"$BATS_TEST_TMPDIR/first.rc") &
	# wait until the first holds the lock
	for _ in $(seq 50); do
		[ -e "$XDG_RUNTIME_DIR/kopt-gpu-0.lock" ] && break
		sleep 0.1
	done
	sleep 0.5
	SECONDS=0
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[ "$SECONDS" -lt 3 ]
	[[ $stderr == *"GPU 0 is busy: another git-kopt holds '$XDG_RUNTIME_DIR/kopt-gpu-0.lock'; wait for it to finish"* ]]
	[ ! -e docs/kernels/k/results/v0.json ]
	wait
	[ "$(cat "$BATS_TEST_TMPDIR/first.rc")" = 0 ]
	[ -e "$BATS_TEST_TMPDIR/other/docs/kernels/k/results/v0.json" ]
	# the GPU is free again
	run git kopt profile k v0
	assert_success
}

@test "a GPU lock left by a killed profile is taken over by the next" {
	setup_repo
	stand_in_kernel
	# the profile and its benchmark in a process group of their own, the
	# benchmark long enough that the kill lands while it runs, whatever
	# the machine's load
	BENCH_SLEEP=30 setsid git-kopt profile k v0 >/dev/null 2>&1 &
	pid=$!
	lock="$XDG_RUNTIME_DIR/kopt-gpu-0.lock"
	# until the profile holds the lock
	for _ in $(seq 200); do
		[ -e "$lock" ] && ! flock -n "$lock" true && break
		sleep 0.1
	done
	! flock -n "$lock" true
	# killed as a terminal or a CI timeout kills a job: the whole group
	kill -KILL -- "-$pid"
	wait "$pid" || true
	# the file stays behind; no one holds it: the next profile runs
	[ -e "$lock" ]
	flock -w 10 "$lock" true
	run --separate-stderr git kopt profile k v0
	assert_success
	[ -e docs/kernels/k/results/v0.json ]
	[ ! -e docs/kernels/k/results/v0.json.lock ]
}

@test "a held GPU lock names the lock file, and the profile waits for no one" {
	setup_repo
	stand_in_kernel
	lock="$XDG_RUNTIME_DIR/kopt-gpu-0.lock"
	# a live holder: this shell
	exec 9>"$lock"
	flock 9
	SECONDS=0
	run --separate-stderr git kopt profile k v0
	exec 9>&-
	assert_failure 128
	[ "$SECONDS" -lt 5 ]
	# after the warning that the kernel has no devlog
	assert_equal "${stderr##*$'\n'}" "error: GPU 0 is busy: another git-kopt holds '$lock'; wait for it to finish, or let runs wait for it (kopt.gpuWait)"
	[ ! -e docs/kernels/k/results/v0.json ]
}

@test "with kopt.gpuWait or --gpu-wait a profile waits for the GPU, up to its limit" {
	setup_repo
	stand_in_kernel
	lock="$XDG_RUNTIME_DIR/kopt-gpu-0.lock"
	# a holder that lets go after two seconds
	exec 9>"$lock"
	flock 9
	(sleep 2; flock -u 9) &
	exec 9>&-
	git config kopt.gpuWait 30
	SECONDS=0
	run --separate-stderr git kopt profile k v0
	assert_success
	[ "$SECONDS" -ge 1 ]
	[ -e docs/kernels/k/results/v0.json ]
	wait
	# a holder that stays: refused after the wait the option allows
	exec 9>"$lock"
	flock 9
	SECONDS=0
	run --separate-stderr git kopt verify k v0 --gpu-wait 1
	exec 9>&-
	assert_failure 128
	[ "$SECONDS" -lt 10 ]
	assert_equal "${stderr##*$'\n'}" "error: GPU 0 is busy: another git-kopt held '$lock' for the 1 s this run may wait (kopt.gpuWait)"
	# so is a bad option, before anything runs
	run --separate-stderr git kopt profile k v0 --gpu-wait -5
	assert_failure 129
	assert_equal "${stderr%%$'\n'*}" "error: --gpu-wait must be 0 to 86400 seconds"
	# a bad setting is named
	git config kopt.gpuWait soon
	run --separate-stderr git kopt profile k v0
	assert_failure 128
	[[ $stderr == *"bad value 'soon' for 'kopt.gpuWait' (expected seconds)"* ]]
}

@test "two learn new at once: distinct IDs, no row lost" {
	setup_repo
	git kopt init -q
	git add -A
	git commit -q -m init
	catalog=.claude/skills/optimization-catalog/SKILL.md
	before=$(grep -cE '^\| *O[0-9]+ ' "$catalog" || true)
	for i in 1 2 3 4 5 6; do
		git kopt learn new optimization "first $i" >"$BATS_TEST_TMPDIR/a$i" 2>&1 &
		git kopt learn new optimization "second $i" >"$BATS_TEST_TMPDIR/b$i" 2>&1 &
		wait
	done
	# every entry has its row, each row its own ID
	run bash -c "grep -oE '^\\| *O[0-9]+ ' '$catalog' | sort | uniq -d"
	assert_output ""
	for i in 1 2 3 4 5 6; do
		for n in first second; do
			[ -e "docs/knowledge/optimizations/$n-$i.md" ]
			grep -q "optimizations/$n-$i.md" "$catalog"
		done
	done
	[ "$(grep -cE '^\| *O[0-9]+ ' "$catalog")" -eq $((before + 12)) ]
	[ -z "$(find . -name '*.lock' -not -path './.git/*')" ]
}

@test "readers and the pre-commit hook while profiles write: never a torn file" {
	setup_repo
	git kopt init -q
	stand_in_bench
	git kopt kernel add k --language cuda-c --source 'k/{version}' \
		--run './bench {b} {s} {t}' >/dev/null
	git kopt profile k v0 >/dev/null 2>&1
	git add -A
	git commit -q -m "Profile k v0"
	# profiles rewrite the results and the devlog, again and again
	(for _ in $(seq 8); do git kopt profile k v0 >/dev/null 2>&1 || exit 1; done) &
	writer=$!
	n=0
	while kill -0 "$writer" 2>/dev/null; do
		run --separate-stderr git kopt analyze k
		assert_success
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' \
			docs/kernels/k/results/v0.json
		# the files themselves: a directory would also list the writer's
		# short-lived lock files, which git cannot stat once renamed
		git add docs/kernels/k.md docs/kernels/k/results/v0.json
		run --separate-stderr git commit -q -m "Profile k v0 again"
		# a commit that failed with nothing staged (the writer put
		# back what was added; git words that several ways) is no
		# refusal; one that failed with something staged is
		[ "$status" -eq 0 ] || git diff --cached --quiet ||
			{ echo "commit: $output$stderr"; false; }
		n=$((n + 1))
	done
	wait "$writer"
	[ "$n" -gt 0 ]
	git fsck --no-progress --no-dangling
}

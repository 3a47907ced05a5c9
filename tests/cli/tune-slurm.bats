#!/usr/bin/env bats
# git kopt tune with kopt.executor = slurm, against a real one-node Slurm
# cluster on the loopback address (tests/slurm/start: munged, slurmctld,
# slurmd; two stand-in GPUs as gres), the benchmark a CPU stand-in.

load helper
load tune

setup_file() {
	export CLUSTER="$BATS_FILE_TMPDIR/slurm"
	eval "$("$TOP/tests/slurm/start" "$CLUSTER")"
}

teardown_file() {
	"$TOP/tests/slurm/stop" "$CLUSTER"
}

setup() {
	tune_setup
	tune_kopt "tune-default = BN=32,ST=2" "tune-restrict = BN <= 64 and ST <= 3"
	tune_devlog
	git add -A
	git commit -qm base
	git config kopt.executor slurm
	git config kopt.slurmTasks 4
}

@test "configurations run as a job array on the cluster, one GPU each" {
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 0 --regexp '^k v1: exhaustive on cpu \(slurm executor\), [0-9]+s$'
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=3 at 44.5 us; hand-picked BN=32,ST=2 at 83.5 us (gain 46.7%)"
	assert_line --index 2 "  9 of 9 configurations evaluated (0 from the cache, 0 invalid; 25 before restrictions)"
	# every run happened inside a Slurm job
	assert_equal "$(wc -l <"$RUNLOG")" 9
	run grep -c ' local$' "$RUNLOG"
	assert_output 0
	# a second run is served from the cache when the GPU model is known
	git config kopt.slurmDevice cpu
	: >"$RUNLOG"
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 2 "  9 of 9 configurations evaluated (9 from the cache, 0 invalid; 25 before restrictions)"
	assert_equal "$(wc -c <"$RUNLOG")" 0
	# nothing is left behind in the repository's state directory
	run ls -A .git/kopt/slurm
	assert_output ""
}

@test "failures and cancellations are reported per configuration" {
	cat >"$FAIL" <<-EOF
	64 3 check
	64 2 cancel
	16 3 build
	EOF
	run --separate-stderr git kopt tune k v1 --trial decode --strategy exhaustive
	assert_success
	assert_line --index 1 "decode (b=32, s=1, t=4096): best BN=64,ST=1 at 58.5 us; hand-picked BN=32,ST=2 at 83.5 us (gain 29.9%)"
	assert_line "  invalid: BN=16,ST=3: the build failed (exit code 2): k.cu:1: error: too many registers"
	assert_line "  invalid: BN=64,ST=2: killed on the cluster before it finished (scancel, its time limit, or its node was lost)"
	assert_line "  invalid: BN=64,ST=3: failed: exit code 1 (its own check failed or it could not run)"
	# a cancelled configuration is not a measurement: it is not cached
	run cut -f8,9 docs/kernels/k/tuning/v1.tsv
	assert_line "BN=64,ST=3	failed"
	refute_line --partial "BN=64,ST=2"
}

@test "a job the cluster refuses is one line naming the cause" {
	git config kopt.slurmPartition nosuch
	run --separate-stderr git kopt tune k v1 --trial decode
	assert_failure 128
	assert_output ""
	assert_equal "$(printf '%s\n' "$stderr" | grep '^error')" "error: the cluster refused the job: sbatch: error: invalid partition specified: nosuch"
	test ! -e docs/kernels/k/results/v1.json
}

@test "Ctrl-C cancels the job array and keeps what finished" {
	export SLEEP=30
	git config kopt.timeout 60
	# git-kopt itself: the git wrapper reports a signal its own way
	git-kopt tune k v1 --trial decode --strategy exhaustive >tune.out 2>tune.err &
	pid=$!
	# wait until the array is running
	for i in $(seq 100); do
		[ -n "$(squeue -h -t R -o %i)" ] && [ -s "$RUNLOG" ] && break
		sleep 0.2
	done
	:
	kill -INT "$pid"
	wait "$pid" && status=0 || status=$?

	assert_equal "$status" 130
	grep -q "^interrupted: every evaluation that finished is in docs/kernels/k/tuning/v1.tsv" tune.err
	# scancel left nothing running
	for i in $(seq 50); do
		[ -z "$(squeue -h -o %i)" ] && break
		sleep 0.2
	done
	run squeue -h -o %i
	assert_output ""
	# and no process of a cancelled task lives on
	for i in $(seq 50); do
		pgrep -f "$REPO/.git/kopt/slurm/" >/dev/null || break
		sleep 0.2
	done
	run pgrep -f "$REPO/.git/kopt/slurm/"
	assert_failure
	test ! -e docs/kernels/k/results/v1.json
}

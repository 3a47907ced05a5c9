# Killing a writing step halfway: the step runs under strace, which sends
# it SIGKILL at one of its writing system calls (the n-th write, rename,
# fsync, unlink, mkdir, open...), chosen at random among those of a
# complete run.  After each kill:
#   - every file is as before the step or as after a complete run (no file
#     is torn: never half written, never a mix), lock files aside;
#   - `git fsck` finds the repository sound;
#   - the step run again completes (after removing the lock files it names,
#     when it names them: all of them at once) and leaves what a complete
#     run leaves.
# git-kopt runs under strace without git in between, so that the kills hit
# it and not the commands it runs.  A run in which no kill stopped the
# step fails: strace injects a signal only into the calls it traces.
#
# KOPT_KILL_POINTS: how many points per step (default 3; "all": every one,
# and on a full disk every amount of free space page by page; "changes":
# the points at a call that changes something, one for each state a kill
# can leave: a call that fails, such as a mkdir of a directory that
# exists, or an open for reading, leaves the same state as the next).
# KOPT_KILL_RANGE=FROM-TO: of those, only the FROM-th to the TO-th (from
# 1, in the order of a complete run), to share a long list between runs.
# KOPT_KILL_AT: kill at these points only ("<syscall> <n>", one a line),
# as a test pins a point where a kill once left a bad state.
# KOPT_KILL_SEED: the random seed (printed with each failure); 1 unless
# set, so that `make test` kills at the same points on every machine
# (KOPT_KILL_SEED=$RANDOM for others).

# The system calls that change files, and those that may leave them half.
KILL_SYSCALLS=write,pwrite64,writev,openat,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,fsync,fdatasync,ftruncate,symlink,symlinkat,fchmod,fchmodat

# A summary of the repository's state, one line per file: "<sha1> <path>";
# dates and reflog times normalised (a rerun writes its own), and what a
# tune run took and found in its cache; the index as `git ls-files -s`.
snapshot() {
	python3 - "$1" <<-'PY'
	import hashlib, os, re, subprocess, sys
	top = sys.argv[1]
	date = re.compile(rb"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
	time = re.compile(rb" [0-9]{9,10} [+-][0-9]{4}\t")
	out = []
	for d, dirs, files in os.walk(top):
	    rel = os.path.relpath(d, top)
	    if rel in (".git/objects",):
	        dirs[:] = []
	        continue
	    for f in files:
	        path = "./" + os.path.normpath(os.path.join(rel, f))
	        if path == "./.git/index":
	            continue
	        data = open(os.path.join(d, f), "rb").read()
	        data = time.sub(b" <time>\t", date.sub(b"<date>", data))
	        if "/results/" in path and path.endswith(".json"):
	            # how many evaluations a tune found in its cache: more
	            # when a run goes on from where a killed one stopped
	            data = re.sub(rb'"cached":[ \t]*[0-9]+', b'"cached": <n>', data)
	        if "/tuning/" in path and path.endswith(".tsv"):
	            # how long an evaluation ran (run_s) differs run to run
	            lines = []
	            for line in data.split(b"\n"):
	                f = line.split(b"\t")
	                if not line.startswith(b"#") and len(f) > 11:
	                    f[11] = b"<s>"
	                lines.append(b"\t".join(f))
	            data = b"\n".join(lines)
	        out.append((path, hashlib.sha1(data).hexdigest()))
	idx = subprocess.run(["git", "ls-files", "-s"], cwd=top,
	                     capture_output=True).stdout
	for path, h in sorted(out):
	    print(h, path)
	print(hashlib.sha1(idx).hexdigest(), "<index>")
	PY
}

# torn <dir> <why>: every file of <dir> is as in before.sum or after.sum
# (of $tmp/full); git's logs, which grow by whole lines, may hold the
# first lines of after's, a tuning cache, saved as it grows, whole lines
# of after's, and a killed tune leaves the whole plan it was following.
# Lock files and a step's journal (lib/journal: what a rerun undoes or
# finishes) aside.
torn() {
	local dir=$1 why=$2 tmp=$BATS_TEST_TMPDIR f
	snapshot "$dir" >"$tmp/killed.sum"
	awk '
		FILENAME == ARGV[1] { b[$2] = $1; next }
		FILENAME == ARGV[2] { a[$2] = $1; next }
		$2 ~ /\.lock$/ || $2 ~ /^\.\/\.git\/kopt\/[a-z-]*\.journal$/ { next }
		!($2 in b && b[$2] == $1) && !($2 in a && a[$2] == $1) {
			print $2
		}' "$tmp/before.sum" "$tmp/after.sum" "$tmp/killed.sum" \
		>"$tmp/changed"
	while IFS= read -r f; do
		case $f in
		*/tuning/*.tsv)
			# the tuning cache is saved as it grows: whole lines of
			# the complete run's, its two header lines first
			if [ -f "$tmp/full/$f" ] && python3 - "$dir/$f" "$tmp/full/$f" <<-'PY'
			import sys
			def lines(p):
			    out = []
			    for line in open(p, "rb").read().split(b"\n"):
			        f = line.split(b"\t")
			        if not line.startswith(b"#") and len(f) > 12:
			            f[11] = f[12] = b""
			        out.append(b"\t".join(f))
			    return out
			got, full = lines(sys.argv[1]), lines(sys.argv[2])
			ok = got[:2] == full[:2] and got[-1] == b"" and set(got) <= set(full)
			sys.exit(0 if ok else 1)
			PY
			then
				continue
			fi
			;;
		./.git/kopt/tune/*.plan)
			# the plan of a run that did not end, kept for --resume
			# (a complete run removes it): whole, never half written
			if python3 - "$dir/$f" <<-'PY'
			import sys
			data = open(sys.argv[1], "rb").read()
			lines = data.split(b"\n")
			keys = {b"strategy", b"seed", b"max-evals", b"tree", b"build",
			        b"trial", b"eval"}
			ok = (lines[0] == b"# git-kopt tuning plan 1" and
			      data.endswith(b"\n") and
			      all(l.split(b"\t")[0] in keys for l in lines[1:-1]))
			sys.exit(0 if ok else 1)
			PY
			then
				continue
			fi
			;;
		./.git/logs/*)
			if [ -f "$tmp/full/$f" ] &&
			   { [ ! -s "$dir/$f" ] ||
			     [ "$(tail -c 1 "$dir/$f" | od -An -c | tr -d ' ')" = '\n' ]; } &&
			   cut -f1 "$dir/$f" | cut -d' ' -f1-2 >"$tmp/k.log" &&
			   cut -f1 "$tmp/full/$f" | cut -d' ' -f1-2 |
				head -n "$(wc -l <"$tmp/k.log")" | cmp -s - "$tmp/k.log"; then
				continue
			fi
			;;
		esac
		echo "torn: $f ($why)"
		return 1
	done <"$tmp/changed"
}

# kill_check <before-dir> <cmd>...: kill the command at random points of
# its writes, each time in a fresh copy of <before-dir>, and check.
kill_check() {
	local before=$1 tmp=$BATS_TEST_TMPDIR points=${KOPT_KILL_POINTS:-3}
	local seed=${KOPT_KILL_SEED:-1} sys n rc rounds why=
	shift
	command -v strace >/dev/null || skip "no strace (install it to kill steps halfway)"
	# LeakSanitizer stops the program with ptrace at exit, which fails
	# under strace: the sanitizer build checks leaks in the other tests
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	RANDOM=$seed

	# git-kopt itself, not through git, is traced and killed: not the
	# benchmarks, builds and git commands it runs (a killed benchmark is
	# a failed configuration, not a killed step)
	if [ "$1" = git ] && [ "$2" = kopt ]; then
		shift 2
		set -- git-kopt "$@"
	fi
	snapshot "$before" >"$tmp/before.sum"
	rm -rf "$tmp/full" && cp -a "$before" "$tmp/full"
	(cd "$tmp/full" && strace -qq -o "$tmp/trace" -e trace="$KILL_SYSCALLS" \
		"$@" >/dev/null 2>&1) || {
		echo "the step fails when not killed: $*"
		return 1
	}
	snapshot "$tmp/full" >"$tmp/after.sum"
	# every point: "<syscall> <n>", the n-th call of that syscall
	awk '{ s = $0; sub(/\(.*/, "", s);
	       if (s ~ /^[a-z0-9_]+$/) print s, ++n[s] }' "$tmp/trace" \
		>"$tmp/points"
	total=$(wc -l <"$tmp/points")
	[ "$total" -gt 0 ] || { echo "no writes traced"; return 1; }
	if [ -n "${KOPT_KILL_AT:-}" ]; then
		printf '%s\n' "$KOPT_KILL_AT" >"$tmp/chosen"
	elif [ "$points" = all ]; then
		cp "$tmp/points" "$tmp/chosen"
	elif [ "$points" = changes ]; then
		awk '{ s = $0; sub(/\(.*/, "", s)
		       if (s !~ /^[a-z0-9_]+$/) next
		       n[s]++
		       if ($0 ~ /= -1 E/ ||
		           ($0 ~ /O_RDONLY/ && $0 !~ /O_CREAT/)) next
		       print s, n[s] }' "$tmp/trace" >"$tmp/chosen"
	else
		: >"$tmp/chosen"
		for _ in $(seq "$points"); do
			sed -n "$((RANDOM % total + 1))p" "$tmp/points" >>"$tmp/chosen"
		done
	fi
	if [ -n "${KOPT_KILL_RANGE:-}" ]; then
		sed -n "${KOPT_KILL_RANGE/-/,}p" "$tmp/chosen" >"$tmp/range"
		mv "$tmp/range" "$tmp/chosen"
		[ -s "$tmp/chosen" ] || {
			echo "no points $KOPT_KILL_RANGE: the step has $total"
			return 1
		}
	fi

	killed=0
	while read -r sys n; do
		why="killed at $sys #$n of $total points (KOPT_KILL_SEED=$seed): $*"
		rm -rf "$tmp/work" && cp -a "$before" "$tmp/work"
		# strace injects only into the calls it traces
		rc=0
		(cd "$tmp/work" && strace -qq -o /dev/null -e trace="$sys" \
			-e inject="$sys:signal=KILL:when=$n" "$@" >/dev/null 2>&1) ||
			rc=$?
		[ "$rc" -eq 0 ] || killed=$((killed + 1))
		torn "$tmp/work" "$why" || return 1
		(cd "$tmp/work" && git fsck --no-progress --no-dangling >"$tmp/fsck" 2>&1) || {
			echo "git fsck: $(cat "$tmp/fsck") ($why)"
			return 1
		}
		# killed after its last change: nothing to redo
		grep -v '\.lock$' "$tmp/after.sum" >"$tmp/after-nolock.sum"
		grep -v '\.lock$' "$tmp/killed.sum" >"$tmp/killed-nolock.sum"
		cmp -s "$tmp/after-nolock.sum" "$tmp/killed-nolock.sum" && continue
		# the step again completes, a stale lock removed when it says so
		rc=0
		(cd "$tmp/work" && "$@" >"$tmp/rerun.out" 2>"$tmp/rerun.err") ||
			rc=$?
		# the lock files a killed run left: the rerun names them all
		# at once, and one round of removing them is enough
		rounds=0
		while [ "$rc" -ne 0 ]; do
			grep -o "'[^']*\.lock'" "$tmp/rerun.err" | tr -d "'" |
				sort -u >"$tmp/locks"
			if [ ! -s "$tmp/locks" ] || [ "$rounds" -ge "${KILL_LOCK_ROUNDS:-1}" ] ||
			   ! (cd "$tmp/work" && xargs -d '\n' ls -d -- <"$tmp/locks" >/dev/null 2>&1); then
				echo "the rerun failed ($rc${rounds:+ after $rounds rounds of removing lock files}): $(cat "$tmp/rerun.err") ($why)"
				return 1
			fi
			rounds=$((rounds + 1))
			rc=0
			(cd "$tmp/work" && xargs -d '\n' rm -f -- <"$tmp/locks" &&
				"$@" >"$tmp/rerun.out" 2>"$tmp/rerun.err") ||
				rc=$?
		done
		snapshot "$tmp/work" | grep -v '\.lock$' >"$tmp/rerun.sum"
		if ! cmp -s "$tmp/after-nolock.sum" "$tmp/rerun.sum"; then
			echo "the rerun left another state than a complete run ($why):"
			diff "$tmp/after-nolock.sum" "$tmp/rerun.sum" | head -n 20
			return 1
		fi
	done <"$tmp/chosen"
	# a harness that kills nothing proves nothing
	if [ "$killed" -eq 0 ]; then
		echo "none of the $(wc -l <"$tmp/chosen") kills stopped the step: $*"
		return 1
	fi
}

# disk_check <before-dir> <cmd>...: run the command on a small file system
# (a tmpfs) with from no free space at all to enough, page by page: each
# run either succeeds or fails with one message saying why (exit 128), and
# leaves no torn file and a sound repository; with the space back, the
# step completes.  Mounting needs root; without it the test is skipped.
DISK=
disk_check() {
	local before=$1 tmp=$BATS_TEST_TMPDIR need pages k ks rc
	shift
	RANDOM=${KOPT_KILL_SEED:-1}
	DISK=$tmp/disk
	mkdir -p "$DISK"
	need=$(du -sk "$before" | cut -f1)
	if [ "$(id -u)" != 0 ] ||
	   ! mount -t tmpfs -o size=$((need + 4096))k kopt-test "$DISK" 2>/dev/null; then
		DISK=
		skip "cannot mount a tmpfs here (root needed): no full-disk test"
	fi
	snapshot "$before" >"$tmp/before.sum"
	rm -rf "$tmp/full" && cp -a "$before" "$tmp/full"
	(cd "$tmp/full" && "$@" >/dev/null 2>&1) || {
		echo "the step fails with space: $*"
		return 1
	}
	snapshot "$tmp/full" >"$tmp/after.sum"
	# the pages the step writes, and some to spare
	pages=$(( ($(du -sk "$tmp/full" | cut -f1) - need) / 4 + 4 ))
	[ "$pages" -gt 4 ] || pages=8
	if [ "${KOPT_KILL_POINTS:-3}" = all ]; then
		ks=$(seq 0 "$pages")
	else
		ks="0 1 $((RANDOM % pages)) $((RANDOM % pages))"
	fi
	for k in $ks; do
		rm -rf "$DISK/repo" "$DISK/fill"
		cp -a "$before" "$DISK/repo" || return 1
		dd if=/dev/zero of="$DISK/fill" bs=4k 2>/dev/null || true
		truncate -s "-$((k * 4096))" "$DISK/fill"
		rc=0
		(cd "$DISK/repo" && "$@" >"$tmp/out" 2>"$tmp/err") || rc=$?
		why="with $k free pages: $*"
		if [ "$rc" -ne 0 ]; then
			if [ "$rc" -ne 128 ] && [ "$rc" -ne 1 ]; then
				echo "exit $rc ($why): $(cat "$tmp/err")"
				return 1
			fi
			if ! grep -q . "$tmp/err"; then
				echo "failed without a message ($why)"
				return 1
			fi
		fi
		torn "$DISK/repo" "$why; the step said: $(cat "$tmp/err")" ||
			return 1
		(cd "$DISK/repo" && git fsck --no-progress --no-dangling >"$tmp/fsck" 2>&1) || {
			echo "git fsck: $(cat "$tmp/fsck") ($why)"
			return 1
		}
		[ "$rc" -ne 0 ] || continue
		# space back: the step completes
		rm -f "$DISK/fill"
		(cd "$DISK/repo" && "$@" >"$tmp/out" 2>"$tmp/err") || {
			echo "the rerun with space failed: $(cat "$tmp/err") ($why)"
			return 1
		}
	done
}

disk_release() {
	[ -z "$DISK" ] || umount "$DISK" 2>/dev/null || true
	DISK=
}

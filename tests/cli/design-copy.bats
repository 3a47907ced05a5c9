#!/usr/bin/env bats
# git kopt design: a new version on its own branch, copied from an old
# one with its version-suffixed names renamed.

load helper
load gate

setup() {
	setup_kernel_repo
	install_hooks
	v0=kernels/mla_decode/v0
	mkdir -p $v0/include/tiles
	printf '#pragma once\n#define MLA_DECODE_TILE 64\nvoid mla_decode_tile_load(void);\n' \
		>$v0/include/tiles/mla_decode_tile.cuh
	printf '#include "tiles/mla_decode_tile.cuh"\nint main(void) { return 0; }\n' \
		>$v0/main.cu
	printf '\000\001mla_decode_kernel\000\377' >$v0/table.bin
	printf '#!/bin/sh\necho mla_decode_kernel\n' >$v0/run.sh
	chmod +x $v0/run.sh
	git add -A
	git commit -q -m "Grow v0"
}

@test "design from the base version renames the kernel's names, not the shared ones" {
	run --separate-stderr git kopt design mla-decode --title "Split KV"
	assert_success
	[ "$stderr" = "Switched to a new branch 'kopt/mla-decode/v1'
created kernels/mla_decode/v1 from v0: 5 files (4 renamed, 1 binary copied as is)
hint: no task for v1; write docs/kernels/mla-decode/tasks/v1.md or run 'git kopt strategize mla-decode'" ]
	assert_output "Create mla-decode v1 from v0.
Language: cuda-c.
Load /design-cuda-c-kernel and the matching reference skill if one exists.
Apply optimizations: none given yet (write the task with 'git kopt strategize mla-decode').
Return implementation summary per the output contract."
	run git ls-files kernels/mla_decode/v1
	assert_output "kernels/mla_decode/v1/include/tiles/mla_decode_tile_v1.cuh
kernels/mla_decode/v1/main.cu
kernels/mla_decode/v1/mla_decode_v1.cu
kernels/mla_decode/v1/run.sh
kernels/mla_decode/v1/table.bin"
	# the harness's header and entry point keep their names
	run cat kernels/mla_decode/v1/mla_decode_v1.cu
	assert_output '#include "mla_decode.h"
__global__ void mla_decode_v1_kernel(void) {}
int mla_decode_launch(void) { mla_decode_v1_kernel<<<1, 1>>>(); return 0; }'
	run cat kernels/mla_decode/v1/main.cu
	assert_output '#include "tiles/mla_decode_tile_v1.cuh"
int main(void) { return 0; }'
	run cat kernels/mla_decode/v1/include/tiles/mla_decode_tile_v1.cuh
	assert_output '#pragma once
#define MLA_DECODE_TILE 64
void mla_decode_tile_v1_load(void);'
	cmp kernels/mla_decode/v0/table.bin kernels/mla_decode/v1/table.bin
	run cat kernels/mla_decode/v1/run.sh
	assert_output '#!/bin/sh
echo mla_decode_v1_kernel'
	[ -x kernels/mla_decode/v1/run.sh ]
	run git ls-files -s kernels/mla_decode/v1/run.sh
	assert_output --regexp '^100755 '
}

@test "measurement logs beside the harness make no name an interface" {
	mkdir -p kernels/mla_decode/measurements
	printf 'mla_decode_kernel 3745.2 us\n' \
		>kernels/mla_decode/measurements/v0.log
	printf 'version,kernel,us\nv0,mla_decode_kernel,3745.2\n' \
		>kernels/mla_decode/measurements/runs.csv
	git add -A
	git commit -q -m "Measurements"
	run --separate-stderr git kopt design mla-decode
	assert_success
	run cat kernels/mla_decode/v1/mla_decode_v1.cu
	assert_output '#include "mla_decode.h"
__global__ void mla_decode_v1_kernel(void) {}
int mla_decode_launch(void) { mla_decode_v1_kernel<<<1, 1>>>(); return 0; }'
}

@test "design leaves a clean tree, on the new branch, with a tool commit" {
	git kopt design mla-decode --title "Split KV" >/dev/null 2>&1
	run git symbolic-ref --short HEAD
	assert_output "kopt/mla-decode/v1"
	run git status --porcelain
	assert_output ""
	run git log -1 --format=%P
	assert_output "$(git rev-parse main)"
	run sh -c 'git log -1 --format=%B | git interpret-trailers --parse'
	assert_output "Kopt-Kernel: mla-decode
Kopt-Version: v1
Kopt-Step: design"
	run git log -1 --format=%s
	assert_output "Design mla-decode v1 from v0"
	diff -u "$GATE/devlog-v1.md" docs/kernels/mla-decode.md
}

@test "a file the shared build names keeps its name" {
	printf 'SRCS = $(VERSION)/mla_decode.cu\n' >kernels/mla_decode/Makefile
	git add -A
	git commit -q -m "Name the source"
	run git kopt design mla-decode
	assert_success
	run git ls-files kernels/mla_decode/v1
	assert_line "kernels/mla_decode/v1/mla_decode.cu"
	run grep -c mla_decode_v1_kernel kernels/mla_decode/v1/mla_decode.cu
	assert_output "2"
}

@test "design from a suffixed version renames the suffix" {
	git kopt design mla-decode >/dev/null 2>&1
	run --separate-stderr git kopt design mla-decode
	assert_success
	[[ "$stderr" == *"created kernels/mla_decode/v2 from v1: 5 files (4 renamed, 1 binary copied as is)"* ]]
	assert_line --index 0 "Create mla-decode v2 from v1."
	run git ls-files kernels/mla_decode/v2
	assert_line "kernels/mla_decode/v2/include/tiles/mla_decode_tile_v2.cuh"
	assert_line "kernels/mla_decode/v2/mla_decode_v2.cu"
	run cat kernels/mla_decode/v2/mla_decode_v2.cu
	assert_output '#include "mla_decode.h"
__global__ void mla_decode_v2_kernel(void) {}
int mla_decode_launch(void) { mla_decode_v2_kernel<<<1, 1>>>(); return 0; }'
	# the branch of v2 starts from the branch of v1
	run git log --format=%s -3
	assert_output "Design mla-decode v2 from v1
Design mla-decode v1 from v0
Grow v0"
}

@test "design with rename = none copies names unchanged" {
	git config -f .kopt kernel.mla-decode.rename none
	git commit -q -am "No renaming"
	run git kopt design mla-decode
	assert_success
	run git ls-files kernels/mla_decode/v1
	assert_line "kernels/mla_decode/v1/include/tiles/mla_decode_tile.cuh"
	diff -r kernels/mla_decode/v0 kernels/mla_decode/v1
}

@test "design hands the --task file over and takes the versions from it" {
	git kopt design mla-decode >/dev/null 2>&1
	git checkout -q main
	cat >"$BATS_TEST_TMPDIR/task.md" <<-'EOF'
	## Optimization Task: mla-decode v0 -> v2
	### Current Bottleneck: Latency-bound
	### Optimizations to Apply:
	1. Split-KV decode -- waves 0.5 -- [split-kv](../../../knowledge/optimizations/split-kv.md)
	2. Fewer registers -- occupancy 12%

	### Constraints
	- 128 registers
	EOF
	run --separate-stderr git kopt design mla-decode --task "$BATS_TEST_TMPDIR/task.md"
	assert_success
	assert_output "Create mla-decode v2 from v0.
Language: cuda-c.
Load /design-cuda-c-kernel and the matching reference skill if one exists.
Apply optimizations:
1. Split-KV decode -- waves 0.5 -- [split-kv](../../../knowledge/optimizations/split-kv.md)
2. Fewer registers -- occupancy 12%
Return implementation summary per the output contract."
	cmp "$BATS_TEST_TMPDIR/task.md" docs/kernels/mla-decode/tasks/v2.md
	run git ls-files docs/kernels/mla-decode/tasks
	assert_output "docs/kernels/mla-decode/tasks/v2.md"
	run grep -c 'Task: `docs/kernels/mla-decode/tasks/v2.md`' docs/kernels/mla-decode.md
	assert_output "1"
}

@test "design takes the task strategize wrote, though it is not committed" {
	mkdir -p docs/kernels/mla-decode/tasks
	printf '## Optimization Task: mla-decode v0 -> v1\n### Optimizations to Apply:\n1. Swizzle\n' \
		>docs/kernels/mla-decode/tasks/v1.md
	run git kopt design mla-decode
	assert_success
	assert_line "1. Swizzle"
	run git status --porcelain
	assert_output ""
	run git show --name-only --format= HEAD
	assert_line "docs/kernels/mla-decode/tasks/v1.md"
}

@test "the next free version counts branches and folders" {
	git branch kopt/mla-decode/v3
	run --separate-stderr git kopt design mla-decode
	assert_success
	assert_line --index 0 "Create mla-decode v4 from v0."
	git checkout -q main
	run --separate-stderr git kopt design mla-decode --to v7 --from v0
	assert_success
	assert_line --index 0 "Create mla-decode v7 from v0."
	[ -d kernels/mla_decode/v7 ]
}

@test "other staged changes stay staged and out of the scaffold commit" {
	echo "notes" >NOTES
	git add NOTES
	run git kopt design mla-decode
	assert_success
	run git show --name-only --format= HEAD
	refute_line "NOTES"
	run git status --porcelain
	assert_output "A  NOTES"
}

@test "a devlog without a Development log section gets one" {
	printf '# mla-decode\n\nNotes only.\n' >docs/kernels/mla-decode.md
	git commit -q -am "Plain devlog" --no-verify
	run git kopt design mla-decode --title "First"
	assert_success
	run cat docs/kernels/mla-decode.md
	assert_output "# mla-decode

Notes only.

## Development log

### V1: First

**Location**: \`kernels/mla_decode/v1\`

**What changed**:
- Created from V0 (\`kernels/mla_decode/v0\`)
- [...]

**High-level description of main code changes**:
- [optimizations and how they relate to profiling insights]"
}

@test "the entry goes at the end of the log, before a later section" {
	printf '\n## Appendix\n\nKept below.\n' >>docs/kernels/mla-decode.md
	git commit -q -am "Appendix" --no-verify
	cp docs/kernels/mla-decode.md "$BATS_TEST_TMPDIR/before.md"
	git kopt design mla-decode --title "Split KV" >/dev/null 2>&1
	run grep -n '^##' docs/kernels/mla-decode.md
	assert_output "3:## Overview
7:## Development log
9:### V0: Base version
16:### V1: Split KV
27:## Appendix"
	# the bytes before and after the entry are the old ones
	head -c "$(wc -c <"$GATE/devlog.md")" docs/kernels/mla-decode.md |
		cmp - "$GATE/devlog.md"
	tail -n 4 docs/kernels/mla-decode.md | cmp - <(tail -n 4 "$BATS_TEST_TMPDIR/before.md")
}

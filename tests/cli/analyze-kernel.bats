#!/usr/bin/env bats
# git kopt analyze: the ANALYZE step over devlog and results.

load helper
load kopt-results

setup() {
	setup_repo
	setup_kernel
	write_devlog
	write_results mla-decode v0 null 95.1 140
	write_results mla-decode v1 v0 41.3 120
}

@test "analyze <kernel> prints overview, versions, best, target, obligations" {
	printf '\n### V2 (abandoned): tiling\n\n**What changed**:\n- tiles\n' \
		>>docs/kernels/mla-decode.md
	write_results mla-decode v3 v1 45.0 58 true
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	[ "$stderr" = "" ]
	assert_output "$(cat "$FIXTURES/analyze/mla-decode.md")"
}

@test "analyze --json has the same facts" {
	printf '\n### V2 (abandoned): tiling\n\n**What changed**:\n- tiles\n' \
		>>docs/kernels/mla-decode.md
	write_results mla-decode v3 v1 45.0 58 true
	run --separate-stderr git kopt analyze mla-decode --json
	assert_success
	assert_output "$(cat "$FIXTURES/analyze/mla-decode.json")"
}

@test "analyze without a kernel prints one line per kernel" {
	git kopt kernel add gemm --language cuda-c --source 'k/{version}' \
		--run 'true' >/dev/null
	run --separate-stderr git kopt analyze
	assert_success
	assert_output "$(cat <<'EOF2'
| Kernel     | Versions | Latest | Best                                         | Target                             | LEARN  |
| ---------- | -------- | ------ | -------------------------------------------- | ---------------------------------- | ------ |
| mla-decode | 2        | v1     | decode v1 41.30 μs; spec-decode v1 120.00 μs | not met (spec-decode 100.0% above) | 0 open |
| gemm       | 0        | --     | --                                           | --                                 | 0 open |
EOF2
)"
}

@test "a regression is an open obligation until an anti-pattern names it" {
	write_results mla-decode v2 v1 50 110
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_line "- v2 regressed on decode (21.1% slower than v1) and no anti-pattern names mla-decode/v2: run 'git kopt learn new anti-pattern <name> --from mla-decode/v2', or add 'Kopt-Learn: skip <reason>' to a commit of v2"
	mkdir -p docs/knowledge/anti-patterns
	printf '# Over-splitting\n\nSource: mla-decode/v2\n' \
		>docs/knowledge/anti-patterns/over-splitting.md
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_output --partial $'## Open LEARN obligations\n\nNone.'
}

@test "a mention of v20 does not close the obligation of v2" {
	write_results mla-decode v2 v1 50 110
	mkdir -p docs/knowledge/anti-patterns
	printf 'Source: mla-decode/v20\n' >docs/knowledge/anti-patterns/x.md
	run --separate-stderr git kopt analyze mla-decode --json
	assert_success
	assert_output --partial '"learn_obligations":	[{'
}

@test "a Kopt-Learn: skip trailer closes the obligation" {
	write_results mla-decode v2 v1 50 110
	git add -A
	git commit -q -m "Measure v2" -m "Kopt-Kernel: mla-decode
Kopt-Version: v2
Kopt-Learn: skip the box was throttled"
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_output --partial $'## Open LEARN obligations\n\nNone.'
}

@test "a change within the noise is neutral, not a regression" {
	write_results mla-decode v2 v1 42.5 120
	run --separate-stderr git kopt analyze mla-decode --json
	assert_success
	assert_output --partial '"learn_obligations":	[]'
	assert_output --partial '"verdict":	"neutral"'
}

@test "the evidence 'learn new --from' writes closes the obligation" {
	write_results mla-decode v2 v1 50 110
	mkdir -p docs/knowledge/anti-patterns
	printf 'Source type: local experiment (mla-decode v1 -> v2, NVIDIA H200)\n' \
		>docs/knowledge/anti-patterns/over-splitting.md
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_output --partial $'## Open LEARN obligations\n\nNone.'
}

@test "analyze keeps a cache in .git and sees every edit, even a same-size one" {
	write_results mla-decode v2 v1 50 110
	git kopt analyze mla-decode >first.out
	test -f .git/kopt/analyze/mla-decode
	run --separate-stderr git kopt analyze mla-decode
	assert_output "$(cat first.out)"
	run --separate-stderr env KOPT_NO_CACHE=1 git kopt analyze mla-decode
	assert_output "$(cat first.out)"
	sed -i 's/"duration_us": 50,/"duration_us": 60,/' \
		docs/kernels/mla-decode/results/v2.json
	run --separate-stderr git kopt analyze mla-decode
	assert_line --partial "| v2      | --       | v1     | 60.00 μs (45.3% slower)"
	rm first.out
}

@test "before the base version is measured, analyze names its folder and the profile to run" {
	rm -r docs/kernels/mla-decode/results
	cp "$FIXTURES/devlog/corpus/01-seed.md" seed.md
	sed -n '1,/^## Development log/p' seed.md >docs/kernels/mla-decode.md
	rm seed.md
	mkdir -p kernels/mla_decode/v0 kernels/mla_decode/v1 kernels/mla_decode/harness
	touch kernels/mla_decode/v0/mla_decode.cu kernels/mla_decode/v1/x.cu
	run --separate-stderr git kopt analyze mla-decode
	assert_success
	assert_output --partial $'## Versions\n\nNo version measured yet: profile the base version with \'git kopt profile mla-decode v0\'.\n'
	assert_output --partial $'## Versions without results\n\n- v0 (source folder only)\n- v1 (source folder only)\n\n## Open'
	run --separate-stderr git kopt analyze mla-decode --json
	assert_output --partial '"without_results":	["v0", "v1"]'
}

@test "a version the devlog or the results know is not listed again for its folder" {
	mkdir -p kernels/mla_decode/v0 kernels/mla_decode/v1 kernels/mla_decode/v2
	run --separate-stderr git kopt analyze mla-decode --json
	assert_success
	assert_output --partial '"without_results":	["v2"]'
}

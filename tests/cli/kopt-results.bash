# Helpers for tests that need kernels with devlogs and results:
# a kernel "mla-decode" in .kopt and results files written in one line.

setup_kernel() {
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' --run 'true {b}' \
		--target 'spec-decode duration_us <= 60' >/dev/null
}

# write_results <kernel> <version> <parent|null> <decode us> <spec us> [replayed]
write_results() {
	local parent=null replayed=${6:-false}
	[ "$3" = null ] || parent="\"$3\""
	mkdir -p "docs/kernels/$1/results"
	cat >"docs/kernels/$1/results/$2.json" <<JSON
{"schema": 1, "kernel": "$1", "version": "$2", "parent": $parent,
 "entries": [
  {"trial": "decode", "config": {"b": 32, "s": 1, "t": 4096},
   "replayed": $replayed, "device": {"name": "NVIDIA H200"},
   "metrics": {"duration_us": $4, "tflops": 50.5, "occ_pct": 24.4},
   "bottleneck": "Memory-bound"},
  {"trial": "spec-decode", "config": {"b": 32, "s": 16, "t": 4096},
   "replayed": $replayed, "device": {"name": "NVIDIA H200"},
   "metrics": {"duration_us": $5}, "bottleneck": "Compute-bound"}
 ]}
JSON
}

# The devlog of the corpus, with versions v0 and v1.
write_devlog() {
	cp "$FIXTURES/devlog/corpus/01-seed.md" docs/kernels/mla-decode.md
}

# Hide commit ids, which depend on the templates of the day.
hide_ids() {
	sed -E 's/\b[0-9a-f]{7,40}\b/<id>/g'
}

# add_corpus_kernels <prefix> <first>: a kernel <prefix><n> for each devlog
# of the corpus (n from <first> on), with that devlog and two results
# files; sets corpus_next to the next n.
add_corpus_kernels() {
	local p=$1 i=$2 f
	for f in "$FIXTURES"/devlog/corpus/*.md; do
		git kopt kernel add "$p$i" --language cuda-c \
			--source "$p$i/{version}" --run 'true' \
			--target 'decode duration_us <= 30' >/dev/null
		cp "$f" "docs/kernels/$p$i.md"
		write_results "$p$i" v0 null $((40 + i)) 100
		write_results "$p$i" v1 v0 $((30 + i)) 90
		i=$((i + 1))
	done
	corpus_next=$i
}

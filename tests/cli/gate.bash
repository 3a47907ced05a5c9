# Set-up shared by the tests of design, hook, check, evaluate and status:
# a kernel repository with settings, a catalog, a devlog and results.

GATE="$FIXTURES/gate"

# The hooks as the shims in hooks/ install them.
install_hooks() {
	local dir=${1:-.git/hooks} h
	mkdir -p "$dir"
	for h in pre-commit commit-msg pre-push; do
		case $h in
		pre-commit) args='' ;;
		*) args=' "$@"' ;;
		esac
		printf '#!/bin/sh\nexec git kopt hook %s%s\n' "$h" "$args" >"$dir/$h"
		chmod +x "$dir/$h"
	done
}

# results <kernel> <version> <parent|null> <decode us> <spec-decode us> [spread%]
results() {
	local k=$1 v=$2 p=$3 d=$4 sd=$5 spread=${6:-1.0}
	local parent=null
	[ "$p" = null ] || parent="\"$p\""
	mkdir -p "docs/kernels/$k/results"
	cat >"docs/kernels/$k/results/$v.json" <<EOF
{
  "schema": 1,
  "kernel": "$k",
  "version": "$v",
  "parent": $parent,
  "entries": [
    {
      "trial": "decode",
      "config": { "b": 32, "s": 1, "t": 4096, "b_requested": 32 },
      "replayed": false,
      "metrics": { "duration_us": $d, "tflops": 50.0 },
      "spread_pct": $spread
    },
    {
      "trial": "spec-decode",
      "config": { "b": 32, "s": 16, "t": 4096, "b_requested": 32 },
      "replayed": false,
      "metrics": { "duration_us": $sd, "tflops": 80.0 },
      "spread_pct": $spread
    }
  ]
}
EOF
}

# A kernel repository with v0 measured, committed on main.
setup_kernel_repo() {
	setup_repo
	cp "$GATE/kopt" .kopt
	mkdir -p .claude/skills/optimization-catalog docs/knowledge/optimizations \
		docs/knowledge/anti-patterns docs/kernels kernels/mla_decode/v0 \
		kernels/mla_decode/harness
	cp "$GATE/catalog.md" .claude/skills/optimization-catalog/SKILL.md
	cp "$GATE/split-kv.md" docs/knowledge/optimizations/split-kv.md
	cp "$GATE/devlog.md" docs/kernels/mla-decode.md
	printf '#include "mla_decode.h"\n__global__ void mla_decode_kernel(void) {}\nint mla_decode_launch(void) { mla_decode_kernel<<<1, 1>>>(); return 0; }\n' \
		>kernels/mla_decode/v0/mla_decode.cu
	printf 'int mla_decode_launch(void);\n' >kernels/mla_decode/harness/mla_decode.h
	results mla-decode v0 null 100.0 200.0
	git add -A
	git commit -q -m "Start mla-decode"
}

# Add a version directory and an entry, committed, as design would.
add_version() {
	local v=$1 title=$2 n=${1#v}
	mkdir -p "kernels/mla_decode/$v"
	echo "// $v" >"kernels/mla_decode/$v/mla_decode.cu"
	printf '\n### V%s: %s\n\n**Location**: `kernels/mla_decode/%s`\n' \
		"$n" "$title" "$v" >>docs/kernels/mla-decode.md
	git add -A
	git commit -q -m "Design mla-decode $v"
}

# An anti-pattern file and its catalog row, as learn new would write them.
add_anti_pattern() {
	local name=$1
	sed "s/^# .*/# $name/" "$GATE/wide-tiles.md" \
		>"docs/knowledge/anti-patterns/$name.md"
	printf '| A1 | %s | spills | mla-decode v1 | [%s](../../../docs/knowledge/anti-patterns/%s.md) |\n' \
		"$name" "$name" "$name" >>.claude/skills/optimization-catalog/SKILL.md
}

add_optimization() {
	local name=$1
	sed "s/^# .*/# $name/" "$GATE/split-kv.md" \
		>"docs/knowledge/optimizations/$name.md"
	# the optimization table is the first one: insert after its last row
	awk -v row="| O9 | $name | x | 10% | none | [$name](../../../docs/knowledge/optimizations/$name.md) |" '
		{ print }
		/^\| O1 / { print row }' .claude/skills/optimization-catalog/SKILL.md >cat.tmp
	mv cat.tmp .claude/skills/optimization-catalog/SKILL.md
}

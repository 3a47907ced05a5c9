#!/usr/bin/env bats
# git kopt plot: SVG files validated as XML and rendered by a real SVG
# renderer (rsvg-convert), the devlog's Results section spliced in place.

load helper
load kopt-results

setup() {
	setup_repo
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' --run 'true {b}' \
		--flops '2*b*s*h*t*(dqk+dv)' --bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 >/dev/null
	write_devlog
	write_measured v0 null 95.1 140
	write_measured v1 v0 41.3 120
	write_measured v2 v1 45.0 110
	git add -A
	git commit -q --no-verify -m "Measure"
	PLOTS=docs/kernels/mla-decode/plots
}

# write_measured <version> <parent|null> <decode us> <spec us>: results
# on a calibrated H200
write_measured() {
	local parent=null
	[ "$2" = null ] || parent="\"$2\""
	mkdir -p docs/kernels/mla-decode/results
	cat >"docs/kernels/mla-decode/results/$1.json" <<JSON
{"schema": 1, "kernel": "mla-decode", "version": "$1", "parent": $parent,
 "entries": [
  {"trial": "decode", "config": {"b": 32, "s": 1, "t": 4096},
   "device": {"name": "NVIDIA H200", "peak_tflops": 989.4, "peak_gbps": 4800,
              "measured_tflops": 760.2, "measured_gbps": 4310.5},
   "metrics": {"duration_us": $3}},
  {"trial": "spec-decode", "config": {"b": 32, "s": 16, "t": 4096},
   "device": {"name": "NVIDIA H200", "peak_tflops": 989.4, "peak_gbps": 4800,
              "measured_tflops": 760.2, "measured_gbps": 4310.5},
   "metrics": {"duration_us": $4}}
 ]}
JSON
}

# Render an SVG and check that it is a picture, not a blank page.
rendered() {
	rsvg-convert -o "$BATS_TEST_TMPDIR/out.png" "$1" ||
		fail "rsvg-convert cannot render $1"
	read -r size ink colours < <(python3 "$TOP/tests/cli/png-ink.py" "$BATS_TEST_TMPDIR/out.png" |
		sed 's/ink=//; s/colours=//')
	[ "$ink" -gt 2000 ] || fail "$1 renders almost blank ($ink pixels of ink)"
	[ "$colours" -gt 8 ] || fail "$1 renders in $colours colours"
}

@test "plot writes a history per trial and a roofline, valid and drawn" {
	command -v rsvg-convert >/dev/null || fail "rsvg-convert missing (tools/install-deps installs librsvg2-bin)"
	run --separate-stderr git kopt plot mla-decode
	assert_success
	[ -z "$stderr" ]
	assert_output "wrote $PLOTS/history-decode.svg
wrote $PLOTS/history-spec-decode.svg
wrote $PLOTS/roofline.svg
wrote docs/kernels/mla-decode.md"
	for f in "$PLOTS"/*.svg; do
		xmllint --noout "$f" || fail "$f is not well-formed XML"
		rendered "$f"
	done
	# what a reader needs is on the plots
	grep -q '>v2 ▲\|fill="#d62728"' "$PLOTS/history-decode.svg"
	grep -q '>45 (+9.0%)</text>' "$PLOTS/history-decode.svg"
	grep -q 'tensor 760.2 TFLOP/s (calibrated)' "$PLOTS/roofline.svg"
	grep -q 'copy 4310.5 GB/s (calibrated)' "$PLOTS/roofline.svg"
	grep -q '>duration (us), lower is better<' "$PLOTS/history-spec-decode.svg"
}

@test "the same history gives the same bytes; a second run writes nothing" {
	git kopt plot mla-decode >/dev/null
	mkdir "$BATS_TEST_TMPDIR/first"
	cp "$PLOTS"/*.svg docs/kernels/mla-decode.md "$BATS_TEST_TMPDIR/first/"
	run --separate-stderr git kopt plot mla-decode
	assert_success
	assert_output "mla-decode: plots and devlog up to date"
	rm -r "$PLOTS"
	git checkout -q docs/kernels/mla-decode.md
	git kopt plot mla-decode >/dev/null
	for f in "$BATS_TEST_TMPDIR"/first/*.svg; do
		cmp "$f" "$PLOTS/$(basename "$f")"
	done
	cmp "$BATS_TEST_TMPDIR/first/mla-decode.md" docs/kernels/mla-decode.md
}

@test "the devlog gets a Results section; bytes outside it are unchanged" {
	cp docs/kernels/mla-decode.md before.md
	git kopt plot mla-decode >/dev/null
	# the golden Results section
	sed -n '/^## Results$/,/^<!-- \/kopt:results -->$/p' docs/kernels/mla-decode.md >got.md
	diff -u "$FIXTURES/chart/results-section.md" got.md
	# everything else is the old bytes: the section went before the log
	python3 - before.md docs/kernels/mla-decode.md <<-'PY'
	import sys
	old = open(sys.argv[1], "rb").read()
	new = open(sys.argv[2], "rb").read()
	at = old.index(b"## Development log")
	start = new.index(b"## Results")
	end = new.index(b"<!-- /kopt:results -->\n\n") + len(b"<!-- /kopt:results -->\n\n")
	assert new[:start] == old[:at], "bytes before the section changed"
	assert new[end:] == old[at:], "bytes after the section changed"
	PY
	# new results: only the block changes, in place
	cp docs/kernels/mla-decode.md before2.md
	write_measured v3 v2 30.0 100
	git kopt plot mla-decode >/dev/null
	python3 - before2.md docs/kernels/mla-decode.md <<-'PY'
	import sys
	old = open(sys.argv[1], "rb").read()
	new = open(sys.argv[2], "rb").read()
	b, e = b"<!-- kopt:results: written by git kopt -->", b"<!-- /kopt:results -->"
	assert new[:new.index(b)] == old[:old.index(b)]
	assert new[new.index(e):] == old[old.index(e):]
	assert b'"v3"' in new and b'"v3"' not in old
	PY
	rm before.md before2.md got.md
}

@test "a Results section people wrote keeps their text; the block goes at its end" {
	python3 - docs/kernels/mla-decode.md <<-'PY'
	import sys
	p = sys.argv[1]
	t = open(p).read()
	t = t.replace("## Development log", "## Results\n\nOur own words about the results.\n\n## Development log", 1)
	open(p, "w").write(t)
	PY
	git kopt plot mla-decode >/dev/null
	grep -A3 '^## Results$' docs/kernels/mla-decode.md | tr '\n' '|' >got
	assert_equal "$(cat got)" "## Results||Our own words about the results.||"
	[ "$(grep -c '^## Results$' docs/kernels/mla-decode.md)" = 1 ]
	grep -q '^<!-- kopt:results: written by git kopt -->$' docs/kernels/mla-decode.md
	rm got
}

@test "a begin marker without its end is refused, nothing written" {
	printf '\n<!-- kopt:results: written by git kopt -->\n\nstray\n' >>docs/kernels/mla-decode.md
	cp docs/kernels/mla-decode.md before.md
	run --separate-stderr git kopt plot mla-decode
	assert_failure 128
	[[ "$stderr" == "error: "*"docs/kernels/mla-decode.md:"*": '<!-- kopt:results: written by git kopt -->' has no '<!-- /kopt:results -->' after it; remove it, or add the other, and run again" ]] ||
		fail "stderr: $stderr"
	cmp before.md docs/kernels/mla-decode.md
	[ ! -e "$PLOTS" ]
	rm before.md
}

@test "--out writes elsewhere and leaves the devlog alone; no expressions, no roofline" {
	mkdir out
	cp docs/kernels/mla-decode.md before.md
	run --separate-stderr git kopt plot mla-decode --out out --no-devlog
	assert_success
	assert_output "wrote out/history-decode.svg
wrote out/history-spec-decode.svg
wrote out/roofline.svg"
	cmp before.md docs/kernels/mla-decode.md
	git config -f .kopt --unset kernel.mla-decode.flops
	run --separate-stderr git kopt plot mla-decode --no-devlog
	assert_success
	assert_equal "$stderr" "warning: no roofline for mla-decode: its settings have no flops and bytes expressions"
	[ ! -e "$PLOTS/roofline.svg" ]
	rm -r out before.md
}

@test "plot: usage and unknown kernels" {
	run --separate-stderr git kopt plot
	assert_failure 129
	run --separate-stderr git kopt plot nope
	assert_failure 128
	assert_equal "$stderr" "fatal: unknown kernel 'nope' (known: mla-decode)"
}

@test "a history spanning more than 20x reads on decades, labels inside the plot" {
	write_measured v3 v2 3.9 100
	git add -A && git commit -q --no-verify -m "v3"
	git kopt plot mla-decode --no-devlog >/dev/null
	# decode: 95.1 -> 3.9 us, log scale with a tick per decade
	grep -q 'duration (us, log scale), lower is better' "$PLOTS/history-decode.svg"
	for tick in 1 10 100; do
		grep -q ">$tick</text>" "$PLOTS/history-decode.svg" || fail "no tick $tick"
	done
	# spec-decode: 140 -> 100 us, linear
	grep -q 'duration (us), lower is better' "$PLOTS/history-spec-decode.svg"
	rendered "$PLOTS/history-decode.svg"
	xmllint --noout "$PLOTS/history-decode.svg"
	# every label within the picture's width
	python3 - "$PLOTS/history-decode.svg" <<-'PY'
	import re, sys
	svg = open(sys.argv[1]).read()
	w = float(re.search(r'<svg[^>]* width="([0-9.]+)"', svg).group(1))
	for x, anchor, text in re.findall(r'<text x="([0-9.]+)"[^>]*text-anchor="(\w+)"[^>]*>([^<]*)<', svg):
	    half = 3.3 * len(text)
	    right = float(x) + (half if anchor == "middle" else 0 if anchor == "end" else 2 * half)
	    if right > w + 1:
	        sys.exit("label %r runs off the right edge (%.0f > %.0f)" % (text, right, w))
	PY
}

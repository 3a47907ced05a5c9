#!/usr/bin/env bats
# The HTTP agent backend: a model behind the OpenAI chat-completions or
# the Anthropic Messages API answers with a diff and a summary; a local
# server on 127.0.0.1 speaks both.

load helper

GPU="$FIXTURES/gpu"
RECORDED="$TOP/kernels/mla_decode"
SECRET=sk-test-0123456789abcdef

setup() {
	setup_repo
	git kopt init -q
	git kopt kernel add mla-decode --language cuda-c \
		--source 'kernels/mla_decode/{version}' \
		--run 'kernels/mla_decode/build/{version}/bench --b {b} --s {s} --t {t}' \
		--flops '2*b*s*h*t*(dqk+dv)' \
		--bytes '2*(b*t*dqk + b*s*h*dqk + b*s*h*dv)' \
		--param h=128 --param dqk=576 --param dv=512 >/dev/null
	mkdir -p kernels/mla_decode
	cp -R "$RECORDED/Makefile" "$RECORDED/harness" "$RECORDED/v0" kernels/mla_decode/
	echo /kernels/mla_decode/build/ >.gitignore
	git add -A
	git commit -qm "Start"
	git kopt profile mla-decode v0 --replay "$GPU/mla-decode-v0-decode.json" \
		--replay "$GPU/mla-decode-v0-spec-decode.json" >/dev/null 2>&1
	git add -A
	git commit -qm "Profile v0"
	git kopt strategize mla-decode >/dev/null 2>&1
	LOG="$BATS_TEST_TMPDIR/requests.log"
	export TEST_MODEL_KEY=$SECRET
}

teardown() {
	if [ -n "${SERVER:-}" ]; then
		kill "$SERVER" 2>/dev/null || true
		wait "$SERVER" 2>/dev/null || true
	fi
}

# start_server [options of tests/cli/model-server]
start_server() {
	python3 "$TOP/tests/cli/model-server" --port-file "$BATS_TEST_TMPDIR/port" \
		--log "$LOG" --key "$SECRET" "$@" &
	SERVER=$!
	for i in $(seq 100); do
		[ -s "$BATS_TEST_TMPDIR/port" ] && break
		sleep 0.05
	done
	PORT=$(cat "$BATS_TEST_TMPDIR/port")
}

agent() {
	git config kopt.agent.$1.api "$2"
	git config kopt.agent.$1.url "$3"
	git config kopt.agent.$1.model test-model
	git config kopt.agent.$1.keyenv TEST_MODEL_KEY
}

# The key is nowhere: not in the output, the repository, git's files.
assert_no_secret() {
	[[ "$output" != *"$SECRET"* ]]
	[[ "${stderr:-}" != *"$SECRET"* ]]
	run grep -rl "$SECRET" "$REPO"
	assert_failure
}

@test "an OpenAI-compatible model's diff is applied to the version's folder" {
	start_server
	agent oai openai "http://127.0.0.1:$PORT/v1"
	run --separate-stderr git kopt design mla-decode --agent=oai
	assert_success
	assert_line "**Implementation summary** (oai):"
	assert_line '- Files: `kernels/mla_decode/v1/mla_decode_v1.cu`'
	# the diff, applied, committed
	[ "$(head -1 kernels/mla_decode/v1/mla_decode_v1.cu)" = "// tiled by the model" ]
	run git show --stat --format=%s HEAD
	assert_line "mla-decode v1: a comment at the top of kernels/mla_decode/v1/mla_decode_v1.cu"
	assert_line --regexp '^ kernels/mla_decode/v1/mla_decode_v1.cu +\| +1 \+$'
	# what the API was asked
	python3 - "$LOG" <<-'PY'
	import json, sys
	reqs = [json.loads(l) for l in open(sys.argv[1])]
	assert len(reqs) == 1, reqs
	r = reqs[0]
	assert r["path"] == "/v1/chat/completions" and r["key_ok"], r["path"]
	assert r["headers"]["authorization"] == "(key)"
	b = r["body"]
	assert b["model"] == "test-model" and b["max_tokens"] == 16000
	assert [m["role"] for m in b["messages"]] == ["system", "user"]
	user = b["messages"][1]["content"]
	assert user.startswith("Create mla-decode v1 from v0.\nLanguage: cuda-c.\n"), user[:80]
	assert "=== kernels/mla_decode/v1/mla_decode_v1.cu ===\n" in user
	assert "## New Version: mla-decode v1" in user
	PY
	assert_no_secret
}

@test "the Anthropic Messages API is spoken too" {
	start_server
	agent claude-api anthropic "http://127.0.0.1:$PORT"
	run --separate-stderr git kopt design mla-decode --agent=claude-api
	assert_success
	[ "$(head -1 kernels/mla_decode/v1/mla_decode_v1.cu)" = "// tiled by the model" ]
	python3 - "$LOG" <<-'PY'
	import json, sys
	r = json.loads(open(sys.argv[1]).readline())
	assert r["path"] == "/v1/messages" and r["key_ok"]
	assert r["headers"]["x-api-key"] == "(key)"
	assert r["headers"]["anthropic-version"] == "2023-06-01"
	b = r["body"]
	assert b["system"].startswith("You are the kernel designer")
	assert [m["role"] for m in b["messages"]] == ["user"]
	PY
	assert_no_secret
}

@test "a diff outside the version's folder is refused and nothing is applied" {
	start_server --mode outside
	agent oai openai "http://127.0.0.1:$PORT/v1"
	main=$(git rev-parse main)
	run --separate-stderr git kopt design mla-decode --agent=oai
	assert_failure 1
	[[ "$stderr" == *"refused: the model's diff changes 'kernels/mla_decode/harness/extra.h', outside the version's folder 'kernels/mla_decode/v1'"* ]]
	[ ! -e kernels/mla_decode/harness/extra.h ]
	[ "$(git rev-parse main)" = "$main" ]
	run git log --format=%s main..kopt/mla-decode/v1
	assert_output "Design mla-decode v1 from v0"
}

@test "an answer without a diff, or with a broken summary, is refused" {
	start_server --mode nodiff
	agent oai openai "http://127.0.0.1:$PORT/v1"
	run --separate-stderr git kopt design mla-decode --agent=oai
	assert_failure 1
	[[ "$stderr" == *"refused: the model's answer has no diff"* ]]
	kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
	rm -f "$BATS_TEST_TMPDIR/port"
	git branch -D -q kopt/mla-decode/v1
	start_server --mode broken
	agent oai openai "http://127.0.0.1:$PORT/v1"
	run --separate-stderr git kopt design mla-decode --agent=oai
	assert_failure 1
	[[ "$stderr" == *"refused: the implementation summary has no 'Correctness' part"* ]]
	run git status --porcelain --untracked-files=no
	assert_output ""
}

@test "a busy API is tried again; a refused key is named, never shown" {
	start_server --fail-first 2
	agent oai openai "http://127.0.0.1:$PORT/v1"
	run --separate-stderr git kopt design mla-decode --agent=oai
	assert_success
	[ "$(wc -l <"$LOG")" = 3 ]
	assert_no_secret
	git checkout -q main
	git branch -D -q kopt/mla-decode/v1
	export TEST_MODEL_KEY=sk-wrong-key-9876
	run --separate-stderr git kopt design mla-decode --agent=oai
	assert_failure 1
	[[ "$stderr" == *"TEST_MODEL_KEY"* ]]
	[[ "$stderr" == *"(HTTP 401)"* ]]
	[[ "$stderr" != *"sk-wrong-key-9876"* ]]
	run grep -rl "sk-wrong-key-9876" "$REPO"
	assert_failure
}

@test "the Anthropic backend needs its key from the environment" {
	git config kopt.agent.bad.api grpc
	run --separate-stderr git kopt design mla-decode --agent=bad
	assert_failure 128
	[[ "$stderr" == *"'kopt.agent.bad.api' is 'grpc', not openai or anthropic"* ]]
	agent claude-api anthropic "http://127.0.0.1:9/"
	unset TEST_MODEL_KEY
	run --separate-stderr git kopt design mla-decode --agent=claude-api
	assert_failure 1
	[[ "$stderr" == *"refused: agent 'claude-api' needs its key in \$TEST_MODEL_KEY"* ]]
}

#!/usr/bin/env bats
# git kopt review --post against a loopback stand-in for the GitHub and
# GitLab APIs (tests/cli/forge-server.py), started and stopped here.

load helper
load kopt-results

TOKEN="ghp_TestT0kenThatMustNeverLeak0123456789"

setup() {
	setup_repo
	setup_kernel
	write_devlog
	write_results mla-decode v0 null 95.1 140
	write_results mla-decode v1 v0 41.3 120
	git add -A
	git commit -q -m "Measure v0 and v1"
	git checkout -q -b kopt/mla-decode/v2
	write_results mla-decode v2 v1 45.0 110 true
	git add -A
	git commit -q --no-verify -m "Verify v2" -m "Kopt-Kernel: mla-decode
Kopt-Version: v2
Kopt-Step: verify"
	# nothing of the CI we may be running in leaks into the tests
	unset GITHUB_ACTIONS GITHUB_REPOSITORY GITHUB_EVENT_PATH GITHUB_REF \
		GITHUB_API_URL GITHUB_TOKEN GITLAB_CI CI_PROJECT_ID \
		CI_MERGE_REQUEST_IID CI_API_V4_URL GITLAB_TOKEN
	SERVER_PID=
	LOG="$BATS_TEST_TMPDIR/requests.log"
}

teardown() {
	stop_server
}

# start_server [options of forge-server.py]
start_server() {
	rm -f "$BATS_TEST_TMPDIR/port" "$LOG"
	FORGE_TOKEN="$TOKEN" python3 "$TOP/tests/cli/forge-server.py" \
		--port-file "$BATS_TEST_TMPDIR/port" --log "$LOG" "$@" 3>&- &
	SERVER_PID=$!
	for _ in $(seq 100); do
		[ -s "$BATS_TEST_TMPDIR/port" ] && break
		sleep 0.05
	done
	[ -s "$BATS_TEST_TMPDIR/port" ] || fail "the stand-in server did not start"
	PORT=$(cat "$BATS_TEST_TMPDIR/port")
	API="http://127.0.0.1:$PORT"
}

stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}

# Field $2 of request line $1 (1-based) of the log.
field() {
	sed -n "${1}p" "$LOG" | python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(v if isinstance(v, str) else json.dumps(v))' "$2"
}

requests() {
	[ -f "$LOG" ] && wc -l <"$LOG" | tr -d ' ' || echo 0
}

# The token must be in no output and no file the run could have written.
no_token_anywhere() {
	if [[ "$output$stderr" == *"$TOKEN"* ]]; then
		fail "the token was printed"
	fi
	if grep -rlF -- "$TOKEN" "$BATS_TEST_TMPDIR" "$REPO/.git" 2>/dev/null; then
		fail "the token was written to a file"
	fi
}

gh_post() {
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review main...HEAD \
		--post --forge github --project octo/kernels --pr 7 \
		--api-url "$API" "$@"
}

@test "github: the first post creates the comment, the second updates it" {
	start_server
	gh_post
	assert_success
	[ -z "$stderr" ]
	assert_output "created the review on octo/kernels#7: https://github.example/octo/kernels/pull/7#issuecomment-1001"
	[ "$(requests)" = 2 ]
	assert_equal "$(field 1 method) $(field 1 path)" \
		"GET /repos/octo/kernels/issues/7/comments?per_page=100"
	assert_equal "$(field 2 method) $(field 2 path)" \
		"POST /repos/octo/kernels/issues/7/comments"
	for i in 1 2; do
		assert_equal "$(field $i credentials)" ok
		assert_equal "$(field $i accept)" "application/vnd.github+json"
		assert_equal "$(field $i api_version)" "2022-11-28"
		[[ "$(field $i user_agent)" == git-kopt/* ]]
	done
	assert_equal "$(field 2 content_type)" "application/json"
	# the body is the review, behind the hidden marker
	field 2 body | python3 -c 'import json,sys; print(json.load(sys.stdin)["body"], end="")' >posted.md
	git kopt review main...HEAD >review.md
	assert_equal "$(cat posted.md)" "$(printf '<!-- git-kopt review -->\n'; cat review.md)"

	# a new push: the same comment is edited, no second one appears
	echo "// more" >>docs/kernels/mla-decode.md
	git commit -q -a --no-verify -m "Note more"
	gh_post
	assert_success
	assert_output "updated the review on octo/kernels#7: https://github.example/octo/kernels/pull/7#issuecomment-1001"
	[ "$(requests)" = 4 ]
	assert_equal "$(field 3 method)" GET
	assert_equal "$(field 4 method) $(field 4 path)" \
		"PATCH /repos/octo/kernels/issues/comments/1001"
	# nothing changed since: found, and left alone
	gh_post
	assert_success
	assert_output "unchanged the review on octo/kernels#7: https://github.example/octo/kernels/pull/7#issuecomment-1001"
	[ "$(requests)" = 5 ]
	rm posted.md review.md
	no_token_anywhere
}

@test "github: comments of other people are left alone" {
	cat >"$BATS_TEST_TMPDIR/seed.json" <<-'EOF'
	[{"id": 11, "body": "LGTM"},
	 {"id": 12, "body": "> <!-- git-kopt review -->\n> quoted by someone"},
	 {"id": 13, "body": "<!-- git-kopt review -->\nold review"}]
	EOF
	start_server --seed "$BATS_TEST_TMPDIR/seed.json"
	gh_post
	assert_success
	assert_output --partial "updated the review on octo/kernels#7"
	assert_equal "$(field 2 method) $(field 2 path)" \
		"PATCH /repos/octo/kernels/issues/comments/13"
	no_token_anywhere
}

@test "github: the comment is found on a later page" {
	python3 -c 'import json; print(json.dumps([{"id": i, "body": "c%d" % i} for i in range(1, 8)] + [{"id": 99, "body": "<!-- git-kopt review -->\nold"}]))' \
		>"$BATS_TEST_TMPDIR/seed.json"
	start_server --seed "$BATS_TEST_TMPDIR/seed.json" --page-size 3
	gh_post
	assert_success
	[ "$(requests)" = 4 ]
	assert_equal "$(field 3 path)" \
		"/repos/octo/kernels/issues/7/comments?page=3&per_page=100"
	assert_equal "$(field 4 method) $(field 4 path)" \
		"PATCH /repos/octo/kernels/issues/comments/99"
}

@test "github: everything from the Actions environment" {
	start_server
	printf '{"action": "synchronize", "number": 7, "pull_request": {"number": 7}}\n' \
		>"$BATS_TEST_TMPDIR/event.json"
	GITHUB_ACTIONS=true GITHUB_REPOSITORY=octo/kernels \
	GITHUB_EVENT_PATH="$BATS_TEST_TMPDIR/event.json" GITHUB_API_URL="$API/" \
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review main...HEAD --post
	assert_success
	assert_output --partial "created the review on octo/kernels#7"
	assert_equal "$(field 1 path)" "/repos/octo/kernels/issues/7/comments?per_page=100"
	# a push event has no pull request
	printf '{"ref": "refs/heads/main"}\n' >"$BATS_TEST_TMPDIR/event.json"
	GITHUB_ACTIONS=true GITHUB_REPOSITORY=octo/kernels \
	GITHUB_EVENT_PATH="$BATS_TEST_TMPDIR/event.json" GITHUB_API_URL="$API" \
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review main...HEAD --post
	assert_failure 128
	assert_equal "$stderr" "error: no pull request to post to; give --pr <number> (in GitHub Actions, run on pull_request events)"
	no_token_anywhere
}

@test "gitlab: notes of the merge request, from the CI environment" {
	start_server
	GITLAB_CI=true CI_PROJECT_ID=42 CI_MERGE_REQUEST_IID=9 \
	CI_API_V4_URL="$API/api/v4" GITLAB_TOKEN=$TOKEN \
		run --separate-stderr git kopt review main...HEAD --post
	assert_success
	assert_output "created the review on 42!9"
	assert_equal "$(field 1 method) $(field 1 path)" \
		"GET /api/v4/projects/42/merge_requests/9/notes?per_page=100&sort=asc&order_by=created_at"
	assert_equal "$(field 2 method) $(field 2 path)" \
		"POST /api/v4/projects/42/merge_requests/9/notes"
	assert_equal "$(field 1 credentials)" ok
	assert_equal "$(field 2 credentials)" ok
	assert_equal "$(field 2 accept)" "application/json"
	echo "// more" >>docs/kernels/mla-decode.md
	git commit -q -a --no-verify -m "Note more"
	GITLAB_CI=true CI_PROJECT_ID=42 CI_MERGE_REQUEST_IID=9 \
	CI_API_V4_URL="$API/api/v4" GITLAB_TOKEN=$TOKEN \
		run --separate-stderr git kopt review main...HEAD --post
	assert_success
	assert_output "updated the review on 42!9"
	assert_equal "$(field 4 method) $(field 4 path)" \
		"PUT /api/v4/projects/42/merge_requests/9/notes/1001"
	no_token_anywhere
}

@test "gitlab: a project path is escaped, a named token variable is used" {
	start_server
	MY_BOT_TOKEN=$TOKEN run --separate-stderr git kopt review main...HEAD \
		--post --forge gitlab --project group/sub/kernels --pr 3 \
		--api-url "$API/api/v4" --token-env MY_BOT_TOKEN
	assert_success
	assert_output "created the review on group/sub/kernels!3"
	assert_equal "$(field 2 path)" \
		"/api/v4/projects/group%2Fsub%2Fkernels/merge_requests/3/notes"
	no_token_anywhere
}

@test "retries: 502 then success; 429 with Retry-After is waited for" {
	start_server --fail 2:502
	gh_post
	assert_success
	assert_output --partial "created the review"
	[ "$(requests)" = 4 ]
	stop_server
	start_server --fail 1:429:1
	SECONDS=0
	gh_post
	assert_success
	[ "$(requests)" = 3 ]
	[ "$SECONDS" -ge 1 ]
	no_token_anywhere
}

@test "a refused token: one line naming the variable, never the token" {
	start_server
	GITHUB_TOKEN=ghp_wrong_but_also_secret_987654321 run --separate-stderr \
		git kopt review main...HEAD --post --forge github \
		--project octo/kernels --pr 7 --api-url "$API"
	assert_failure 128
	assert_output ""
	assert_equal "$stderr" "error: GET $API/repos/octo/kernels/issues/7/comments?per_page=100: 401 Unauthorized: the token in GITHUB_TOKEN was refused (Bad credentials)"
	[ "$(requests)" = 1 ]
	[[ "$stderr" != *ghp_wrong* ]]
}

@test "a missing pull request: 404 in one line" {
	start_server
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review main...HEAD \
		--post --forge github --project octo/kernels --pr 7 \
		--api-url "$API/nothing-here"
	assert_failure 128
	assert_equal "$stderr" "error: GET $API/nothing-here/repos/octo/kernels/issues/7/comments?per_page=100: 404 Not Found: no such project or number, or the token cannot see it (Not Found)"
	no_token_anywhere
}

@test "nobody listening: a transport error after the retries" {
	start_server
	stop_server
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review main...HEAD \
		--post --forge github --project octo/kernels --pr 7 --api-url "$API"
	assert_failure 128
	[[ "$stderr" == "error: GET $API/repos/octo/kernels/issues/7/comments?per_page=100: "*"(after 4 attempts)" ]] ||
		fail "stderr: $stderr"
	no_token_anywhere
}

@test "--dry-run prints the requests, token masked, and sends nothing" {
	start_server
	gh_post --dry-run
	assert_success
	[ "$(requests)" = 0 ]
	assert_line --index 0 "GET $API/repos/octo/kernels/issues/7/comments?per_page=100"
	assert_line "Authorization: Bearer ***"
	assert_line "# when no comment starts with the marker (else PATCH $API/repos/octo/kernels/issues/comments/<id>):"
	assert_line "POST $API/repos/octo/kernels/issues/7/comments"
	assert_output --partial '{"body":"<!-- git-kopt review -->\n## git kopt review: '
	no_token_anywhere
	# without a token it still shows what would be sent
	run --separate-stderr git kopt review main...HEAD --post --dry-run \
		--forge github --project octo/kernels --pr 7 --api-url "$API"
	assert_success
	refute_line --partial "Authorization"
	assert_line "# no token in GITHUB_TOKEN: posting would fail"
}

@test "bad settings: one line each, exit 128 or 129" {
	run --separate-stderr git kopt review --post --forge github --project octo/kernels --pr 7
	assert_failure 128
	assert_equal "$stderr" "error: no token in GITHUB_TOKEN; export it, or name another variable with --token-env"
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review --post
	assert_failure 128
	assert_equal "$stderr" "error: no forge to post to; give --forge github or --forge gitlab (in GitHub Actions or GitLab CI it is found alone)"
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review --post --forge bitbucket
	assert_failure 128
	assert_equal "$stderr" "error: unknown forge 'bitbucket'; give --forge github or --forge gitlab"
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review --post --forge github --project octo --pr 7
	assert_failure 128
	assert_equal "$stderr" "error: bad project 'octo'; expected <owner>/<name>"
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review --post --forge github --project octo/k --pr 7x
	assert_failure 128
	assert_equal "$stderr" "error: bad pull request number '7x'"
	GITHUB_TOKEN=$TOKEN run --separate-stderr git kopt review --post --forge github --project octo/k --pr 7 --api-url ftp://x
	assert_failure 128
	assert_equal "$stderr" "error: bad API address; give --api-url an http or https URL"
	run --separate-stderr git kopt review --dry-run
	assert_failure 129
	[[ "$stderr" == "error: --dry-run, --forge, --project, --pr, --api-url and --token-env go with --post"$'\n'usage:* ]] ||
		fail "stderr: $stderr"
	run --separate-stderr git kopt review --post --json
	assert_failure 129
	[[ "$stderr" == "error: --post posts Markdown; drop --json"$'\n'usage:* ]] ||
		fail "stderr: $stderr"
}

# start_proxy: the forwarding proxy stand-in (tests/cli/http-proxy.py)
start_proxy() {
	python3 "$TOP/tests/cli/http-proxy.py" \
		--port-file "$BATS_TEST_TMPDIR/proxy-port" \
		--log "$BATS_TEST_TMPDIR/proxy.log" 3>&- &
	PROXY_PID=$!
	for _ in $(seq 100); do
		[ -s "$BATS_TEST_TMPDIR/proxy-port" ] && break
		sleep 0.05
	done
	[ -s "$BATS_TEST_TMPDIR/proxy-port" ] || fail "the proxy did not start"
	PROXY="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/proxy-port")"
}

@test "a proxy from the environment carries every request; no_proxy bypasses it" {
	start_server
	start_proxy
	http_proxy=$PROXY no_proxy= gh_post
	kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true
	assert_success
	assert_output --partial "created the review on octo/kernels#7"
	run cat "$BATS_TEST_TMPDIR/proxy.log"
	assert_line --index 0 "{\"method\": \"GET\", \"url\": \"$API/repos/octo/kernels/issues/7/comments?per_page=100\", \"absolute\": true}"
	assert_line --index 1 "{\"method\": \"POST\", \"url\": \"$API/repos/octo/kernels/issues/7/comments\", \"absolute\": true}"
	[ "$(requests)" = 2 ]
	# a proxy that is not there fails with one line; no_proxy goes direct
	http_proxy=http://127.0.0.1:9 no_proxy= gh_post
	assert_failure 128
	[[ $stderr == "error: GET $API/repos/octo/kernels/issues/7/comments?per_page=100: Failed to connect to 127.0.0.1 port 9 "* ]] ||
		fail "stderr: $stderr"
	[ "$(printf '%s\n' "$stderr" | wc -l)" = 1 ] || fail "stderr: $stderr"
	http_proxy=http://127.0.0.1:9 no_proxy=127.0.0.1 gh_post
	assert_success
	no_token_anywhere
}

@test "https: the CA from CURL_CA_BUNDLE or SSL_CERT_FILE is trusted, no other" {
	command -v openssl >/dev/null || fail "openssl missing (tools/install-deps installs it)"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 \
		-keyout "$BATS_TEST_TMPDIR/key.pem" -out "$BATS_TEST_TMPDIR/cert.pem" 2>/dev/null
	start_server --tls "$BATS_TEST_TMPDIR/cert.pem" "$BATS_TEST_TMPDIR/key.pem"
	API="https://127.0.0.1:$PORT"
	# not trusted: one line naming the certificate problem, nothing sent
	CURL_CA_BUNDLE= SSL_CERT_FILE=/dev/null SSL_CERT_DIR=/nonexistent gh_post
	assert_failure 128
	[[ $stderr == error:*[Cc]ertificate* || $stderr == error:*SSL* ]] || fail "stderr: $stderr"
	[ "$(requests)" = 0 ]
	CURL_CA_BUNDLE="$BATS_TEST_TMPDIR/cert.pem" gh_post
	assert_success
	assert_output --partial "created the review on octo/kernels#7"
	CURL_CA_BUNDLE= SSL_CERT_FILE="$BATS_TEST_TMPDIR/cert.pem" gh_post
	assert_success
	assert_output --partial "unchanged the review on octo/kernels#7"
	no_token_anywhere
}

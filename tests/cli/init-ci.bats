#!/usr/bin/env bats
# git kopt init --ci github|gitlab: the workflow that runs check on each
# pull request and posts the review.

load helper

setup() {
	setup_repo
}

# The YAML as JSON, through a real YAML parser (python3-yaml).
yaml_json() {
	python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$1"
}

@test "github: a workflow on pull requests that checks and posts" {
	run --separate-stderr git kopt init --ci github
	assert_success
	assert_line "created: .github/workflows/kopt.yml"
	f=.github/workflows/kopt.yml
	cmp "$f" "$TOP/templates/ci/github/.github/workflows/kopt.yml"
	yaml_json "$f" >wf.json
	python3 - wf.json <<-'PY'
	import json, sys
	wf = json.load(open(sys.argv[1]))
	# PyYAML reads the key "on" as True
	on = wf.get("on", wf.get("true"))
	assert "pull_request" in on, on
	assert wf["permissions"]["issues"] == "write"
	steps = wf["jobs"]["kopt"]["steps"]
	runs = [s.get("run", "") for s in steps]
	assert steps[0]["uses"].startswith("actions/checkout@")
	assert steps[0]["with"]["fetch-depth"] == 0
	assert any('git kopt check "origin/${{ github.base_ref }}..HEAD"' in r for r in runs)
	post = [s for s in steps if "--post" in s.get("run", "")][0]
	assert post["env"]["GITHUB_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
	assert "review" in post["run"]
	PY
	rm wf.json
	# a second run changes nothing; a changed workflow is kept
	run --separate-stderr git kopt init --ci github
	assert_success
	assert_output "already initialised: nothing to do"
	echo "# ours" >>"$f"
	run --separate-stderr git kopt init --ci github
	assert_success
	assert_line "kept: .github/workflows/kopt.yml"
	tail -n 1 "$f" | grep -qx "# ours"
}

@test "github: the commands the workflow runs exist with those options" {
	git kopt init -q --ci github
	git kopt check -h | grep -q "usage: git kopt check"
	git kopt review -h | grep -q -- "--post"
}

@test "gitlab: the job file and the include" {
	run --separate-stderr git kopt init --ci gitlab
	assert_success
	assert_line "created: .gitlab/kopt.yml"
	assert_line "created: .gitlab-ci.yml"
	[ -z "$stderr" ]
	yaml_json .gitlab-ci.yml | grep -qF '{"include": [{"local": ".gitlab/kopt.yml"}]}'
	yaml_json .gitlab/kopt.yml >job.json
	python3 - job.json <<-'PY'
	import json, sys
	job = json.load(open(sys.argv[1]))["kopt"]
	assert job["rules"][0]["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"'
	assert job["variables"]["GIT_DEPTH"] == "0"
	assert any("git kopt check" in s for s in job["script"])
	assert any("--post" in s for s in job["after_script"])
	PY
	rm job.json
}

@test "gitlab: a pipeline of the project's own is kept, with a hint" {
	printf 'build:\n  script: [make]\n' >.gitlab-ci.yml
	run --separate-stderr git kopt init --ci gitlab
	assert_success
	assert_line "created: .gitlab/kopt.yml"
	assert_line "kept: .gitlab-ci.yml"
	assert_equal "$stderr" "hint: .gitlab-ci.yml is your own: add git kopt's job to it with
hint:   include:
hint:     - local: .gitlab/kopt.yml
hint: files changed or deleted by hand were left as they are; 'git kopt init --force' restores them"
	printf 'build:\n  script: [make]\n' | cmp - .gitlab-ci.yml
}

@test "--ci takes github or gitlab" {
	run --separate-stderr git kopt init --ci jenkins
	assert_failure 129
	[[ "$stderr" == "error: --ci takes github or gitlab, not 'jenkins'"* ]]
	[ ! -e .kopt ]
}

#!/usr/bin/env python3
"""A loopback stand-in for the parts of the GitHub and GitLab REST APIs
that 'git kopt review --post' uses: the issue comments of a pull request
(list, create, edit) and the notes of a merge request (list, create,
edit), with their documented paths, headers, status codes and JSON.

It checks what a real forge checks (the token, the Accept and
Content-Type headers, a JSON body with a string "body") and logs every
request as one JSON line: method, path, the headers that matter and the
body.  The token is never logged: the log says whether the credentials
matched ("ok") or not ("wrong", "none").

    FORGE_TOKEN=T forge-server.py --port-file F --log L
                    [--fail N:STATUS[:RETRY_AFTER]] [--page-size K]
                    [--seed FILE]

--fail answers the first N requests with STATUS (and Retry-After);
--page-size caps a page and adds Link headers as GitHub and GitLab do;
--seed FILE holds a JSON list of comments already on every pull request.
"""
import argparse
import ssl
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit, parse_qs

ARGS = None
STATE = {"comments": {}, "next_id": 1000, "requests": 0}


def log(entry):
    with open(ARGS.log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "forge-stand-in/1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, obj=None, headers=None):
        data = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def credentials(self, forge):
        if forge == "github":
            got = self.headers.get("Authorization")
            want = "Bearer " + ARGS.token
        else:
            got = self.headers.get("PRIVATE-TOKEN")
            want = ARGS.token
        if got is None:
            return "none"
        return "ok" if got == want else "wrong"

    def handle_any(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        gh = re.fullmatch(r"/api/v3/repos/([^/]+/[^/]+)/issues/(\d+)/comments",
                          url.path) or re.fullmatch(
                              r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", url.path)
        gh_edit = re.fullmatch(r"(?:/api/v3)?/repos/([^/]+/[^/]+)/issues/comments/(\d+)",
                               url.path)
        gl = re.fullmatch(r"/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes",
                          url.path)
        gl_edit = re.fullmatch(
            r"/api/v4/projects/([^/]+)/merge_requests/(\d+)/notes/(\d+)", url.path)
        forge = "github" if (gh or gh_edit) else "gitlab" if (gl or gl_edit) else None
        cred = self.credentials(forge) if forge else "none"
        entry = {
            "method": method,
            "path": self.path,
            "forge": forge,
            "credentials": cred,
            "accept": self.headers.get("Accept"),
            "user_agent": self.headers.get("User-Agent"),
            "content_type": self.headers.get("Content-Type"),
            "api_version": self.headers.get("X-GitHub-Api-Version"),
            "body": raw.decode("utf-8", "replace"),
        }
        log(entry)
        STATE["requests"] += 1

        if ARGS.fail:
            n, status, *after = ARGS.fail.split(":")
            if STATE["requests"] <= int(n):
                hdrs = {"Retry-After": after[0]} if after else {}
                return self.reply(int(status), {"message": "try later"}, hdrs)
        if forge is None:
            return self.reply(404, {"message": "Not Found"})
        if cred != "ok":
            msg = "Bad credentials" if forge == "github" else "401 Unauthorized"
            return self.reply(401, {"message": msg})
        if forge == "github" and self.headers.get("Accept") != "application/vnd.github+json":
            return self.reply(415, {"message": "wrong Accept"})
        if not (self.headers.get("User-Agent") or "").startswith("git-kopt/"):
            return self.reply(403, {"message": "a User-Agent is required"})

        if forge == "github":
            key = ("github", (gh or gh_edit).group(1),
                   gh.group(2) if gh else None)
        else:
            key = ("gitlab", (gl or gl_edit).group(1), (gl or gl_edit).group(2))

        if method in ("POST", "PATCH", "PUT"):
            if self.headers.get("Content-Type") != "application/json":
                return self.reply(415, {"message": "Content-Type must be JSON"})
            try:
                body = json.loads(raw)
            except ValueError:
                return self.reply(400, {"message": "Problems parsing JSON"})
            if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                return self.reply(422, {"message": "Validation Failed",
                                        "errors": [{"message": "body is missing"}]})

        if (gh or gl) and method == "GET":
            items = self.comments(key)
            per = int(query.get("per_page", ["30"])[0])
            if ARGS.page_size:
                per = min(per, ARGS.page_size)
            page = int(query.get("page", ["1"])[0])
            chunk = items[(page - 1) * per:page * per]
            hdrs = {}
            if page * per < len(items):
                q = dict((k, v[0]) for k, v in query.items())
                q["page"] = str(page + 1)
                nxt = "http://%s:%d%s?%s" % (
                    self.server.server_address[0], self.server.server_address[1],
                    url.path, "&".join("%s=%s" % kv for kv in sorted(q.items())))
                hdrs["Link"] = '<%s>; rel="next"' % nxt
            return self.reply(200, chunk, hdrs)
        if (gh or gl) and method == "POST":
            STATE["next_id"] += 1
            c = self.make(key, STATE["next_id"], body["body"])
            self.comments(key).append(c)
            return self.reply(201, c)
        if gh_edit and method == "PATCH":
            cid = int(gh_edit.group(2))
            for k, items in STATE["comments"].items():
                if k[0] == "github" and k[1] == key[1]:
                    for c in items:
                        if c["id"] == cid:
                            c["body"] = body["body"]
                            return self.reply(200, c)
            return self.reply(404, {"message": "Not Found"})
        if gl_edit and method == "PUT":
            nid = int(gl_edit.group(3))
            for c in self.comments(key):
                if c["id"] == nid:
                    c["body"] = body["body"]
                    return self.reply(200, c)
            return self.reply(404, {"message": "404 Not found"})
        return self.reply(404, {"message": "Not Found"})

    def comments(self, key):
        if key not in STATE["comments"]:
            seed = []
            if ARGS.seed:
                with open(ARGS.seed, encoding="utf-8") as f:
                    seed = json.load(f)
            STATE["comments"][key] = [self.make(key, c["id"], c["body"]) for c in seed]
        return STATE["comments"][key]

    def make(self, key, cid, body):
        if key[0] == "github":
            return {"id": cid, "body": body, "user": {"login": "bot"},
                    "html_url": "https://github.example/%s/pull/%s#issuecomment-%d"
                    % (key[1], key[2], cid)}
        return {"id": cid, "body": body, "system": False,
                "author": {"username": "bot"}, "noteable_iid": int(key[2])}

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_PUT(self):
        self.handle_any("PUT")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--fail")
    p.add_argument("--page-size", type=int, default=0)
    p.add_argument("--seed")
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"),
                   help="serve HTTPS with this certificate and key")
    ARGS = p.parse_args()
    ARGS.token = os.environ["FORGE_TOKEN"]
    srv = HTTPServer(("127.0.0.1", 0), Handler)
    if ARGS.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.tls[0], ARGS.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A forwarding HTTP proxy on loopback for the tests: it takes requests
in absolute form (GET http://host:port/path), logs the method and URL of
each as one JSON line (never a header, so no credential reaches the log),
forwards them to their origin and relays the answer.  The port it
listens on is written to --port-file."""
import argparse
import http.client
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import urlsplit

ARGS = None


class Proxy(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def relay(self):
        url = urlsplit(self.path)
        with open(ARGS.log, "a") as f:
            f.write(json.dumps({"method": self.command, "url": self.path,
                                "absolute": bool(url.scheme)}) + "\n")
        if url.scheme != "http" or url.hostname != "127.0.0.1":
            self.send_error(502, "only http://127.0.0.1 is forwarded")
            return
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("proxy-connection", "connection",
                                        "keep-alive")}
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        path = url.path + ("?" + url.query if url.query else "")
        conn.request(self.command, path, body=body, headers=headers)
        res = conn.getresponse()
        data = res.read()
        self.send_response(res.status)
        for k, v in res.getheaders():
            if k.lower() not in ("transfer-encoding", "connection",
                                 "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_POST = do_PATCH = do_PUT = relay


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    ARGS = p.parse_args()
    srv = HTTPServer(("127.0.0.1", 0), Proxy)
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

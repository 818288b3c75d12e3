# SPDX-License-Identifier: Apache-2.0
"""A registry that answers a different digest than it stored: plain HTTP on 127.0.0.1, every
request passed on to the real registry (HTTPS, verified with the test's CA), but a manifest PUT is
answered with another Docker-Content-Digest, and a manifest served by digest comes back with one
byte more (so it no longer hashes to the digest asked for). For tests/e2e/push.sh.
   lying_registry.py PORT UPSTREAM_HOST:PORT CA_FILE"""
import http.client
import http.server
import ssl
import sys

PORT, UPSTREAM, CA = int(sys.argv[1]), sys.argv[2], sys.argv[3]
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
FAKE = "sha256:" + "e" * 64


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))

    def forward(self):
        data = self.body()
        host, port = UPSTREAM.split(":")
        conn = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(cafile=CA))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn.request(self.command, self.path, body=data if data else None, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        manifest = "/manifests/" in self.path
        if manifest and self.command == "GET" and "/manifests/sha256:" in self.path and resp.status == 200:
            payload += b" "
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() in HOP:
                continue
            if k.lower() == "docker-content-digest" and manifest and self.command == "PUT":
                v = FAKE
            self.send_header(k, v)
        length = resp.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(payload))
        self.send_header("Content-Length", length)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        conn.close()

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = forward

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s %s\n" % (getattr(self, "command", "-"), getattr(self, "path", "-"), fmt % args))
        sys.stderr.flush()


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()

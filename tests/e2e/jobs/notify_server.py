# SPDX-License-Identifier: Apache-2.0
"""The receiving end of jobs.notify for the e2e tests: an HTTP server on 127.0.0.1 that appends
each POSTed body, with its path, as one JSON line to a file. A path starting with /slow waits
longer than any notify timeout the tests use before it answers.

    python3 notify_server.py PORT_FILE EVENTS_FILE
"""
import json
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

port_file, events_file = sys.argv[1], sys.argv[2]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/slow"):
            time.sleep(30)
        with lock, open(events_file, "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": self.path, "content_type": self.headers.get("Content-Type"),
                                "body": body.decode("utf-8", "replace")}) + "\n")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w", encoding="utf-8") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402
os.replace(port_file + ".tmp", port_file)
server.serve_forever()

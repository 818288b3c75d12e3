#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""slurmrestd as Slurm 23.x-25.x serve it, for the API versions the machine's own slurmrestd
(Debian 12's 22.05: v0.0.36-v0.0.38) cannot (tests/e2e/slurmrest_versions.sh).

On 127.0.0.1:PORT: GET /openapi/v3 lists the job paths of VERSIONS (the shape of a real
server's document: absolute paths, servers "/"); POST /slurm/V/job/submit keeps the body in
DIR/submit-V.json and answers DIR/answer-submit.json (recorded answers, from
tests/data/slurmrestd/recorded); GET /slurm/V/jobs[/] answers DIR/answer-jobs.json. A request
without the two X-SLURM-USER headers gets 401, a version not served 404.
Usage: fake_slurmrestd.py PORT DIR VERSION[,VERSION...]
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
DIR = sys.argv[2]
VERSIONS = sys.argv[3].split(",")


def openapi():
    paths = {}
    for v in VERSIONS:
        op = "slurm_v" + v.replace("v", "").replace(".", "")
        paths[f"/slurm/{v}/job/submit"] = {"post": {"tags": ["slurm"], "operationId": op + "_post_job_submit"}}
        paths[f"/slurm/{v}/jobs/"] = {"get": {"tags": ["slurm"], "operationId": op + "_get_jobs"}}
        paths[f"/slurmdb/{v}/jobs/"] = {"get": {"tags": ["slurmdb"]}}
    return {"openapi": "3.0.3", "info": {"title": "Slurm REST API", "version": "Slurm-25.11.0"},
            "servers": [{"url": "/"}], "paths": paths, "components": {"schemas": {}}}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        if self.headers.get("X-SLURM-USER-NAME") and self.headers.get("X-SLURM-USER-TOKEN"):
            return True
        self.answer(401, {"errors": [{"error": "Authentication failure", "error_number": 1007}]})
        return False

    def version(self, kind):
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) >= 3 and parts[0] == "slurm" and parts[1] in VERSIONS and "/".join(parts[2:]) == kind:
            return parts[1]
        self.answer(404, {"errors": [{"error": "Unable find requested URL", "error_number": 9001}]})
        return None

    def recorded(self, name):
        with open(os.path.join(DIR, name), "rb") as f:
            return f.read()

    def do_GET(self):
        if not self.authorized():
            return
        if self.path.split("?")[0] in ("/openapi/v3", "/openapi", "/openapi.json"):
            return self.answer(200, openapi())
        if self.version("jobs"):
            self.answer(200, self.recorded("answer-jobs.json"))

    def do_POST(self):
        if not self.authorized():
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        v = self.version("job/submit")
        if v:
            with open(os.path.join(DIR, f"submit-{v}.json"), "wb") as f:
                f.write(body)
            status = 500 if os.path.exists(os.path.join(DIR, "fail")) else 200
            self.answer(status, self.recorded("answer-submit.json"))


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()

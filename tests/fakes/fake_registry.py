#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A registry that misbehaves on purpose, for envpin's resolver tests (registry_fake.sh).

Serves the OCI distribution API v2 subset envpin uses on 127.0.0.1:PORT. The repository name
picks the behaviour:
  ok/multi    an OCI index with linux/amd64 and linux/arm64 images
  ok/single   one linux/amd64 Docker v2 manifest
  armonly/img one linux/arm64 manifest
  auth/img    needs a bearer token from /token (Docker Hub style challenge)
  denied/img  the token service refuses
  broken/img  the manifest is not JSON
  lying/img   Docker-Content-Digest does not match the bytes
  flaky/img   429 twice (Retry-After: 0), then serves ok/single's manifest
For envpin mirror, an amd64 image with a 64 KiB layer:
  auth/layers   behind the bearer token, as auth/img
  tampered/img  its layer blob is served with other bytes (the same length)
  oversize/img  its layer blob is served with a megabyte more than the manifest says
Usage: fake_registry.py PORT
"""
import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
BLOBS = {}
COUNTS = {}


def add(obj):
    data = json.dumps(obj, sort_keys=True).encode()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    BLOBS[digest] = data
    return digest, len(data)


def image(arch):
    config, size = add({"architecture": arch, "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}})
    return add({"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": config, "size": size},
                "layers": []})


LAYER = bytes(range(256)) * 256
LAYER_DIGEST = "sha256:" + hashlib.sha256(LAYER).hexdigest()
BLOBS[LAYER_DIGEST] = LAYER


def image_with_layer(arch):
    config, size = add({"architecture": arch, "os": "linux",
                        "rootfs": {"type": "layers", "diff_ids": [LAYER_DIGEST]}})
    return add({"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": config, "size": size},
                "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "digest": LAYER_DIGEST,
                            "size": len(LAYER)}]})


LAYERED, _ = image_with_layer("amd64")
AMD64, AMD64_SIZE = image("amd64")
ARM64, ARM64_SIZE = image("arm64")
INDEX, _ = add({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [
    {"mediaType": "application/vnd.docker.distribution.manifest.v2+json", "digest": AMD64, "size": AMD64_SIZE,
     "platform": {"architecture": "amd64", "os": "linux"}},
    {"mediaType": "application/vnd.docker.distribution.manifest.v2+json", "digest": ARM64, "size": ARM64_SIZE,
     "platform": {"architecture": "arm64", "os": "linux", "variant": "v8"}}]})
TAGS = {"ok/multi": INDEX, "ok/single": AMD64, "armonly/img": ARM64, "auth/img": AMD64, "flaky/img": AMD64,
        "lying/img": AMD64, "auth/layers": LAYERED, "tampered/img": LAYERED, "oversize/img": LAYERED}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/token":
            return self.send(200, json.dumps({"token": "good-token"}).encode())
        if path == "/token-denied":
            return self.send(401, b'{"details":"access denied"}')
        if not path.startswith("/v2/"):
            return self.send(404)
        repo, _, kind_ref = path[4:].rpartition("/")
        repo, _, kind = repo.rpartition("/")
        ref = kind_ref
        if repo.startswith("auth/") and self.headers.get("Authorization") != "Bearer good-token":
            realm = f"http://127.0.0.1:{PORT}/token"
            return self.send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', {
                "WWW-Authenticate": f'Bearer realm="{realm}",service="fake",scope="repository:{repo}:pull"'})
        if repo.startswith("denied/"):
            realm = f"http://127.0.0.1:{PORT}/token-denied"
            return self.send(401, b"", {"WWW-Authenticate": f'Bearer realm="{realm}",service="fake"'})
        if repo.startswith("flaky/"):
            COUNTS[path] = COUNTS.get(path, 0) + 1
            if COUNTS[path] <= 2:
                return self.send(429, b'{"errors":[{"code":"TOOMANYREQUESTS"}]}', {"Retry-After": "0"})
        if repo.startswith("broken/") and kind == "manifests":
            body = b"<html>this is not a manifest"
            return self.send(200, body, {"Docker-Content-Digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                                         "Content-Type": "application/vnd.oci.image.manifest.v1+json"})
        # Every repository has the one tag "1"; anything else is addressed by digest.
        digest = ref if ref.startswith("sha256:") else (TAGS.get(repo, "") if ref == "1" else "")
        if digest not in BLOBS:
            return self.send(404, json.dumps({"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown",
                                                          "detail": {"Tag": ref}}]}).encode())
        body = BLOBS[digest]
        if kind == "blobs" and digest == LAYER_DIGEST:
            if repo.startswith("tampered/"):
                body = bytes(reversed(LAYER))
            if repo.startswith("oversize/"):
                body = LAYER + b"x" * 1000000
            return self.send(200, body, {"Docker-Content-Digest": digest, "Content-Type": "application/octet-stream"})
        media = json.loads(body).get("mediaType", "application/octet-stream")
        announced = "sha256:" + "0" * 64 if repo.startswith("lying/") else digest
        return self.send(200, body, {"Docker-Content-Digest": announced, "Content-Type": media})


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()

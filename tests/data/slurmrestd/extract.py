#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Reduces one of Slurm's recorded OpenAPI documents (GET /openapi/v3 of slurmrestd, as Slurm's own
# testsuite saved them: SchedMD/slurm@284c3b95f08a testsuite/python/data/openapi_specs/
# openapi_spec_v4X.json) to what envpin sends and reads: the job submission request, its
# response and the job list, with every schema they reference, and no descriptions (structure
# only: types, properties, enums, required keys). The result is a JSON Schema document that ajv
# checks envpin's requests and the recorded answers against (tests/e2e/slurmrest_versions.sh).
#   extract.py openapi_spec_v44.json v0.0.44 > v0.0.44.schema.json
import json
import sys

spec = json.load(open(sys.argv[1]))
version = sys.argv[2]
schemas = spec["components"]["schemas"]
roots = {
    "submit_request": f"{version}_job_submit_req",
    "submit_response": f"{version}_openapi_job_submit_response",
    "jobs_response": f"{version}_openapi_job_info_resp",
}


def strip(node):
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in ("description", "example", "summary") and isinstance(value, str):
                continue
            if key == "$ref":
                value = "#/definitions/" + value.rsplit("/", 1)[-1]
            out[key] = strip(value)
        return out
    if isinstance(node, list):
        return [strip(item) for item in node]
    return node


# slurmrestd ignores a key it does not know with a warning only ("Ignoring unknown field"): for
# envpin a key the server ignores is a setting silently lost, so every object schema that lists
# its properties refuses others here.
def closed(node):
    if isinstance(node, dict):
        out = {key: closed(value) for key, value in node.items()}
        if out.get("type") == "object" and "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [closed(item) for item in node]
    return node


def refs(node, found):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                found.add(value.rsplit("/", 1)[-1])
            else:
                refs(value, found)
    elif isinstance(node, list):
        for item in node:
            refs(item, found)


needed, todo = set(), list(roots.values())
while todo:
    name = todo.pop()
    if name in needed:
        continue
    needed.add(name)
    found = set()
    refs(schemas[name], found)
    todo.extend(found - needed)
paths = sorted(p for p in spec["paths"] if p.startswith(f"/slurm/{version}/"))
out = {
    "$comment": f"slurmrestd REST API {version}, reduced from Slurm's recorded OpenAPI document by extract.py",
    "paths": paths,
    "roots": {k: "#/definitions/" + v for k, v in roots.items()},
    "definitions": {name: closed(strip(schemas[name])) for name in sorted(needed)},
}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")

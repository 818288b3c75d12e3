// SPDX-License-Identifier: Apache-2.0
#include "manifest/keys.hpp"

#include <nlohmann/json.hpp>

#include <map>

namespace envpin::manifest {
namespace {

using S = KeyShape;

constexpr KeyDoc kKeys[] = {
    {"envpin", S::value, false, "the schema version: 1"},
    {"name", S::value, false, "the project's name: image, container and job names"},
    {"platforms", S::list, true, "linux/amd64 and/or linux/arm64 (default: linux/amd64)"},
    {"os", S::value, true, "ubuntu20.04, ubuntu22.04, ubuntu24.04, debian11, debian12 or debian13"},
    {"base", S::value, true, "an image to build on instead of the OS's (refused with cuda:)"},
    {"cuda", S::section, true, "the CUDA toolkit, chosen for the fleet"},
    {"cuda.version", S::value, true, "x.y, x.y.z or auto: the toolkit (auto: the newest the fleet runs)"},
    {"cuda.flavor", S::value, true,
     "base, runtime or devel: the nvidia/cuda image flavor (default: base with torch from pip, which brings the "
     "CUDA libraries; else runtime)"},
    {"cuda.cudnn", S::value, true, "true: the cuDNN image of the flavor"},
    {"cuda.gpus", S::list, true, "the fleet's GPUs, by product name or compute capability"},
    {"cuda.driver", S::value, true, "the fleet's lowest driver, e.g. '>=535.104.05'"},
    {"cuda.forward_compat", S::value, true, "true: an older driver branch runs a newer toolkit through cuda-compat"},
    {"cuda.repository", S::value, true, "a mirror of nvidia/cuda's tags"},
    {"cuda.require_check", S::value, true, "off: the image's NVIDIA_REQUIRE_CUDA start gate is disabled"},
    {"python", S::section, true, "the Python interpreter and packages"},
    {"python.version", S::value, true, "x.y or x.y.z"},
    {"python.packages", S::list, true, "PEP 508 requirements"},
    {"python.requirements", S::value, true, "a requirements file in the project, instead of packages"},
    {"python.index", S::value, true, "the package index URL"},
    {"python.extra_index", S::list, true, "more index URLs (a torch CUDA variant's)"},
    {"python.source", S::value, true, "auto or system (the OS's python3 and its python3-* apt packages)"},
    {"python.uv_image", S::value, true, "where the pinned uv comes from"},
    {"apt", S::list, true, "Debian packages, name or name=version"},
    {"env", S::value, false, "environment variables of the image and container"},
    {"secrets", S::list, false, "variable names passed from the caller at run time, never baked"},
    {"paths", S::value, false, "named paths the project uses, checked by check_env"},
    {"workdir", S::value, false, "the working directory in the container"},
    {"user", S::value, false, "the non-root user of the image (a name, or name and uid)"},
    {"user.name", S::value, false, "its name"},
    {"user.uid", S::value, false, "its uid"},
    {"context", S::section, false, "what enters the build context"},
    {"context.exclude", S::list, false, ".dockerignore patterns beyond .gitignore's"},
    {"context.allow_secrets", S::list, false, "secret-looking files let in on purpose"},
    {"context.include_gitignored", S::value, false, "true: what .gitignore excludes enters the context"},
    {"devcontainer", S::section, false, "the devcontainer.json settings"},
    {"devcontainer.extensions", S::list, false, "VS Code extension ids"},
    {"devcontainer.forward_ports", S::list, false, "ports to forward"},
    {"devcontainer.gpu", S::value, false, "required, optional or none"},
    {"jobs", S::section, false, "long jobs: envpin run, submit, resume"},
    {"jobs.checkpoints", S::value, false, "where checkpoints live (a path, or path/host/keep/pattern)"},
    {"jobs.checkpoints.path", S::value, false, "the directory in the container"},
    {"jobs.checkpoints.host", S::value, false, "the directory on the host; each job gets its own"},
    {"jobs.checkpoints.keep", S::value, false, "the newest N complete checkpoints kept"},
    {"jobs.checkpoints.pattern", S::value, false, "which files are checkpoints"},
    {"jobs.logs", S::value, false, "the host directory of the jobs' logs"},
    {"jobs.restart", S::value, false, "restarts after a failure: max and backoff"},
    {"jobs.restart.max", S::value, false, "how many restarts"},
    {"jobs.restart.backoff", S::value, false, "seconds before a restart"},
    {"jobs.resume", S::value, false, "the words appended to the command when resuming"},
    {"jobs.env", S::list, false, "more variables passed by name from the caller"},
    {"jobs.gpus", S::value, false, "all, or a count"},
    {"jobs.stop_timeout", S::value, false, "seconds between SIGTERM and SIGKILL"},
    {"jobs.slurm", S::section, false, "Slurm settings"},
    {"jobs.slurm.time", S::value, false, "the time limit, HH:MM:SS or D-HH:MM:SS"},
    {"jobs.slurm.warn", S::value, false, "seconds before the limit to signal the job"},
    {"jobs.slurm.partition", S::value, false, "the partition"},
    {"jobs.slurm.checkpoints", S::value, false, "shared storage every node sees"},
    {"jobs.launch", S::value, false, "none, torchrun or srun"},
    {"jobs.nodes", S::value, false, "nodes per job"},
    {"jobs.gpus_per_node", S::value, false, "GPUs per node, also the processes per node under torchrun"},
    {"jobs.notify", S::section, false, "notifications of a job's events"},
    {"jobs.notify.url", S::value, false, "the webhook URL"},
    {"jobs.notify.url_secret", S::value, false, "a variable holding the webhook URL"},
    {"jobs.notify.on", S::list, false, "the events (default: all)"},
    {"jobs.notify.timeout", S::value, false, "seconds a notification may take"},
    {"jobs.idle", S::section, false, "stopping a job whose GPUs sit idle"},
    {"jobs.idle.gpu_util_below", S::value, false, "the utilization that counts as idle, in percent"},
    {"jobs.idle.for", S::value, false, "how long it must last"},
    {"jobs.idle.every", S::value, false, "how often it is sampled"},
    {"jobs.idle.action", S::value, false, "stop or notify"},
    {"jobs.data", S::list, false, "host directories mounted for the job"},
    {"jobs.push", S::value, false, "where envpin push sends the job image with the project in it: REGISTRY/REPO[:TAG]"},
    {"jobs.kubernetes", S::section, false, "the job as a Kubernetes Job (.envpin/kubernetes.yaml)"},
    {"jobs.kubernetes.image", S::value, false,
     "the job image by digest, pushed with the project in it (default with jobs.push: envpin push's)"},
    {"jobs.kubernetes.command", S::list, false, "the program and its arguments"},
    {"jobs.kubernetes.name", S::value, false, "the Job's name (default: the project's name)"},
    {"jobs.kubernetes.namespace", S::value, false, "the namespace (default: the one kubectl uses)"},
    {"jobs.kubernetes.claim", S::value, false, "the PersistentVolumeClaim holding the checkpoints"},
    {"jobs.kubernetes.secret", S::value, false, "the Secret holding the secrets and jobs.env by name"},
    {"dev", S::section, false, "the development container of envpin dev (.envpin/dev.sh)"},
    {"dev.servers", S::list, false, "servers started with it, on the host's 127.0.0.1 only"},
    {"dev.idle_stop", S::value, false,
     "stop its servers (and kernels) after this long idle: no shell attached, no CPU, GPU or server output"},
    {"dev.servers.name", S::value, false, "the server's name: letters, digits, '-' and '_'"},
    {"dev.servers.kind", S::value, false,
     "jupyter, tensorboard or command (default: the command's program when it is jupyter or tensorboard, else "
     "command; no command: jupyter)"},
    {"dev.servers.port", S::value, false, "the port on the host's 127.0.0.1 (a busy one: the next free)"},
    {"dev.servers.command", S::list, false,
     "the program and its arguments; kind command: with {host} and {port}, and {token_file} if it takes one"},
    {"dev.servers.logdir", S::value, false, "tensorboard: the log directory, relative to the project"},
    {"outputs", S::section, false, "where generated files are written"},
    {"outputs.dockerfile", S::value, false, "the Dockerfile (default: Dockerfile)"},
    {"outputs.devcontainer", S::value, false, "the devcontainer.json"},
    {"outputs.check_env", S::value, false, "the check_env script"},
    {"outputs.dockerignore", S::value, false, "the .dockerignore"},
};

std::string_view parent_of(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

const std::map<std::string_view, std::vector<std::string_view>>& sections() {
  static const auto table = [] {
    std::map<std::string_view, std::vector<std::string_view>> out;
    for (const KeyDoc& k : kKeys) {
      const std::string_view parent = parent_of(k.path);
      out[parent].push_back(k.path.substr(parent.empty() ? 0 : parent.size() + 1));
    }
    return out;
  }();
  return table;
}

}  // namespace

std::span<const KeyDoc> manifest_keys() { return kKeys; }

std::span<const std::string_view> keys_in(std::string_view section) {
  const auto it = sections().find(section);
  if (it == sections().end()) return {};
  return it->second;
}

std::string json_schema() {
  using nlohmann::json;
  std::map<std::string, json> nodes;
  // Children first (the table lists parents first): each key's schema, then placed in its parent.
  for (auto it = std::rbegin(kKeys); it != std::rend(kKeys); ++it) {
    json& node = nodes[std::string(it->path)];
    node["description"] = std::string(it->doc);
    if (it->shape == KeyShape::list) node["type"] = {"array", "null"};  // an empty key is an empty list
    if (!keys_in(it->path).empty()) {
      // A mapping's keys are checked when it is a mapping; a short form (a path) passes as itself.
      json properties = json::object();
      for (std::string_view child : keys_in(it->path))
        properties[std::string(child)] = nodes[std::string(it->path) + "." + std::string(child)];
      // A list with keys below it (dev.servers) is a list of such mappings.
      json& target = it->shape == KeyShape::list ? node["items"] : node;
      target["properties"] = properties;
      target["additionalProperties"] = false;
      if (it->shape == KeyShape::list) target["type"] = "object";
      if (it->shape == KeyShape::section) node["type"] = {"object", "null"};
    }
  }
  json root = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
               {"title", "envpin.yaml"},
               {"description", "envpin's manifest: one pinned, verifiable environment for a GPU project"},
               {"type", "object"},
               {"required", {"envpin", "name"}},
               {"additionalProperties", false}};
  json properties = json::object();
  for (std::string_view key : keys_in("")) properties[std::string(key)] = nodes[std::string(key)];
  root["properties"] = properties;
  return root.dump(2) + "\n";
}

std::string manifest_markdown() {
  std::string out =
      "<!-- Written by `envpin schema --markdown` from tool/manifest/keys.cpp; a test keeps it current. -->\n"
      "# envpin.yaml keys\n\n"
      "Every key envpin.yaml accepts. *locked*: an input of `envpin lock` (changing it makes the lock stale; "
      "`envpin verify` says so). The JSON Schema editors use: `envpin schema`.\n\n"
      "| key | shape | locked | what it is |\n|---|---|---|---|\n";
  for (const KeyDoc& k : kKeys) {
    out += "| `" + std::string(k.path) + "` | ";
    out += k.shape == KeyShape::section ? "section" : k.shape == KeyShape::list ? "list" : "value";
    out += std::string(" | ") + (k.locked ? "yes" : "") + " | " + std::string(k.doc) + " |\n";
  }
  return out;
}

}  // namespace envpin::manifest

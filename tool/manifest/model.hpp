// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/error.hpp"
#include "manifest/requirement.hpp"

namespace envpin::manifest {

using diag::Location;

// A value together with where the user wrote it.
template <class T>
struct Located {
  T value{};
  Location where;
};

enum class Arch { amd64, arm64 };

struct Platform {
  Arch arch = Arch::amd64;
  std::string text() const { return arch == Arch::amd64 ? "linux/amd64" : "linux/arm64"; }
  // What `uname -m` prints on this platform.
  std::string machine() const { return arch == Arch::amd64 ? "x86_64" : "aarch64"; }
};

enum class CudaFlavor { base, runtime, devel };
enum class GpuRequirement { none, optional, required };

struct Cuda {
  Located<std::string> version;  // "12.4" or "12.4.1"
  Located<CudaFlavor> flavor{CudaFlavor::runtime, {}};
  Located<bool> cudnn{false, {}};
  std::vector<Located<std::string>> gpus;          // product names or capabilities
  Location gpus_where;                             // the list (or the cuda section when it is missing)
  std::optional<Located<std::string>> driver;      // the fleet's driver floor, "535.104.05"
  std::optional<Located<bool>> forward_compat;     // cuda.forward_compat: an older driver major through cuda-compat
  std::optional<Located<bool>> require_check;      // cuda.require_check: off sets NVIDIA_DISABLE_REQUIRE=1
  std::optional<Located<std::string>> repository;  // cuda.repository: a mirror of nvidia/cuda's tags
};

struct Python {
  Located<std::string> version;  // "3.11" or "3.11.9"
  std::vector<Located<Requirement>> packages;
  std::optional<Located<std::string>> requirements;     // path relative to the project
  std::vector<Located<Requirement>> requirement_lines;  // parsed from that file
  std::string requirements_bytes;                       // that file's bytes (the image copies them)
  std::optional<Located<std::string>> index;
  std::vector<Located<std::string>> extra_index;
  bool system = false;                           // python.source: system: the image's own python3 (from apt), in a venv
  std::optional<Located<std::string>> uv_image;  // python.uv_image: where the pinned uv comes from
  Location source_where;
};

struct AptPackage {
  std::string name;
  std::string version;  // empty: the base image's candidate
};

struct NamedValue {
  Located<std::string> name;
  Located<std::string> value;
};

struct User {
  Located<std::string> name{"dev", {}};
  Located<int> uid{1000, {}};
};

struct Devcontainer {
  std::vector<Located<std::string>> extensions;
  std::vector<Located<int>> forward_ports;
  Located<GpuRequirement> gpu{GpuRequirement::optional, {}};
};

// jobs.notify: run.sh POSTs a JSON event to the URL (literal, or read at run time from the
// caller's variable url_secret) for each event in `on`.
struct Notify {
  Location where;
  std::optional<Located<std::string>> url;
  std::optional<Located<std::string>> url_secret;
  std::vector<Located<std::string>> on;  // empty: every event
  Located<int> timeout{10, {}};          // seconds per attempt
};

// jobs.idle: the supervisor samples the job's GPUs every `every` seconds; when all of them stay
// below `below` percent for `window` seconds it stops the job (or only notifies).
struct IdleGuard {
  Location where;
  Located<int> below{10, {}};
  Located<int> window{600, {}};
  Located<int> every{60, {}};
  Located<std::string> action{"stop", {}};
};

// In a jobs.resume word: the newest complete checkpoint's path in the container.
inline constexpr std::string_view kCheckpointWord = "{checkpoint}";

// jobs.kubernetes: the same job as a Kubernetes Job (.envpin/kubernetes.yaml). Kubernetes has no
// caller to take a command from and no engine to build the image, so the manifest names both: the
// image by digest (pushed from the Dockerfile, with the project in it) and the command.
struct Kubernetes {
  Location where;
  // REPOSITORY@sha256:HEX; empty with jobs.push: the digest `envpin push` recorded.
  Located<std::string> image;
  std::vector<Located<std::string>> command;   // the program and its arguments (exec form, no shell)
  Located<std::string> name;                   // DNS-1123 label: the Job's (and Service's) name
  std::optional<Located<std::string>> ns;      // metadata.namespace
  Located<std::string> claim;                  // the PersistentVolumeClaim holding the checkpoints
  std::optional<Located<std::string>> secret;  // the Secret holding secrets and jobs.env, by name
};

// Long jobs (`envpin run`, the generated .envpin/run.sh and .envpin/job.sbatch).
struct Jobs {
  Location where;                                            // the jobs key
  Located<std::string> checkpoints{"/checkpoints", {}};      // inside the container
  Located<std::string> checkpoints_host{"checkpoints", {}};  // on the host: each job gets <dir>/<job-id>
  std::optional<Located<int>> checkpoints_keep;              // the newest N complete checkpoints kept
  // Globs on the names at the top of a job's checkpoint directory that are its checkpoints;
  // none: every file that is not a temporary, a sidecar or a known non-checkpoint (an image, a
  // log, a text report; see jobs/checkpoints.hpp).
  std::vector<Located<std::string>> checkpoints_pattern;
  Located<std::string> logs{"logs", {}};  // on the host: <dir>/<job-id>.log
  Located<int> max_restarts{3, {}};
  Located<int> backoff{10, {}};              // seconds before the first restart; doubles
  std::vector<Located<std::string>> resume;  // appended to the command when resuming
  std::vector<Located<std::string>> env;     // more variables passed by name from the caller
  Located<std::string> gpus{"", {}};         // "", "all" or a count
  Located<int> stop_timeout{30, {}};         // seconds between SIGTERM and SIGKILL on stop
  // Slurm (.envpin/job.sbatch)
  std::optional<Located<std::string>> slurm_time;  // "HH:MM:SS" or "D-HH:MM:SS"
  Located<int> slurm_warn{120, {}};                // seconds before the limit: checkpoint and requeue
  std::optional<Located<std::string>> slurm_partition;
  std::optional<Located<std::string>> slurm_checkpoints;  // shared storage seen by every node
  // Distributed launch: none (the command as given), torchrun (one torchrun per node, one
  // process per GPU) or srun (the command once per node; it reads the rank from the environment).
  Located<std::string> launch{"none", {}};
  Located<int> nodes{1, {}};
  std::optional<Located<int>> gpus_per_node;  // also the processes per node under torchrun
  std::optional<Notify> notify;
  std::optional<IdleGuard> idle;
  // jobs.data: what the jobs read that is not code (datasets, weights), relative to the project;
  // envpin sync names those it leaves out, `sync --data` sends them, `run --host` needs them.
  std::vector<Located<std::string>> data;
  std::optional<Kubernetes> kubernetes;
  // jobs.push: where `envpin push` sends the job image with the project in it,
  // REGISTRY/REPOSITORY[:TAG] (never a digest: the registry's answer is the digest).
  std::optional<Located<std::string>> push;
};

// dev.servers: a long-running server of the development container (`envpin dev`), started with it
// and bound by envpin to 127.0.0.1 on the host's network only. kind jupyter or tensorboard: envpin
// adds the address, port and (Jupyter) token itself; kind command: the words name {host} and
// {port} (and may name {token_file}, the token's path in the container).
struct DevServer {
  Located<std::string> name;
  Located<std::string> kind;
  Located<int> port;
  std::vector<Located<std::string>> command;   // empty: the kind's own (jupyter notebook, tensorboard)
  std::optional<Located<std::string>> logdir;  // tensorboard: relative to the workdir
};

// The development container of `envpin dev`: one a project and user, from the job image.
struct Dev {
  Location where;
  std::vector<DevServer> servers;
  // dev.idle_stop: after this many seconds with no shell or command attached, no CPU or GPU work
  // and no server output, the servers (and the kernels with them) are stopped; none: never.
  std::optional<Located<int>> idle_stop;
};

// The words a dev.servers command may name, filled by .envpin/dev.sh.
inline constexpr std::string_view kDevHostWord = "{host}";
inline constexpr std::string_view kDevPortWord = "{port}";
inline constexpr std::string_view kDevTokenWord = "{token_file}";

// Where each artifact is written, relative to the project directory.
struct Outputs {
  Located<std::string> dockerfile{"Dockerfile", {}};
  Located<std::string> devcontainer{".devcontainer/devcontainer.json", {}};
  Located<std::string> check_env{".envpin/check_env.sh", {}};
  Located<std::string> dockerignore{".dockerignore", {}};
  // Fixed, not a manifest key: EnvPin.cmake finds it next to the manifest.
  Located<std::string> cmake{".envpin/envpin.cmake", {}};
  // Fixed: written when the manifest has a jobs section.
  Located<std::string> run{".envpin/run.sh", {}};
  Located<std::string> sbatch{".envpin/job.sbatch", {}};
  // Fixed: written when the manifest has a dev section.
  Located<std::string> dev{".envpin/dev.sh", {}};
  Located<std::string> ckpt_helper{".envpin/envpin_ckpt.py", {}};
  // Fixed: with a lock that holds heavy wheels (torch, nvidia-*) and others, the two halves of
  // requirements.lock the image installs in two layers, heavy first (lock::heavy_wheel).
  Located<std::string> heavy_lock{".envpin/requirements.heavy.lock", {}};
  Located<std::string> rest_lock{".envpin/requirements.rest.lock", {}};
  // Fixed: written when the jobs section has a kubernetes section.
  Located<std::string> kubernetes{".envpin/kubernetes.yaml", {}};
  // Fixed: written with jobs.push, from envpin push's record: the job on Slurm with enroot/Pyxis,
  // and with Apptainer, both by the pushed digest.
  Located<std::string> enroot{".envpin/enroot.sbatch", {}};
  Located<std::string> apptainer{".envpin/apptainer.sh", {}};
  // Fixed: with cuda, envpin's CUDA smoke program (the Dockerfile's smoke stage compiles it);
  // with torch, the framework smoke.
  Located<std::string> smoke_source{".envpin/smoke/envpin_smoke.cu", {}};
  Located<std::string> smoke_header{".envpin/smoke/envpin_smoke_sha256.h", {}};
  Located<std::string> smoke_py{".envpin/smoke.py", {}};
  // Fixed: the same rules for plain rsync (what envpin sync leaves out).
  Located<std::string> rsync_exclude{".envpin/rsync-exclude", {}};
  // Fixed: envpin.yaml's JSON Schema, which the editor modeline envpin init writes names by this
  // path relative to the manifest (never the install's absolute path: a committed file).
  Located<std::string> schema{".envpin/envpin.schema.json", {}};
  // Fixed: the sha256 of every file generate wrote, so it replaces only its own files.
  Located<std::string> record{".envpin/generated.json", {}};
};

// The typed form of envpin.yaml (schema version 1). Every value keeps its source location.
struct Manifest {
  std::string file;                   // the path as the user gave it, used in messages
  std::filesystem::path project_dir;  // the directory holding the manifest
  std::string source;                 // the manifest's bytes, for its digest

  Located<int> schema;
  Located<std::string> name;
  std::vector<Located<Platform>> platforms;
  std::optional<Located<std::string>> os;
  std::optional<Located<std::string>> base;
  std::optional<Cuda> cuda;
  std::optional<Python> python;
  std::vector<Located<AptPackage>> apt;
  std::vector<NamedValue> env;
  std::vector<Located<std::string>> secrets;
  std::vector<NamedValue> paths;
  Located<std::string> workdir{"/workspace", {}};
  User user;
  std::vector<Located<std::string>> context_exclude;
  std::vector<Located<std::string>> context_allow_secrets;  // secret files the context may carry
  bool context_include_gitignored = false;                  // context.include_gitignored
  // What the project's .gitignore files ignore, as .dockerignore patterns: (file relative to the project, patterns) in
  // the order git reads them. Filled by load(), not by parse().
  std::vector<std::pair<std::string, std::vector<std::string>>> gitignore;
  Devcontainer devcontainer;
  std::optional<Jobs> jobs;
  std::optional<Dev> dev;
  Outputs outputs;
};

}  // namespace envpin::manifest

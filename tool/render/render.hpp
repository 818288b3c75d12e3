// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "manifest/model.hpp"
#include "render/artifact.hpp"
#include "render/code.hpp"
#include "resolve/environment.hpp"

namespace envpin::render {

// Each renderer is pure: (manifest, resolved environment) -> one artifact.
Artifact dockerfile(const manifest::Manifest& m, const resolve::Environment& env);
Artifact devcontainer(const manifest::Manifest& m, const resolve::Environment& env);
Artifact check_env(const manifest::Manifest& m, const resolve::Environment& env);
Artifact dockerignore(const manifest::Manifest& m, const resolve::Environment& env);
// .envpin/rsync-exclude: .dockerignore's rules for plain rsync (what envpin sync leaves out).
Artifact rsync_exclude(const manifest::Manifest& m, const resolve::Environment& env);
// .envpin/envpin.cmake: what EnvPin.cmake needs at configure time without running envpin.
Artifact cmake_fragment(const manifest::Manifest& m, const resolve::Environment& env);
// With cuda: .envpin/smoke/ (envpin's CUDA smoke program, the bytes of cmake/smoke/, which the
// Dockerfile's smoke stage compiles); with torch: .envpin/smoke.py (the framework smoke).
std::vector<Artifact> smoke(const manifest::Manifest& m, const resolve::Environment& env);
// Where the image carries them (check_env --smoke runs them there).
inline constexpr const char* kKernelSmokeInImage = "/usr/local/bin/envpin-smoke";
inline constexpr const char* kFrameworkSmokeInImage = "/usr/local/share/envpin/smoke.py";
// True when the manifest installs torch (python packages, requirements, or Debian's python3-torch).
bool has_torch(const manifest::Manifest& m);
// .envpin/run.sh and .envpin/job.sbatch, running jobs in `image`; none without a jobs section.
std::vector<Artifact> jobs(const manifest::Manifest& m, const std::string& image);
// .envpin/dev.sh, the development container of `envpin dev` from `image`; none without a dev section.
std::vector<Artifact> dev(const manifest::Manifest& m, const std::string& image);
// The variables passed into a job's or the dev container by name: secrets and jobs.env, sorted, once each.
std::vector<std::string> passed_names(const manifest::Manifest& m);

// .envpin/kubernetes.yaml for a manifest with jobs.kubernetes: a ConfigMap with the entry script
// (resume from the newest complete checkpoint, as run.sh does), a headless Service for several
// nodes, and the Job (an Indexed Job for several nodes); none without jobs.kubernetes.
std::vector<Artifact> kubernetes(const manifest::Manifest& m, const resolve::Environment& env);
// With jobs.push: .envpin/enroot.sbatch (Slurm with enroot/Pyxis) and .envpin/apptainer.sh, the job
// in the image envpin push sent, by digest (env.pushed); each refuses to run (exit 2, saying why)
// while there is no record or it is stale.
std::vector<Artifact> pushed_scripts(const manifest::Manifest& m, const resolve::Environment& env);
// The script a job's image runs first where envpin's supervisor is not (a pod, an enroot or
// Apptainer container): the command with the jobs.resume words after it when the checkpoint
// directory holds a checkpoint (templates/lib/checkpoints.sh and kubernetes_entry.sh).
Code job_entry_script(const manifest::Manifest& m);
// The #SBATCH lines of the manifest's job (name, output, requeue, time, partition, nodes, GPUs),
// `warn_signal` adding the time-limit warning to the batch shell.
Code sbatch_directives(const manifest::Manifest& m, bool warn_signal);
// Which files are checkpoints, as run.sh's is_checkpoint reads them: jobs.checkpoints.pattern one
// a line (empty: none given), and the names that are never checkpoints, one case pattern a line.
std::string checkpoint_globs(const manifest::Jobs& j);
std::string not_checkpoint_globs();

// With a lock holding heavy wheels (lock::heavy_wheel) and others: .envpin/requirements.heavy.lock
// and .envpin/requirements.rest.lock, the two layers the image installs them in; else none.
std::vector<Artifact> requirements_layers(const manifest::Manifest& m, const resolve::Environment& env);

// A file the Dockerfile copies into the image: its path in the build context and its bytes.
struct Copied {
  std::string path;
  std::string bytes;
};
// The files `dockerfile` copies from the build context: check_env, the smoke artifacts, and
// requirements.lock (with a lock) or the manifest's requirements file. Pure: the requirements file's bytes come from
// the manifest loader.
std::vector<Copied> dockerfile_inputs(const manifest::Manifest& m, const resolve::Environment& env,
                                      const Artifact& check_env);
// The tag run.sh and devcontainer users get for the job image: envpin/<name>:<16 hex>, a digest
// over the Dockerfile's bytes and every file it copies (so any change names a new image).
std::string job_image(const manifest::Manifest& m, const Artifact& dockerfile, const std::vector<Copied>& copied);

// .envpin/generated.json: the sha256 of each of `artifacts`, by path. generate replaces a file
// only when its bytes are what this record says envpin wrote (see docs/security.md).
Artifact generated_record(const manifest::Manifest& m, const std::vector<Artifact>& artifacts);

// All artifacts of `envpin generate`, the record included, sorted by path.
std::vector<Artifact> render_all(const manifest::Manifest& m, const resolve::Environment& env);

// `envpin ci`: the pipeline for GitHub Actions (.github/workflows/envpin.yml) or GitLab CI
// (.envpin/gitlab-ci.yml). The caller checks the options' grammars (a URL, a sha256, a runner label,
// secret names); `ci` itself writes the manifest's file name as one YAML scalar and throws
// diag::Error for any other value that is not one printable line.
struct CiOptions {
  bool github = false;                                   // else GitLab
  std::string deb_url;                                   // where the pipeline gets envpin's .deb
  std::string deb_sha256;                                // its sha256 (hex)
  std::string gpu_runner;                                // a runner label: the smoke on a GPU there ("": none)
  std::string user_secret = "ENVPIN_REGISTRY_USERNAME";  // the CI secrets holding the registry login
  std::string password_secret = "ENVPIN_REGISTRY_PASSWORD";
};
std::vector<Artifact> ci(const manifest::Manifest& m, const CiOptions& o);

// The manifest's file name without directories, as generated headers name it.
std::string manifest_name(const manifest::Manifest& m);

}  // namespace envpin::render

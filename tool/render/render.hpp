// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "manifest/model.hpp"
#include "render/artifact.hpp"
#include "resolve/environment.hpp"

namespace envpin::render {

// Each renderer is pure: (manifest, resolved environment) -> one artifact.
Artifact dockerfile(const manifest::Manifest& m, const resolve::Environment& env);
Artifact devcontainer(const manifest::Manifest& m, const resolve::Environment& env);
Artifact check_env(const manifest::Manifest& m, const resolve::Environment& env);
Artifact dockerignore(const manifest::Manifest& m, const resolve::Environment& env);
// .envpin/envpin.cmake: what EnvPin.cmake needs at configure time without running envpin.
Artifact cmake_fragment(const manifest::Manifest& m, const resolve::Environment& env);
// .envpin/run.sh and .envpin/job.sbatch; none without a jobs section.
std::vector<Artifact> jobs(const manifest::Manifest& m, const resolve::Environment& env);
// The tag run.sh gives the job image: envpin/<name>:lock-<12 hex of the lock digest>, or
// manifest-<12 hex of the manifest's sha256> without a lock.
std::string job_image(const manifest::Manifest& m, const resolve::Environment& env);

// .envpin/generated.json: the sha256 of each of `artifacts`, by path. generate replaces a file
// only when its bytes are what this record says envpin wrote (see README, "Security model").
Artifact generated_record(const manifest::Manifest& m, const std::vector<Artifact>& artifacts);

// All artifacts of `envpin generate`, the record included, sorted by path.
std::vector<Artifact> render_all(const manifest::Manifest& m, const resolve::Environment& env);

// The manifest's file name without directories, as generated headers name it.
std::string manifest_name(const manifest::Manifest& m);

}  // namespace envpin::render

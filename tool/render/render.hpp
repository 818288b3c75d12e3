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

// All artifacts of `envpin generate`, sorted by path.
std::vector<Artifact> render_all(const manifest::Manifest& m, const resolve::Environment& env);

// The manifest's file name without directories, as generated headers name it.
std::string manifest_name(const manifest::Manifest& m);

}  // namespace envpin::render

// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include "pin/sha256.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {

Artifact cmake_fragment(const manifest::Manifest& m, const resolve::Environment& env) {
  namespace fs = std::filesystem;
  Data d;
  d.set("manifest_name", manifest_name(m));
  d.set("manifest_sha256", pin::sha256_hex(m.source));
  const fs::path self = fs::path(m.outputs.cmake.value).parent_path();
  d.set("check_env", fs::path(m.outputs.check_env.value).lexically_relative(self).generic_string());
  // Empty values for a manifest without CUDA: envpin_cuda_architectures() reports that.
  d.set("toolkit", env.cuda ? env.cuda->toolkit : "");
  d.set("architectures", env.cuda ? env.cuda->cmake_architectures : "");
  d.set("torch_arch_list", env.cuda ? env.cuda->torch_arch_list : "");
  d.set("driver", env.cuda ? env.cuda->driver_packaged : "");
  return {m.outputs.cmake.value, render_template("envpin.cmake.mustache", d), false};
}

}  // namespace envpin::render

// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include "pin/sha256.hpp"
#include "render/code.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {

Artifact cmake_fragment(const manifest::Manifest& m, const resolve::Environment& env) {
  namespace fs = std::filesystem;
  Fields d;
  d.text("manifest_name", manifest_name(m));
  d.code("manifest_name_cmake", Code::cmake(manifest_name(m)));
  d.code("manifest_sha256", Code::cmake(pin::sha256_hex(m.source)));
  const fs::path self = fs::path(m.outputs.cmake.value).parent_path();
  d.code("check_env",
         Code::word(fs::path(m.outputs.check_env.value).lexically_relative(self).generic_string(), "._-+@/"));
  // Empty values for a manifest without CUDA: envpin_cuda_architectures() reports that.
  d.code("toolkit", Code::cmake(env.cuda ? env.cuda->toolkit : ""));
  d.code("architectures", Code::cmake(env.cuda ? env.cuda->cmake_architectures : ""));
  d.code("torch_arch_list", Code::cmake(env.cuda ? env.cuda->torch_arch_list : ""));
  d.code("driver", Code::cmake(env.cuda ? env.cuda->driver_packaged : ""));
  return {m.outputs.cmake.value, render_template("envpin.cmake.mustache", d), false};
}

}  // namespace envpin::render

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "manifest/load.hpp"
#include "resolve/cuda_tables.hpp"
#include "resolve/environment.hpp"

namespace envpin::resolve {
namespace {

Environment resolve_yaml(const std::string& yaml) {
  return resolve(manifest::parse("envpin: 1\nname: x\n" + yaml, "envpin.yaml", "."));
}

TEST(Resolve, CudaBaseImageTags) {
  struct Case {
    const char* yaml;
    const char* image;
  } cases[] = {
      {"cuda: {version: '12.4', cudnn: true, gpus: [A100]}", "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"},
      {"cuda: {version: '12.3', cudnn: true, flavor: devel, gpus: [A100]}",
       "nvidia/cuda:12.3.2-cudnn9-devel-ubuntu22.04"},
      {"cuda: {version: '11.8', cudnn: true, gpus: [A100]}", "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"},
      {"cuda: {version: '13.0.1', flavor: base, gpus: [A100]}\nos: ubuntu24.04", "nvidia/cuda:13.0.1-base-ubuntu24.04"},
      {"cuda: {version: '13.0', gpus: [A100]}", "nvidia/cuda:13.0.3-runtime-ubuntu22.04"},
      {"cuda: {version: '12.8', cudnn: true, gpus: [A100]}\nos: ubuntu24.04",
       "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04"},
      {"cuda: {version: '11.4', gpus: [A100]}\nos: ubuntu20.04", "nvidia/cuda:11.4.3-runtime-ubuntu20.04"},
  };
  for (const Case& c : cases) EXPECT_EQ(resolve_yaml(c.yaml).base_image, c.image) << c.yaml;
}

TEST(Resolve, EveryReleaseRowMapsToATag) {
  for (const CudaRelease& r : cuda_releases()) {
    ASSERT_FALSE(r.patches.empty()) << r.minor;
    ASSERT_FALSE(r.ubuntu.empty()) << r.minor;
    const std::string os = "ubuntu" + std::string(r.ubuntu.back());
    const Environment env =
        resolve_yaml("os: " + os + "\ncuda: {version: '" + std::string(r.minor) + "', cudnn: true, gpus: [A100]}");
    EXPECT_EQ(env.base_image,
              "nvidia/cuda:" + std::string(r.patches.back()) + "-" + std::string(r.cudnn_part) + "-runtime-" + os);
    EXPECT_EQ(env.os_id, "ubuntu");
  }
}

TEST(Resolve, ArchListIsSortedAndUnique) {
  const Environment env = resolve_yaml("cuda: {version: '12.8', gpus: [H100, A100, '9.0', sm_120, RTX 4090]}");
  ASSERT_TRUE(env.cuda);
  EXPECT_EQ(env.cuda->sms, (std::vector<int>{80, 89, 90, 120}));
}

TEST(Resolve, BaseImagesAndPython) {
  Environment e = resolve_yaml("python: {version: '3.12.7'}");
  EXPECT_EQ(e.base_image, "python:3.12.7-slim-bookworm");
  EXPECT_EQ(e.python_source, PythonSource::image);
  e = resolve_yaml("os: ubuntu24.04\npython: {version: '3.11'}");
  EXPECT_EQ(e.base_image, "ubuntu:24.04");
  EXPECT_EQ(e.python_source, PythonSource::standalone);
  EXPECT_TRUE(e.remove_ubuntu_user);
  e = resolve_yaml("base: ubuntu:jammy");
  EXPECT_EQ(e.os_id, "ubuntu");
  EXPECT_EQ(e.os_version, "22.04");
  e = resolve_yaml("base: python:3.11-slim-bookworm");
  EXPECT_EQ(e.os_version, "12");
  e = resolve_yaml("base: registry.example/team/base:1");
  EXPECT_EQ(e.os_id, "");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_EQ(e.warnings[0],
            "envpin: warning: envpin.yaml:3:7: cannot tell the OS of base image "
            "'registry.example/team/base:1'; check_env will not check it\n");
  e = resolve_yaml("platforms: [linux/amd64, linux/arm64]");
  EXPECT_EQ(e.machines, (std::vector<std::string>{"x86_64", "aarch64"}));
}

}  // namespace
}  // namespace envpin::resolve

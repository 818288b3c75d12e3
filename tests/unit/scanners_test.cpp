// SPDX-License-Identifier: Apache-2.0
// The hand-written readers that replaced std::regex: .dockerignore globs, image references,
// driver and toolkit version lines. Expected values come from the formats' documentation and
// from real tool output, and each reader must stay linear on hostile input.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "diag/error.hpp"
#include "net/registry.hpp"
#include "probe/gpu_probe.hpp"
#include "resolve/cuda_tables.hpp"
#include "scan/ignore.hpp"

namespace envpin {
namespace {

TEST(Glob, DockerignoreSemantics) {
  struct Case {
    const char* pattern;
    const char* path;
    bool match;
  } cases[] = {
      {"*.md", "README.md", true},
      {"*.md", "docs/README.md", false},  // '*' stops at '/'
      {"*/*.md", "docs/README.md", true},
      {"**/*.md", "README.md", true},  // "**/" is zero or more directories
      {"**/*.md", "a/b/c/README.md", true},
      {"data/**", "data/x/y.bin", true},
      {"data/**", "datax/y.bin", false},
      {"**", "anything/at/all", true},
      {"file?.txt", "file1.txt", true},
      {"file?.txt", "file/.txt", false},
      {"[a-c]x", "bx", true},
      {"[a-c]x", "dx", false},
      {"[!a-c]x", "dx", true},
      {"[^a-c]x", "ax", false},
      {"\\*.md", "*.md", true},
      {"\\*.md", "a.md", false},
      {"/build/", "build", true},  // leading '/' and trailing '/' are dropped
      {"./out", "out", true},
      {"[unclosed", "[unclosed", true},
      {"a.b", "axb", false},  // '.' is a literal, not "any character"
      {"a+b", "a+b", true},
  };
  for (const Case& c : cases)
    EXPECT_EQ(scan::Glob(c.pattern).matches(c.path), c.match) << c.pattern << " vs " << c.path;
}

TEST(Glob, LinearOnHostilePatterns) {
  // Backtracking matchers take exponential time on this pair; std::regex overflowed the stack
  // on long paths. Here it is one pass over the path.
  const std::string path(100000, 'a');
  EXPECT_FALSE(scan::Glob("*a*a*a*a*a*a*a*a*a*a*a*a*b").matches(path));
  EXPECT_TRUE(scan::Glob("**a**a**a").matches(path));
  EXPECT_FALSE(scan::Glob("**/**/**/**/x").matches(std::string(50000, '/')));
}

TEST(IgnoreRules, ReincludeBelowAnExcludedDirectory) {
  scan::IgnoreRules rules;
  rules.add("data");
  rules.add("!data/keep.txt");
  rules.add("cache");
  EXPECT_TRUE(rules.excluded("data/big.bin"));
  EXPECT_FALSE(rules.excluded("data/keep.txt"));
  EXPECT_TRUE(rules.may_reinclude_below("data"));
  EXPECT_FALSE(rules.may_reinclude_below("cache"));  // nothing re-includes there: a walk may skip it
  EXPECT_FALSE(rules.may_reinclude_below("dat"));
  scan::IgnoreRules wild;
  wild.add("cache");
  wild.add("!**/*.keep");
  EXPECT_TRUE(wild.may_reinclude_below("cache"));  // a pattern starting with a wildcard may match anywhere
}

TEST(ImageReference, DigestsAndRefusals) {
  // The accepted forms are in lock_test.cpp (ImageReference.DockerGrammar).
  const auto both = net::parse_image_reference("debian:12@sha256:" + std::string(64, '0'));
  EXPECT_EQ(both.tag, "12");
  EXPECT_EQ(both.digest, "sha256:" + std::string(64, '0'));
  const auto digest_only = net::parse_image_reference("debian@sha256:" + std::string(64, 'f'));
  EXPECT_EQ(digest_only.tag, "");
  for (const std::string& bad : std::initializer_list<std::string>{
           "foo:", "foo@", "a//b", "a/b:c:d", "a/.b", "a/b-", "x:" + std::string(129, 't'), "x:-tag", "host:port/x",
           "debian@sha256:" + std::string(64, 'A'), "debian@sha256:" + std::string(63, 'a'),
           "debian@md5:" + std::string(64, 'a'), ""})
    EXPECT_THROW(net::parse_image_reference(bad), diag::Error) << bad;
  EXPECT_NO_THROW(net::parse_image_reference("x:" + std::string(128, 't')));
}

TEST(VersionLines, DriverKernelModule) {
  // /proc/driver/nvidia/version as the proprietary, open and aarch64 modules write it.
  EXPECT_EQ(probe::parse_proc_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"),
            "550.54.14");
  EXPECT_EQ(
      probe::parse_proc_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build\n"),
      "560.35.03");
  EXPECT_EQ(probe::parse_proc_version("NVRM version: NVIDIA UNIX Kernel Module for aarch64  535.104.05\n"),
            "535.104.05");
  EXPECT_EQ(probe::parse_proc_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65\n"), "580.65");
  EXPECT_EQ(probe::parse_proc_version("no module here"), "");
  EXPECT_EQ(
      probe::parse_smi_cuda_version("| NVIDIA-SMI 550.54.14   Driver Version: 550.54.14   CUDA Version: 12.4     |"),
      "12.4");
  EXPECT_EQ(probe::parse_smi_cuda_version("CUDA Version: N/A"), "");
  EXPECT_EQ(probe::parse_nvcc_version("Cuda compilation tools, release 12.4, V12.4.131\nBuild cuda_12.4.r12.4"),
            "12.4.131");
  EXPECT_EQ(probe::parse_nvcc_version("release 12.4, V12"), "");
}

TEST(VersionLines, CapabilitiesAndArchNames) {
  EXPECT_EQ(resolve::gpu_sm("sm_90"), 90);
  EXPECT_EQ(resolve::gpu_sm("compute_120"), 120);
  EXPECT_EQ(resolve::gpu_sm("12.0"), 120);
  EXPECT_EQ(resolve::gpu_sm("89"), 89);
  EXPECT_FALSE(resolve::gpu_sm("sm_9"));
  EXPECT_FALSE(resolve::gpu_sm("9.10"));
  EXPECT_FALSE(resolve::gpu_sm("sm_1234"));
  EXPECT_FALSE(resolve::parse_driver("5"));
  EXPECT_FALSE(resolve::parse_driver("535."));
  EXPECT_FALSE(resolve::parse_driver("535.1234"));
  EXPECT_EQ(resolve::parse_driver("12345"), std::nullopt);
}

}  // namespace
}  // namespace envpin

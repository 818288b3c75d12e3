// SPDX-License-Identifier: Apache-2.0
// What .envpin/kubernetes.yaml makes of the manifest's values that mean something else on a
// cluster (issue 49, class 8): Slurm's time 0 and a command that repeats a word.
#include <gtest/gtest.h>

#include <string>

#include "manifest/load.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"

namespace envpin::render {
namespace {

constexpr const char* kJob =
    "envpin: 1\nname: x\nbase: debian:bookworm\nos: debian12\njobs:\n"
    "  kubernetes: {image: 'r/x@sha256:0000000000000000000000000000000000000000000000000000000000000000', "
    "command: [python, train.py, --epochs, '10', --batch-size, '10'], claim: c}\n";

std::string kubernetes_yaml(const std::string& manifest) {
  const manifest::Manifest m = manifest::parse(manifest, "envpin.yaml", ".");
  const auto artifacts = kubernetes(m, resolve::resolve(m));
  for (const Artifact& a : artifacts)
    if (a.path == ".envpin/kubernetes.yaml") return a.bytes;
  ADD_FAILURE() << "no .envpin/kubernetes.yaml";
  return "";
}

TEST(Kubernetes, SlurmsTimeZeroIsNoDeadline) {
  for (const char* zero : {"'0'", "'00:00:00'", "'0-00:00:00'"}) {
    const std::string yaml = kubernetes_yaml(std::string(kJob) + "  slurm: {time: " + zero + "}\n");
    EXPECT_EQ(yaml.find("activeDeadlineSeconds"), std::string::npos) << zero << "\n" << yaml;
  }
  const std::string limited = kubernetes_yaml(std::string(kJob) + "  slurm: {time: '90'}\n");
  EXPECT_NE(limited.find("activeDeadlineSeconds: 5400\n"), std::string::npos) << limited;
}

TEST(Kubernetes, ACommandIsAWordListWithRepeats) {
  const std::string yaml = kubernetes_yaml(kJob);
  EXPECT_NE(yaml.find("            - train.py\n            - \"--epochs\"\n            - \"10\"\n"
                      "            - \"--batch-size\"\n            - \"10\"\n"),
            std::string::npos)
      << yaml;
  // A set (context.exclude, secrets, ...) still refuses an item listed twice.
  EXPECT_THROW(manifest::parse("envpin: 1\nname: x\nsecrets: [A, A]\n", "envpin.yaml", "."), std::exception);
}

}  // namespace
}  // namespace envpin::render

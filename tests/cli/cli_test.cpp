// SPDX-License-Identifier: Apache-2.0
// Runs the real envpin binary.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_fixture.hpp"
#include "io/atomic_file.hpp"

namespace envpin {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest =
    "envpin: 1\nname: demo\npython: {version: '3.11', packages: [numpy==1.26.4]}\n"
    "env: {DATA_DIR: /data}\nsecrets: [HF_TOKEN]\n";

TEST_F(Cli, GenerateWritesEveryArtifactThenLeavesThemAlone) {
  write("envpin.yaml", kManifest);
  Result r = run("generate");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "wrote .devcontainer/devcontainer.json\nwrote .dockerignore\n"
      "wrote .envpin/check_env.sh\nwrote .envpin/envpin.cmake\nwrote .envpin/envpin.schema.json\nwrote .envpin/generated.json\nwrote .envpin/rsync-exclude\n"
      "wrote Dockerfile\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(listing(),
            (std::vector<std::string>{".devcontainer/devcontainer.json", ".dockerignore", ".envpin/check_env.sh",
                                      ".envpin/envpin.cmake", ".envpin/envpin.schema.json", ".envpin/generated.json",
                                      ".envpin/rsync-exclude", "Dockerfile", "envpin.yaml"}));
  EXPECT_TRUE(io::is_executable(dir_ / ".envpin/check_env.sh"));
  const auto before = fs::last_write_time(dir_ / "Dockerfile");
  r = run("generate");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(
      r.out,
      "unchanged .devcontainer/devcontainer.json\nunchanged .dockerignore\n"
      "unchanged .envpin/check_env.sh\nunchanged .envpin/envpin.cmake\nunchanged .envpin/envpin.schema.json\nunchanged .envpin/generated.json\n"
      "unchanged .envpin/rsync-exclude\nunchanged Dockerfile\n");
  EXPECT_EQ(fs::last_write_time(dir_ / "Dockerfile"), before);
}

TEST_F(Cli, GenerateIsDeterministicAcrossDirectories) {
  write("a/envpin.yaml", kManifest);
  write("b/envpin.yaml", kManifest);
  ASSERT_EQ(run("generate -f a/envpin.yaml").code, 0);
  ASSERT_EQ(run("generate --manifest b/envpin.yaml").code, 0);
  for (const char* f : {"Dockerfile", ".devcontainer/devcontainer.json", ".envpin/check_env.sh", ".dockerignore",
                        ".envpin/envpin.cmake"})
    EXPECT_EQ(io::read_file(dir_ / "a" / f), io::read_file(dir_ / "b" / f)) << f;
}

TEST_F(Cli, CheckReportsStaleFilesWithExitThree) {
  write("envpin.yaml", kManifest);
  Result r = run("generate --check");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(
      r.out,
      "stale .devcontainer/devcontainer.json\nstale .dockerignore\nstale .envpin/check_env.sh\n"
      "stale .envpin/envpin.cmake\nstale .envpin/envpin.schema.json\nstale .envpin/generated.json\nstale .envpin/rsync-exclude\nstale Dockerfile\n");
  EXPECT_EQ(r.err,
            "envpin: error: 8 generated file(s) differ from what envpin.yaml gives\n"
            "envpin: hint: run 'envpin generate --manifest envpin.yaml' and commit the result\n");
  EXPECT_EQ(listing(), std::vector<std::string>{"envpin.yaml"});
  ASSERT_EQ(run("generate").code, 0);
  r = run("generate --check");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  write("Dockerfile", "FROM scratch\n");
  r = run("generate --check");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "stale Dockerfile\n");
}

TEST_F(Cli, DryRunWritesNothing) {
  write("envpin.yaml", kManifest);
  Result r = run("generate --dry-run");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.substr(0, 12), "would write ");
  EXPECT_EQ(listing(), std::vector<std::string>{"envpin.yaml"});
}

TEST_F(Cli, BadManifestWritesNothingAndExitsOne) {
  write("envpin.yaml", "envpin: 1\nname: demo\ncuda_vesion: '12.4'\n");
  Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "envpin: error: envpin.yaml:3:1: unknown key 'cuda_vesion' (did you mean 'cuda'?)");
  EXPECT_EQ(listing(), std::vector<std::string>{"envpin.yaml"});
}

TEST_F(Cli, ErrorAfterAGoodRunLeavesTheOldArtifacts) {
  write("envpin.yaml", kManifest);
  ASSERT_EQ(run("generate").code, 0);
  const auto dockerfile = io::read_file(dir_ / "Dockerfile");
  write("envpin.yaml", std::string(kManifest) + "platforms: [linux/amd65]\n");
  Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml:6:13: 'linux/amd65' is not a valid platform (did you mean 'linux/amd64'?)\n"
            "envpin: hint: use one of: linux/amd64, linux/arm64\n");
  EXPECT_EQ(io::read_file(dir_ / "Dockerfile"), dockerfile);
}

// Every entry under `dir`: directories with a trailing '/', files with their bytes.
std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = e.path().lexically_relative(dir).generic_string();
    out.push_back(e.is_directory() ? rel + "/" : rel + ": " + io::read_file(e.path()).value_or("?"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(Cli, AFailedWriteLeavesNoDirectoryItCreated) {
  // The Dockerfile comes last and cannot be written (its directory is a file): .envpin/ and
  // .envpin/smoke/, made for the files before it, go again; the user's own empty directory stays.
  write("envpin.yaml",
        "envpin: 1\nname: x\ncuda: {version: '12.4', gpus: [H100]}\noutputs: {dockerfile: blocker/Dockerfile}\n");
  write("blocker", "a file where a directory would go\n");
  fs::create_directories(dir_ / ".devcontainer");
  const std::vector<std::string> before = tree(dir_);
  const Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: cannot create directory './blocker': Not a directory\n"
            "envpin: hint: check that the directory exists and is writable\n");
  EXPECT_EQ(tree(dir_), before);
  // Once the way is clear, the same run writes every file.
  fs::remove(dir_ / "blocker");
  EXPECT_EQ(run("generate").code, 0);
  EXPECT_TRUE(fs::is_regular_file(dir_ / "blocker/Dockerfile"));
}

TEST_F(Cli, GenerateReplacesOnlyItsOwnFiles) {
  write("envpin.yaml", "envpin: 1\nname: x\n");
  write("Dockerfile", "FROM scratch\n# mine\n");
  write(".devcontainer/devcontainer.json", "{\"name\": \"hand-written\"}\n");
  Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: .devcontainer/devcontainer.json: '.devcontainer/devcontainer.json' was not written by "
            "envpin, or was edited since (and 1 more); nothing was written\n"
            "envpin: hint: move your file away (or set outputs in envpin.yaml), or pass --force to replace it\n");
  EXPECT_EQ(listing(), (std::vector<std::string>{".devcontainer/devcontainer.json", "Dockerfile", "envpin.yaml"}));
  EXPECT_EQ(*io::read_file(dir_ / "Dockerfile"), "FROM scratch\n# mine\n");
  ASSERT_EQ(run("generate --force").code, 0);
  // Now envpin's (recorded in .envpin/generated.json): regenerated freely after a manifest edit...
  write("envpin.yaml", "envpin: 1\nname: y\n");
  ASSERT_EQ(run("generate").code, 0);
  // ...but a hand edit since then is the user's again.
  write("Dockerfile", *io::read_file(dir_ / "Dockerfile") + "RUN echo edited\n");
  write("envpin.yaml", "envpin: 1\nname: z\n");
  r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(
      r.err,
      "envpin: error: Dockerfile: 'Dockerfile' was not written by envpin, or was edited since; nothing "
      "was written\n"
      "envpin: hint: rename your Dockerfile, or set outputs.dockerfile in envpin.yaml to write envpin's elsewhere "
      "(e.g. 'outputs: {dockerfile: Dockerfile.envpin}'), or pass --force to replace it\n");
  EXPECT_NE(io::read_file(dir_ / "Dockerfile")->find("RUN echo edited\n"), std::string::npos);
  // A directory or a symlink where an artifact goes is never replaced, not even with --force.
  fs::remove(dir_ / "Dockerfile");
  fs::create_symlink("/etc/hostname", dir_ / "Dockerfile");
  EXPECT_EQ(run("generate --force").code, 1);
  EXPECT_TRUE(fs::is_symlink(dir_ / "Dockerfile"));
}

TEST_F(Cli, OutputsNeverReplaceSpecialFiles) {
  write("envpin.yaml", "envpin: 1\nname: x\n");
  // As root, -o /dev/null used to replace the device node with a regular file.
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  Result r = run("context -o pipe");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: cannot write the context to 'pipe': it exists and is not a regular file\n"
            "envpin: hint: pass a new file name, or '-o -' for standard output\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  r = run("report -o pipe");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
  // A failed write to standard output is a failure, not exit 0.
  EXPECT_EQ(shell(sh_quote(ENVPIN_BINARY) + " cuda --gpu H100 --driver 550.54.15 >/dev/full 2>&1; echo $?"), "1\n");
  EXPECT_EQ(shell(sh_quote(ENVPIN_BINARY) + " cuda --gpu H100 --driver 550.54.15 2>&1 >/dev/full"),
            "envpin: error: cannot write to standard output\n"
            "envpin: hint: check the disk or the pipe that standard output goes to\n");
}

TEST_F(Cli, MissingManifest) {
  Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml: cannot read manifest: no such file\n"
            "envpin: hint: create it (see examples/) or pass its path with --manifest\n");
}

TEST_F(Cli, UsageErrorsExitTwo) {
  Result r = run("generate --frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.substr(0, 15), "envpin: error: ");
  EXPECT_NE(r.err.find("envpin: hint: run 'envpin generate --help'"), std::string::npos) << r.err;
  r = run("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "envpin: error: 'frobnicate' is not an envpin command\n"
            "envpin: hint: run 'envpin --help' for the commands\n");
  // An unknown command with --help is still an unknown command (issue 35: it printed the main help
  // and exited 0), and a typo names the nearest command.
  r = run("genrate --help");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "envpin: error: 'genrate' is not an envpin command\n"
            "envpin: hint: did you mean 'envpin generate'?\n");
  r = run("");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("Usage:"), std::string::npos);
}

TEST_F(Cli, HelpAndVersion) {
  Result r = run("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("generate"), std::string::npos);
  EXPECT_NE(r.out.find("3    generate --check: generated files are out of date"), std::string::npos);
  r = run("generate --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--check"), std::string::npos);
  EXPECT_EQ(r.err, "");
  r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.substr(0, 7), "envpin ");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
}

// docs/cli.md is written from the command table (issue 35): stale, it fails here.
// ENVPIN_UPDATE_GOLDEN=1 rewrites it; review the diff.
TEST_F(Cli, TheCommandReferenceIsCurrent) {
  const Result r = run("manpage --markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path doc = fs::path(ENVPIN_SOURCE_DIR) / "docs/cli.md";
  if (std::getenv("ENVPIN_UPDATE_GOLDEN")) io::write_atomic(doc, r.out, false);
  EXPECT_EQ(r.out, io::read_file(doc).value_or(""))
      << "docs/cli.md is stale: run envpin manpage --markdown > docs/cli.md";
  // Every command has its section.
  for (const char* command : {"init", "generate", "lock", "check", "cuda", "run", "submit", "resume-check"})
    EXPECT_NE(r.out.find("\n## envpin " + std::string(command)), std::string::npos) << command;
}

// docs/manifest.md is written from the key table (tool/manifest/keys.cpp), as `envpin schema` is.
TEST_F(Cli, TheManifestReferenceIsCurrent) {
  const Result r = run("schema --markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path doc = fs::path(ENVPIN_SOURCE_DIR) / "docs/manifest.md";
  if (std::getenv("ENVPIN_UPDATE_GOLDEN")) io::write_atomic(doc, r.out, false);
  EXPECT_EQ(r.out, io::read_file(doc).value_or(""))
      << "docs/manifest.md is stale: run envpin schema --markdown > docs/manifest.md";
  const Result schema = run("schema");
  ASSERT_EQ(schema.code, 0);
  EXPECT_NE(schema.out.find("\"$schema\": \"https://json-schema.org/draft/2020-12/schema\""), std::string::npos);
  EXPECT_NE(schema.out.find("\"require_check\""), std::string::npos);
}

TEST_F(Cli, ValidateWritesNothing) {
  write("envpin.yaml", kManifest);
  Result r = run("validate");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "envpin.yaml: ok (base image python:3.11-slim-bookworm)\n");
  EXPECT_EQ(listing(), std::vector<std::string>{"envpin.yaml"});
}

}  // namespace
}  // namespace envpin

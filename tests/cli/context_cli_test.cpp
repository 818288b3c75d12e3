// SPDX-License-Identifier: Apache-2.0
// `envpin context` through the binary; the tar is read back with GNU tar and hashed with sha256sum.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "cli/cli_fixture.hpp"

namespace envpin {
namespace {

class ContextCli : public Cli {
 protected:
  void make_project(const fs::path& root) {
    fs::create_directories(root / "src");
    fs::create_directories(root / "data/raw");
    fs::create_directories(root / "nested");
    io::write_atomic(root / "envpin.yaml", "envpin: 1\nname: ctx\ncontext: {exclude: [data/raw]}\n", false);
    io::write_atomic(root / "src/train.py", "print('train')\n", false);
    io::write_atomic(root / "run.sh", "#!/bin/sh\n", true);
    io::write_atomic(root / "data/raw/big.bin", "raw", false);
    io::write_atomic(root / ".env", "TOKEN=s3cr3t\n", false);
    io::write_atomic(root / "nested/.env.local", "TOKEN=s3cr3t\n", false);
    io::write_atomic(root / "deploy.key", "-----BEGIN KEY-----\n", false);
    fs::create_symlink("src/train.py", root / "train.py");
  }
};

// A project inside a git repository: what the repository's .gitignore files ignore (the root's,
// the project's own, a tracked one below it) stays out of the .dockerignore and the context;
// context.include_gitignored: true sends it.
TEST_F(ContextCli, WhatGitIgnoresStaysOut) {
  const fs::path repo = dir_ / "repo", p = repo / "proj";
  io::write_atomic(repo / ".gitignore", "*.bin\n/proj/data/\n/other/\n", false);
  io::write_atomic(p / ".gitignore", "outputs/\n", false);
  io::write_atomic(p / "sub/.gitignore", "local.txt\n", false);
  for (const char* f :
       {"src/train.py", "model.bin", "data/x.csv", "outputs/o.txt", "sub/local.txt", "sub/keep.txt", "other/y.txt"})
    io::write_atomic(p / f, "x\n", false);
  ASSERT_EQ(
      shell("git -C " + repo.string() + " init -q && git -C " + repo.string() + " add proj/sub/.gitignore && echo ok"),
      "ok\n");
  io::write_atomic(p / "envpin.yaml", "envpin: 1\nname: ctx\n", false);
  ASSERT_EQ(run("generate -f repo/proj/envpin.yaml").code, 0);
  const std::string ignore = *io::read_file(p / ".dockerignore");
  // Each file named relative to the project: the artifact must not depend on the path the
  // manifest was given by (an absolute one once wrote "/tmp/.../proj/.gitignore" here).
  EXPECT_NE(ignore.find(
                "# Ignored by git (../.gitignore); context.include_gitignored: true sends them.\n**/*.bin\ndata/**\n"
                "# Ignored by git (.gitignore); context.include_gitignored: true sends them.\n**/outputs/**\n"
                "# Ignored by git (sub/.gitignore); context.include_gitignored: true sends them.\nsub/**/local.txt\n"),
            std::string::npos)
      << ignore;
  const Result absolute = run("generate --check -f " + fs::absolute(p / "envpin.yaml").string());
  EXPECT_EQ(absolute.code, 0) << absolute.out << absolute.err;
  const auto listing = [&] {
    const Result r = run("context -f repo/proj/envpin.yaml -o ctx.tar");
    EXPECT_EQ(r.code, 0) << r.err;
    return shell("tar -tf " + (dir_ / "ctx.tar").string() + " | grep -v '/$' | grep -v '\\(^\\|/\\)\\.' | sort");
  };
  EXPECT_EQ(listing(), "Dockerfile\nenvpin.yaml\nother/y.txt\nsrc/train.py\nsub/keep.txt\n");
  // A checkout owned by another user (a container's mount, sudo): the same rules, no refusal.
  if (::geteuid() == 0) {
    ASSERT_EQ(shell("chown -R 12345:12345 " + repo.string() + " && echo ok"), "ok\n");
    const Result other = run("generate -f repo/proj/envpin.yaml --check");
    EXPECT_EQ(other.code, 0) << other.err;
    ASSERT_EQ(shell("chown -R 0:0 " + repo.string() + " && echo ok"), "ok\n");
  }
  io::write_atomic(p / "envpin.yaml", "envpin: 1\nname: ctx\ncontext: {include_gitignored: true}\n", false);
  ASSERT_EQ(run("generate -f repo/proj/envpin.yaml").code, 0);
  EXPECT_EQ(io::read_file(p / ".dockerignore")->find("Ignored by git"), std::string::npos);
  EXPECT_EQ(listing(),
            "Dockerfile\ndata/x.csv\nenvpin.yaml\nmodel.bin\nother/y.txt\noutputs/o.txt\nsrc/train.py\n"
            "sub/keep.txt\nsub/local.txt\n");
}

TEST_F(ContextCli, DeterministicTarWithoutSecrets) {
  make_project(dir_ / "a");
  ASSERT_EQ(run("generate -f a/envpin.yaml").code, 0);
  // A project may ask for its .env back; secrets stay out regardless.
  std::string ignore = *io::read_file(dir_ / "a/.dockerignore");
  io::write_atomic(dir_ / "a/.dockerignore", ignore + "!.env\n!deploy.key\n", false);
  const Result r = run("context -f a/envpin.yaml -o a.tar");
  ASSERT_EQ(r.code, 0) << r.err;
  // The digest it prints is the one sha256sum computes.
  const std::string sum = shell("sha256sum " + (dir_ / "a.tar").string()).substr(0, 64);
  EXPECT_EQ(r.out,
            "sha256:" + sum + "  a.tar (11 files, " + std::to_string(fs::file_size(dir_ / "a.tar")) + " bytes)\n");
  const std::string listing = shell("tar -tvf " + (dir_ / "a.tar").string() + " --numeric-owner");
  EXPECT_EQ(listing.find(".env\n"), std::string::npos) << listing;
  EXPECT_EQ(listing.find(".env.local"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("deploy.key"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("data/raw"), std::string::npos) << listing;
  EXPECT_NE(listing.find("-rw-r--r-- 0/0              15 1970-01-01 00:00 src/train.py\n"), std::string::npos)
      << listing;
  EXPECT_NE(listing.find("-rwxr-xr-x 0/0              10 1970-01-01 00:00 run.sh\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("lrwxrwxrwx 0/0               0 1970-01-01 00:00 train.py -> src/train.py\n"),
            std::string::npos)
      << listing;
  EXPECT_NE(listing.find(" .envpin/check_env.sh\n"), std::string::npos) << "re-included by the generated .dockerignore";
  // To standard output (for `| docker build -`): the same bytes, the digest line on stderr.
  const Result piped = run("context -f a/envpin.yaml -o -");
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_EQ(piped.out, *io::read_file(dir_ / "a.tar"));
  EXPECT_EQ(piped.err,
            "sha256:" + sum + "  - (11 files, " + std::to_string(fs::file_size(dir_ / "a.tar")) + " bytes)\n");
  // Sorted by path.
  EXPECT_LT(listing.find(" .dockerignore\n"), listing.find(" Dockerfile\n"));
  EXPECT_LT(listing.find(" Dockerfile\n"), listing.find(" src/train.py\n"));

  // The same tree elsewhere, written later with other permissions on the directories: same bytes.
  make_project(dir_ / "b");
  ASSERT_EQ(run("generate -f b/envpin.yaml").code, 0);
  io::write_atomic(dir_ / "b/.dockerignore", ignore + "!.env\n!deploy.key\n", false);
  ::chmod((dir_ / "b/src").c_str(), 0700);
  ASSERT_EQ(run("context -f b/envpin.yaml -o b.tar").code, 0);
  EXPECT_EQ(*io::read_file(dir_ / "a.tar"), *io::read_file(dir_ / "b.tar"));
  // Extracted, the files are what the project has.
  fs::create_directories(dir_ / "x");
  shell("tar -xf " + (dir_ / "a.tar").string() + " -C " + (dir_ / "x").string());
  EXPECT_EQ(*io::read_file(dir_ / "x/src/train.py"), "print('train')\n");
}

}  // namespace
}  // namespace envpin

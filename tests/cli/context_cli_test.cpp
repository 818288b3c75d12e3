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
  EXPECT_EQ(r.out, "sha256:" + sum + "  a.tar (9 files, " + std::to_string(fs::file_size(dir_ / "a.tar")) + " bytes)\n");
  const std::string listing = shell("tar -tvf " + (dir_ / "a.tar").string() + " --numeric-owner");
  EXPECT_EQ(listing.find(".env\n"), std::string::npos) << listing;
  EXPECT_EQ(listing.find(".env.local"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("deploy.key"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("data/raw"), std::string::npos) << listing;
  EXPECT_NE(listing.find("-rw-r--r-- 0/0              15 1970-01-01 00:00 src/train.py\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("-rwxr-xr-x 0/0              10 1970-01-01 00:00 run.sh\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("lrwxrwxrwx 0/0               0 1970-01-01 00:00 train.py -> src/train.py\n"),
            std::string::npos)
      << listing;
  EXPECT_NE(listing.find(" .envpin/check_env.sh\n"), std::string::npos) << "re-included by the generated .dockerignore";
  // To standard output (for `| docker build -`): the same bytes, the digest line on stderr.
  const Result piped = run("context -f a/envpin.yaml -o -");
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_EQ(piped.out, *io::read_file(dir_ / "a.tar"));
  EXPECT_EQ(piped.err, "sha256:" + sum + "  - (9 files, " + std::to_string(fs::file_size(dir_ / "a.tar")) + " bytes)\n");
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

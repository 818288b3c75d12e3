// SPDX-License-Identifier: Apache-2.0
// `envpin hash` through the binary; expected digests are computed here with sha256sum, find and
// stat, never with envpin's own code.
#include <gtest/gtest.h>

#include <cstdio>

#include "cli/cli_fixture.hpp"

namespace envpin {
namespace {

// The h1m listing by shell tools: "<sha256>  <mode>  <path>[ -> <target>]" per file or link,
// sorted bytewise by path; a link's hash is the sha256 of its target text.
std::string tree_digest_by_shell(const fs::path& root) {
  const std::string script =
      "cd " + sh_quote(root.string()) +
      " && find . \\( -type f -o -type l \\) | sed 's|^\\./||' | LC_ALL=C sort |"
      " while IFS= read -r p; do"
      "   if [ -L \"$p\" ]; then t=$(readlink \"$p\");"
      "     printf '%s  link  %s -> %s\\n' \"$(printf '%s' \"$t\" | sha256sum | cut -c1-64)\" \"$p\" \"$t\";"
      "   else if [ -x \"$p\" ]; then m=0755; else m=0644; fi;"
      "     printf '%s  %s  %s\\n' \"$(sha256sum < \"$p\" | cut -c1-64)\" \"$m\" \"$p\"; fi;"
      " done | sha256sum | cut -c1-64";
  return "h1m:" + shell(script).substr(0, 64);
}

class HashCli : public Cli {
 protected:
  void make_tree(const fs::path& root, int files) {
    for (int i = 0; i < files; ++i) {
      const fs::path dir = root / ("d" + std::to_string(i % 7)) / ("s" + std::to_string(i % 3));
      fs::create_directories(dir);
      // Sizes across the read buffer's boundary (1 MiB) and empty files.
      const std::size_t size = i % 11 == 0 ? (1u << 20) + 17 : static_cast<std::size_t>(i) * 37;
      io::write_atomic(dir / ("f" + std::to_string(i)), std::string(size, static_cast<char>('a' + i % 26)), i % 5 == 0);
    }
    fs::create_symlink("d0/s0/f0", root / "link");
    fs::create_symlink("missing/target", root / "dangling");
    fs::create_directories(root / "empty-dir");
  }
};

TEST_F(HashCli, TreeDigestEqualsTheShellListing) {
  make_tree(dir_ / "t", 60);
  const Result r = run("hash t");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find(' ')), tree_digest_by_shell(dir_ / "t")) << r.out;
  EXPECT_NE(r.out.find("(62 files, "), std::string::npos) << r.out;
}

TEST_F(HashCli, TreeDigestSeesContentModeAndNames) {
  make_tree(dir_ / "t", 12);
  const std::string before = run("hash t").out;
  fs::permissions(dir_ / "t/d1/s1/f1", fs::perms::owner_exec, fs::perm_options::add);
  const std::string chmodded = run("hash t").out;
  EXPECT_NE(chmodded, before);
  fs::rename(dir_ / "t/d1/s1/f1", dir_ / "t/d1/s1/g1");
  const std::string renamed = run("hash t").out;
  EXPECT_NE(renamed, chmodded);
  EXPECT_EQ(renamed.substr(0, renamed.find(' ')), tree_digest_by_shell(dir_ / "t"));
}

TEST_F(HashCli, FileDigestEqualsSha256sum) {
  write("big.bin", std::string((3u << 20) + 5, 'x'));
  const Result r = run("hash big.bin");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 71), "sha256:" + shell("sha256sum " + sh_quote((dir_ / "big.bin").string())).substr(0, 64));
}

TEST_F(HashCli, MissingPathIsAnError) {
  const Result r = run("hash nope");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("envpin: error: nope: cannot hash 'nope': no such file or directory"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "pin/sha256.hpp"
#include "render/quote.hpp"

namespace envpin::render {
namespace {

TEST(Quote, Shell) {
  EXPECT_EQ(sh_quote("plain"), "'plain'");
  EXPECT_EQ(sh_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(sh_quote(""), "''");
  EXPECT_EQ(sh_quote("$HOME `x` \"q\" 'a'"), "\"\\$HOME \\`x\\` \\\"q\\\" 'a'\"");
}

TEST(Quote, Dockerfile) {
  EXPECT_EQ(dockerfile_quote("a b"), "\"a b\"");
  EXPECT_EQ(dockerfile_quote("say \"hi\" $USER \\n"), "\"say \\\"hi\\\" \\$USER \\\\n\"");
}

TEST(Quote, PathWord) {
  auto lookup = [](const std::string& name) { return name == "DATA_DIR" ? std::string("/work/da\"ta") : std::string(); };
  EXPECT_EQ(sh_path_word("${DATA_DIR}/raw $x", lookup), "\"${DATA_DIR:-/work/da\\\"ta}/raw \\$x\"");
}

TEST(Sha256, KnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(pin::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(pin::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace envpin::render

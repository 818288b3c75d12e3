// SPDX-License-Identifier: Apache-2.0
// The smoke program's own SHA-256 (cmake/smoke/envpin_smoke_sha256.h, so a consuming project
// needs no crypto library) against OpenSSL's, over the lengths where padding changes shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "envpin_smoke_sha256.h"
#include "pin/sha256.hpp"

namespace envpin {
namespace {

std::string smoke_sha256(const std::string& bytes, std::size_t piece) {
  envpin_smoke::Sha256 sha;
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    sha.update(reinterpret_cast<const unsigned char*>(bytes.data() + at), std::min(piece, bytes.size() - at));
  return sha.hex();
}

TEST(SmokeSha256, MatchesOpenSslAtEveryPaddingBoundary) {
  // FIPS 180-2 appendix B.1: "abc".
  EXPECT_EQ(smoke_sha256("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string bytes;
  std::uint32_t x = 1;
  for (std::size_t n : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4 * 1048576 + 3}) {
    bytes.resize(n);
    for (char& c : bytes) c = static_cast<char>(x = x * 1664525u + 1013904223u);
    for (std::size_t piece : {std::size_t{1}, std::size_t{64}, std::size_t{1000}, n + 1})
      ASSERT_EQ(smoke_sha256(bytes, piece), pin::sha256_hex(bytes)) << n << " bytes in pieces of " << piece;
  }
}

}  // namespace
}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
// io::decompress stops a stream that expands past its cap (issue 49, class 3): a small
// Packages.xz from a server must not become gigabytes in memory.
#include <gtest/gtest.h>

#include <string>

#include "diag/error.hpp"
#include "io/decompress.hpp"

namespace envpin::io {
namespace {

// gzip of 100 bytes of 'x' (Python's gzip.compress(b"x" * 100, mtime=0)).
const std::string kHundredX(
    "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xab\xa8\xa0\x3d\x00\x00\x8f\x5d\x0e\x5e\x64\x00\x00\x00", 24);

TEST(Decompress, ExpandsWithinItsCapAndStopsPastIt) {
  EXPECT_EQ(decompress(kHundredX, "Packages.gz"), std::string(100, 'x'));
  EXPECT_EQ(decompress(kHundredX, "Packages.gz", 100), std::string(100, 'x'));
  try {
    decompress(kHundredX, "http://127.0.0.1:1/Packages.gz", 99);
    FAIL() << "expanded past the cap";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(),
              "cannot decompress http://127.0.0.1:1/Packages.gz: it expands to more than 99 B, the most "
              "envpin reads");
  }
}

}  // namespace
}  // namespace envpin::io

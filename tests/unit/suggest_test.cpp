// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "diag/suggest.hpp"

namespace envpin::diag {
namespace {

TEST(Suggest, ClosestCandidate) {
  constexpr std::string_view keys[] = {"cuda", "python", "platforms", "devcontainer"};
  EXPECT_EQ(closest("pyhton", keys), "python");
  EXPECT_EQ(closest("cuda_vesion", keys), "cuda");
  EXPECT_EQ(closest("Platform", keys), "platforms");
  EXPECT_EQ(closest("devcontianer", keys), "devcontainer");
  EXPECT_EQ(closest("zzz", keys), "");
  EXPECT_EQ(did_you_mean("pthon", keys), " (did you mean 'python'?)");
  EXPECT_EQ(did_you_mean("completely-different", keys), "");
}

}  // namespace
}  // namespace envpin::diag

// SPDX-License-Identifier: Apache-2.0
// Which torch minors a specifier allows (PEP 440 on release versions), and the pin that fixes the
// one the CUDA policy chose.
#include "resolve/torch_range.hpp"

#include <gtest/gtest.h>

namespace envpin::resolve {
namespace {

TEST(TorchRange, MinorsASpecifierAllows) {
  EXPECT_TRUE(minor_satisfies("2.9", ""));
  EXPECT_TRUE(minor_satisfies("2.7", ">=2.7"));
  EXPECT_FALSE(minor_satisfies("2.6", ">=2.7"));
  EXPECT_TRUE(minor_satisfies("2.7", ">=2.7.1"));  // 2.7.1 and later patches
  EXPECT_FALSE(minor_satisfies("2.8", "<2.8"));
  EXPECT_TRUE(minor_satisfies("2.7", "<2.8"));
  EXPECT_TRUE(minor_satisfies("2.7", "<=2.7.0"));
  EXPECT_FALSE(minor_satisfies("2.7", ">=2.8"));
  EXPECT_FALSE(minor_satisfies("2.7", ">2.7.1,<2.7.2"));
  EXPECT_TRUE(minor_satisfies("2.4", "~=2.4.1"));  // >=2.4.1, ==2.4.*
  EXPECT_FALSE(minor_satisfies("2.5", "~=2.4.1"));
  EXPECT_TRUE(minor_satisfies("2.9", "~=2.4"));  // >=2.4, ==2.*
  EXPECT_FALSE(minor_satisfies("2.8", "!=2.8.*"));
  EXPECT_TRUE(minor_satisfies("2.8", "!=2.8.0"));  // 2.8.1 is allowed
  EXPECT_TRUE(minor_satisfies("2.4", "==2.4.*"));
  EXPECT_FALSE(minor_satisfies("2.4", "==2.5.*"));
  EXPECT_TRUE(minor_satisfies("2.10", ">=2.9, <2.11"));
  EXPECT_FALSE(minor_satisfies("2.10", ">2.9,<2.10"));
}

TEST(TorchRange, PinAddsTheChosenMinor) {
  std::string error;
  std::size_t column = 0;
  const auto r = manifest::parse_requirement("torch[opt]>=2.7; platform_machine == 'x86_64'", error, column);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(pin_torch_range(*r, "2.9").text(), "torch[opt]>=2.7,==2.9.*; platform_machine == 'x86_64'");
  EXPECT_EQ(pin_torch_range(*r, "").text(), r->text());
  const auto bare = manifest::parse_requirement("torch", error, column);
  EXPECT_EQ(pin_torch_range(*bare, "2.14").text(), "torch==2.14.*");
  const auto other = manifest::parse_requirement("numpy>=1.26", error, column);
  EXPECT_EQ(pin_torch_range(*other, "2.9").text(), "numpy>=1.26");
}

}  // namespace
}  // namespace envpin::resolve

// SPDX-License-Identifier: Apache-2.0
// Libraries opened on first use: a missing library or function is one clear error naming the
// Debian package, never a crash at the first call.
#include <gtest/gtest.h>

#include <cstring>

#include "diag/error.hpp"
#include "io/shared_library.hpp"

namespace envpin::io {
namespace {

TEST(SharedLibrary, MissingLibraryNamesThePackage) {
  try {
    SharedLibrary lib("libenvpin-absent.so.7", "libenvpin-absent7");
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message().rfind("cannot load libenvpin-absent.so.7: ", 0), 0u) << e.message();
    EXPECT_EQ(e.hint(), "install it: apt-get install libenvpin-absent7");
  }
}

TEST(SharedLibrary, FunctionsHaveTheirDeclaredTypes) {
  const SharedLibrary libc("libc.so.6", "libc6");
  const auto strlen_fn = libc.function<decltype(std::strlen)>("strlen");
  EXPECT_EQ(strlen_fn("envpin"), 6u);
  EXPECT_THROW(libc.function<void()>("envpin_no_such_function"), diag::Error);
}

}  // namespace
}  // namespace envpin::io

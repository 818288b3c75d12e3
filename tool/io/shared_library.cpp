// SPDX-License-Identifier: Apache-2.0
#include "io/shared_library.hpp"

#include <dlfcn.h>

#include "diag/error.hpp"

namespace envpin::io {

SharedLibrary::SharedLibrary(std::string soname, std::string package)
    : soname_(std::move(soname)), package_(std::move(package)) {
  handle_ = ::dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = ::dlerror();
    throw diag::Error("cannot load " + soname_ + (why ? std::string(": ") + why : std::string()), std::nullopt,
                      "install it: apt-get install " + package_);
  }
}

void* SharedLibrary::address(const char* name) const {
  ::dlerror();
  void* p = ::dlsym(handle_, name);
  if (!p)
    throw diag::Error("cannot find " + std::string(name) + " in " + soname_ + " (an older version?)", std::nullopt,
                      "install the version envpin was built with: apt-get install " + package_);
  return p;
}

}  // namespace envpin::io

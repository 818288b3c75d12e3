// SPDX-License-Identifier: Apache-2.0
// A shared library opened on first use instead of at start. libcurl and libgit2 bring 50 more
// libraries with them (TLS, Kerberos, LDAP, SSH ...), and the dynamic loader's binding of their
// symbols cost every envpin command ~6 ms before main, most of its start-up time (measured:
// bench/run.sh "generate"); only lock, the registry checks, the REST commands and a project in a
// git work tree use them.
#pragma once

#include <string>

namespace envpin::io {

class SharedLibrary {
 public:
  // dlopen(soname); throws diag::Error naming the Debian package to install when it fails.
  SharedLibrary(std::string soname, std::string package);
  ~SharedLibrary() = default;  // never dlclose'd: its state lives as long as the process
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The function `name` with the type `Fn` its header declares, e.g.
  // lib.function<decltype(curl_easy_init)>("curl_easy_init"). Throws when absent.
  template <class Fn>
  Fn* function(const char* name) const {
    return reinterpret_cast<Fn*>(address(name));
  }

 private:
  void* address(const char* name) const;
  void* handle_ = nullptr;
  std::string soname_, package_;
};

}  // namespace envpin::io

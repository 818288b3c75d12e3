// SPDX-License-Identifier: Apache-2.0
// Runs the real envpin binary in a fresh directory per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"
#include "lock/lock.hpp"
#include "manifest/model.hpp"
#include "test_dir.hpp"

namespace envpin {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out;
  std::string err;
};

// The standard output of a shell command (the tools the tests check envpin against).
inline std::string shell(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  char buffer[4096];
  std::size_t n = 0;
  while (p && (n = fread(buffer, 1, sizeof buffer, p)) > 0) out.append(buffer, n);
  if (p) pclose(p);
  return out;
}

inline std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A lock for `m` that pins only its base image, 127.0.0.1:5000/envpin/bookworm:12, at a made-up
// digest (resolving needs a registry: tests/e2e does that for real). Sealed.
inline lock::Lock image_only_lock(const manifest::Manifest& m) {
  lock::Lock l;
  l.created_by = "envpin 0.1.0";
  l.platforms = {"linux/amd64"};
  l.inputs_digest = lock::inputs_digest(m);
  const std::string digest = "sha256:" + std::string(64, 'b');
  l.image = lock::Image{"127.0.0.1:5000/envpin/bookworm:12",
                        "127.0.0.1:5000/envpin/bookworm:12@" + digest,
                        digest,
                        "application/vnd.docker.distribution.manifest.v2+json",
                        {{"linux/amd64", digest, "sha256:" + std::string(64, 'c')}}};
  lock::seal(l);
  return l;
}

class Cli : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir("cli-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    state_ = dir_.string() + ".state";
    fs::remove_all(dir_);
    fs::remove_all(state_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove_all(state_);
  }

  // Runs envpin with `args` in the test's directory; `env` is a list of VAR=value words.
  Result run(const std::string& args, const std::string& env = "") {
    const fs::path out = dir_ / ".out", err = dir_ / ".err";
    // envpin's own state (the scripts it holds, io/state_dir.hpp) in the test's, never the user's.
    const std::string cmd = "cd " + sh_quote(dir_.string()) + " && XDG_STATE_HOME=" + sh_quote(state_.string()) + " " +
                            (env.empty() ? "" : "env " + env + " ") + sh_quote(ENVPIN_BINARY) + " " + args + " >" +
                            sh_quote(out.string()) + " 2>" + sh_quote(err.string());
    const int status = std::system(cmd.c_str());
    Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, io::read_file(out).value_or("<no output file>"),
             io::read_file(err).value_or("<no error file>")};
    fs::remove(out);
    fs::remove(err);
    return r;
  }
  void write(const std::string& rel, const std::string& text) { io::write_atomic(dir_ / rel, text, false); }
  std::vector<std::string> listing() {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (e.is_regular_file()) files.push_back(e.path().lexically_relative(dir_).generic_string());
    std::sort(files.begin(), files.end());
    return files;
  }

  fs::path dir_;
  fs::path state_;  // XDG_STATE_HOME of every run: beside dir_, so listing() never sees it
};

}  // namespace envpin

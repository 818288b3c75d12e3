// SPDX-License-Identifier: Apache-2.0
// The check of this machine or container against the manifest and envpin.lock (`envpin check`).
// The layer checks are the generated check_env.sh itself, rendered in memory for the current
// manifest and lock and run with /bin/sh: one implementation, so the CLI and the script in the
// image cannot drift apart. Added here what a script cannot do cheaply: the lock's integrity (bit
// 2 when it is stale or edited) and, deep, installed files against their RECORD and md5sums.
#pragma once

#include <string>
#include <vector>

namespace envpin::workflow {

struct Verdict {
  std::string status;  // ok, MISMATCH, STALE, skip
  std::string name;
  std::string detail;
};

struct CheckRequest {
  std::string manifest = "envpin.yaml";
  bool allow_no_gpu = false;
  bool deep = false;  // installed Python files against RECORD, deb files against md5sums
  bool smoke = false;
  bool require_gpu = false;
};

struct CheckResult {
  int status = 0;  // check_env.sh's bitmask: 1 mismatch, 2 stale, 4 could not check
  std::vector<Verdict> verdicts;
};

// Throws diag::Error when the checks cannot run at all (a bad manifest, no sh).
CheckResult check(const CheckRequest& request);

}  // namespace envpin::workflow

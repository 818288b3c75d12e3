// SPDX-License-Identifier: Apache-2.0
// `envpin smoke` and `envpin report --smoke`: envpin's CUDA smoke program (the integer and float
// kernels against the CPU) and the framework smoke (.envpin/smoke.py: a seeded forward and
// backward pass), each run once here, their JSON lines gathered into one object that `envpin
// diff` compares between machines.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace envpin::report {

inline constexpr const char* kSmokeSchema = "envpin.smoke/1";

struct SmokeOptions {
  std::string device = "auto";  // auto, cpu, cuda (cuda: no GPU is a failure, not a skip)
  std::optional<long> seed;     // the framework smoke's seed (default: its own fixed one)
  std::string kernel;           // the smoke program; empty: envpin-smoke on PATH
  bool run_kernel = true;       // false without cuda in the manifest, unless --kernel
  std::string python;           // the interpreter; empty: $ENVPIN_PYTHON, else python3
  std::string framework;        // .envpin/smoke.py; empty: no framework smoke (no torch)
};

// {"schema": "envpin.smoke/1", "kernel": {...}, "framework": {...}}: each part is the program's
// own JSON line plus "exit", or {"result": "unavailable", "message": ...} when it cannot run.
// Never throws for what the programs do; a program that prints no JSON is a "fail".
nlohmann::json run_smoke(const SmokeOptions& o);

// One aligned line per part: "kernel     PASS  ...".
std::string format_smoke(const nlohmann::json& smoke);

// True when a part failed (a skip or an unavailable part is not a failure).
bool smoke_failed(const nlohmann::json& smoke);

}  // namespace envpin::report

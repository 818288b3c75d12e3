// SPDX-License-Identifier: Apache-2.0
// `envpin check`: its options and how the verdicts are printed; workflow/check.hpp checks.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/text.hpp"
#include "workflow/check.hpp"

namespace envpin::cli {
namespace {

struct CheckOptions {
  std::string manifest = "envpin.yaml";
  bool quiet = false;
  bool allow_no_gpu = false;
  bool deep = false;
  bool json = false;
  bool smoke = false;
  bool require_gpu = false;
};

int check(const CheckOptions& o, Streams& io) {
  const workflow::CheckResult result = workflow::check({o.manifest, o.allow_no_gpu, o.deep, o.smoke, o.require_gpu});
  const std::vector<workflow::Verdict>& verdicts = result.verdicts;
  const int status = result.status;
  int ok = 0, bad = 0, skipped = 0;
  for (const auto& v : verdicts) (v.status == "ok" ? ok : v.status == "skip" ? skipped : bad)++;
  if (o.json) {
    nlohmann::json j = {{"schema", "envpin.check/1"}, {"status", status}, {"verdicts", nlohmann::json::array()}};
    for (const auto& v : verdicts)
      j["verdicts"].push_back(
          {{"status", v.status}, {"name", diag::printable(v.name)}, {"detail", diag::printable(v.detail)}});
    io.out << j.dump(2) << "\n";
    return status;
  }
  for (const auto& v : verdicts) {
    if (o.quiet && (v.status == "ok" || v.status == "skip")) continue;
    std::string name_col = v.name;
    name_col.resize(std::max<std::size_t>(24, name_col.size()), ' ');
    // The details quote programs and files (a smoke program's line, a package's version): one
    // printable line each, as envpin prints all such text.
    io.out << diag::paint_verdict(io.out_term, v.status)
           << std::string(8 - std::min<std::size_t>(8, v.status.size()), ' ') << " " << diag::printable(name_col) << " "
           << diag::printable(v.detail) << "\n";
  }
  io.out << "envpin check: " << ok << " ok, " << bad << " mismatch, " << skipped << " skipped\n";
  return status;
}

}  // namespace

Command check_command() {
  return {"check", "check this machine or container against the manifest and envpin.lock (exit bitmask 1/2/4)",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<CheckOptions>();
            manifest_option(app, o->manifest);
            app.add_flag("-q,--quiet", o->quiet, "print only problems and the summary");
            app.add_flag("--allow-no-gpu", o->allow_no_gpu, "GPU checks become skips on machines without a GPU");
            app.add_flag("--smoke", o->smoke,
                         "also run the smoke tests (the CUDA kernel, the framework smoke); a kernel without a GPU "
                         "is a skip");
            app.add_flag("--require-gpu", o->require_gpu, "with --smoke: no GPU is a mismatch, not a skip");
            app.add_flag("--deep", o->deep, "also hash installed Python files (RECORD) and deb files (md5sums); slow");
            app.add_flag("--json", o->json, "print the verdicts as JSON (schema envpin.check/1)");
            return [o](Streams& io) { return check(*o, io); };
          }};
}

}  // namespace envpin::cli

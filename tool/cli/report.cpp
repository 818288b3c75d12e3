// SPDX-License-Identifier: Apache-2.0
// `envpin report` describes this machine; `envpin diff` compares two reports.
#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/json_input.hpp"
#include "io/process.hpp"
#include "manifest/load.hpp"
#include "report/diff.hpp"
#include "report/report.hpp"
#include "sync/remote.hpp"
#include "workflow/project.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::string manifest;  // default: envpin.yaml when present
  std::string output;
  bool json = false;
  bool smoke = false;
};

int report_cmd(const ReportOptions& o, Streams& io) {
  std::optional<manifest::Manifest> m;
  const std::string file = o.manifest.empty() ? "envpin.yaml" : o.manifest;
  if (!o.manifest.empty() || fs::exists(file)) m = manifest::load(file);
  nlohmann::json r = report::collect(m ? &*m : nullptr, report::options_from_environment());
  if (o.smoke) r["smoke"] = report::run_smoke(workflow::smoke_options(m ? &*m : nullptr));
  const std::string text = o.json || !o.output.empty() ? r.dump(2) + "\n" : report::format(r);
  if (!o.output.empty()) {
    io::write_atomic(o.output, text, false);
    io.out << "wrote " << o.output << "\n";
  } else {
    io.out << text;
  }
  return kOk;
}

struct DiffOptions {
  std::string a, b;
  std::string host;  // [user@]host:path: this machine against the server
  bool json = false;
};

nlohmann::json read_report(const std::string& file) {
  const auto text = io::read_file(file);
  if (!text)
    throw diag::Error("cannot read " + file, diag::Location{file, 0, 0},
                      "make it with 'envpin report --json --output " + file + "'");
  bool too_deep = false;
  nlohmann::json j = io::parse_bounded_json(*text, &too_deep);
  if (too_deep)
    throw diag::Error(
        "the JSON nests deeper than " + std::to_string(io::kMaxJsonDepth) + " levels, which no envpin report does",
        diag::Location{file, 0, 0}, "make it with 'envpin report --json --output " + file + "'");
  if (!j.is_discarded()) return j;
  try {
    return nlohmann::json::parse(*text);  // not JSON: for the parser's own words on where
  } catch (const nlohmann::json::parse_error& e) {
    throw diag::Error("not JSON: " + std::string(e.what()), diag::Location{file, 0, 0},
                      "make it with 'envpin report --json --output " + file + "'");
  }
}

// This machine's report against the server's (`envpin report --json` run there over ssh).
std::pair<nlohmann::json, nlohmann::json> here_and_there(const DiffOptions& o) {
  const sync::Target t = sync::parse_target(o.host);
  std::optional<manifest::Manifest> m;
  if (fs::exists("envpin.yaml")) m = manifest::load("envpin.yaml");
  nlohmann::json here = report::collect(m ? &*m : nullptr, report::options_from_environment());
  const io::ProcessResult r = io::run_process(sync::remote_envpin_argv(t, {"report", "--json"}));
  if (r.exit_code == 127)
    throw diag::Error("envpin is not installed on " + t.host + " (or " + diag::quote(t.path) + " is missing)",
                      std::nullopt, "install it there, or set ENVPIN_REMOTE_ENVPIN to its path");
  if (r.exit_code != 0) throw sync::remote_error(r.err, r.exit_code, t, "envpin report on");
  nlohmann::json there = io::parse_bounded_json(r.out);
  if (!there.is_discarded()) return {std::move(here), std::move(there)};
  {
    throw diag::Error("envpin report on " + t.destination + " did not print a report", std::nullopt,
                      "run 'envpin remote " + o.host + " -- report --json' to see what it prints");
  }
}

int diff_cmd(const DiffOptions& o, Streams& io) {
  if (o.host.empty() && (o.a.empty() || o.b.empty()))
    throw diag::Error("diff needs two reports, or --host", std::nullopt,
                      "envpin diff A.json B.json, or envpin diff --host user@host:path");
  if (!o.host.empty() && !o.a.empty())
    throw diag::Error("diff --host compares this machine with the server; it takes no report files", std::nullopt,
                      "drop the file names, or drop --host");
  const auto [a, b] = o.host.empty() ? std::pair{read_report(o.a), read_report(o.b)} : here_and_there(o);
  const std::string name_a = o.host.empty() ? o.a : "here", name_b = o.host.empty() ? o.b : o.host;
  const auto d = report::diff(a, b, name_a, name_b);
  io.out << (o.json ? report::diff_json(d).dump(2) + "\n" : report::format_diff(d));
  const bool breaks = std::any_of(d.begin(), d.end(), [](const auto& x) { return x.verdict == "breaks"; });
  return breaks ? kError : kOk;
}

}  // namespace

Command report_command() {
  return {"report", "describe this machine in four layers: system, GPU, packages, config",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<ReportOptions>();
            app.add_option("-f,--manifest", o->manifest,
                           "the manifest whose env, secrets and paths to report (default: envpin.yaml when present)");
            app.add_option("-o,--output", o->output, "write the JSON report to this file");
            app.add_flag("--json", o->json, "print JSON (schema envpin.report/1)");
            app.add_flag("--smoke", o->smoke,
                         "run the smoke tests too (as 'envpin smoke' does) and include their results and digests");
            return [o](Streams& io) { return report_cmd(*o, io); };
          }};
}

Command diff_command() {
  return {"diff", "compare two reports layer by layer; exit 1 when a difference breaks the job",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<DiffOptions>();
            app.add_option("a", o->a, "the first report (envpin report --json)");
            app.add_option("b", o->b, "the second report");
            app.add_option("--host", o->host,
                           "[user@]host:path: this machine against the server (envpin report there over ssh)");
            app.add_flag("--json", o->json, "print JSON (schema envpin.diff/1)");
            return [o](Streams& io) { return diff_cmd(*o, io); };
          }};
}

}  // namespace envpin::cli

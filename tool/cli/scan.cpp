// SPDX-License-Identifier: Apache-2.0
// `envpin scan [PATH]`: host paths, secret files in the build context, secrets in env.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "manifest/load.hpp"
#include "scan/scan.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct ScanOptions {
  std::string path = ".";
  std::string manifest;  // default: PATH/envpin.yaml when it exists
  bool json = false;
};

int scan(const ScanOptions& o, Streams& io) {
  if (!fs::is_directory(o.path))
    throw diag::Error("cannot scan '" + o.path + "': not a directory", diag::Location{o.path, 0, 0},
                      "give the project directory");
  std::optional<manifest::Manifest> m;
  const std::string manifest = o.manifest.empty() ? (fs::path(o.path) / "envpin.yaml").string() : o.manifest;
  if (!o.manifest.empty() || fs::exists(manifest)) m = manifest::load(manifest);
  const scan::Report r = scan::scan_tree(o.path, o.path, m ? &*m : nullptr);
  if (o.json) {
    nlohmann::json j;
    j["schema"] = "envpin.scan/1";
    j["files"] = r.files;
    j["skipped"] = r.skipped;
    j["findings"] = nlohmann::json::array();
    for (const auto& f : r.findings)
      j["findings"].push_back({{"kind", f.kind},
                               {"file", f.file},
                               {"line", f.line},
                               {"column", f.column},
                               {"what", f.what},
                               {"fix", f.fix}});
    io.out << j.dump(2) << "\n";
  } else {
    for (const auto& f : r.findings) {
      io.out << f.file;
      if (f.line) io.out << ":" << f.line << ":" << f.column;
      io.out << ": " << f.what << "\n  fix: " << f.fix << "\n";
    }
    for (const auto& s : r.skipped) io.err << "envpin: scan: skipped " << s << "\n";
    io.err << "envpin: scan: " << r.files << " text file(s), " << r.findings.size() << " finding(s)\n";
  }
  return r.findings.empty() ? kOk : kError;
}

}  // namespace

Command scan_command() {
  return {"scan", "find hard-coded host paths, secret files in the build context and secrets in env (exit 1 if any)",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<ScanOptions>();
            app.add_option("path", o->path, "the project directory")->capture_default_str();
            app.add_option("-f,--manifest", o->manifest, "the manifest (default: PATH/envpin.yaml when present)");
            app.add_flag("--json", o->json, "print the findings as JSON (schema envpin.scan/1)");
            return [o](Streams& io) { return scan(*o, io); };
          }};
}

}  // namespace envpin::cli

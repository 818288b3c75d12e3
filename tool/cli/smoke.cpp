// SPDX-License-Identifier: Apache-2.0
// `envpin smoke`: the CUDA smoke kernel and the framework smoke, run here, printed together.
#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "io/atomic_file.hpp"
#include "manifest/load.hpp"
#include "report/smoke.hpp"
#include "workflow/project.hpp"

namespace envpin::cli {

namespace fs = std::filesystem;

namespace {

struct SmokeArgs {
  std::string manifest;
  std::string device = "auto";
  std::optional<long> seed;
  std::string kernel;
  std::string python;
  std::string output;
  bool json = false;
};

int smoke_cmd(const SmokeArgs& a, Streams& io) {
  std::optional<manifest::Manifest> m;
  const std::string file = a.manifest.empty() ? "envpin.yaml" : a.manifest;
  if (!a.manifest.empty() || fs::exists(file)) m = manifest::load(file);
  report::SmokeOptions o = workflow::smoke_options(m ? &*m : nullptr);
  if (!a.kernel.empty()) {
    o.kernel = a.kernel;
    o.run_kernel = true;
  }
  if (!o.run_kernel && o.framework.empty())
    throw diag::Error(m->file + " has neither a cuda section nor torch: there is no smoke test for it",
                      diag::Location{m->file, 0, 0}, "add cuda or torch to the manifest, or pass --kernel PROGRAM");
  o.device = a.device;
  o.seed = a.seed;
  o.python = a.python;
  const nlohmann::json s = report::run_smoke(o);
  const std::string json_text = s.dump(2) + "\n";
  if (!a.output.empty()) {
    io::write_atomic(a.output, json_text, false);
    io.out << report::format_smoke(s) << "wrote " << a.output << "\n";
  } else {
    io.out << (a.json ? json_text : report::format_smoke(s));
  }
  return report::smoke_failed(s) ? kError : kOk;
}

}  // namespace

Command smoke_command() {
  return {"smoke", "run the CUDA smoke kernel and the framework smoke here; print device, loss and digests",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto a = std::make_shared<SmokeArgs>();
            app.add_option("-f,--manifest", a->manifest, "the manifest (default: envpin.yaml when present)");
            app.add_option("--device", a->device, "auto (the GPU when there is one), cpu, or cuda (no GPU fails)")
                ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
            app.add_option("--seed", a->seed, "the framework smoke's seed (digests compare only at the same seed)");
            app.add_option("--kernel", a->kernel,
                           "the smoke program (default: envpin-smoke on PATH, as in the image; "
                           "'cmake --build . --target smoke' builds one)");
            app.add_option("--python", a->python, "the interpreter with torch (default: $ENVPIN_PYTHON, else python3)");
            app.add_option("-o,--output", a->output, "also write the results as JSON (envpin.smoke/1) to this file");
            app.add_flag("--json", a->json, "print JSON (schema envpin.smoke/1), which 'envpin diff' compares");
            return [a](Streams& io) { return smoke_cmd(*a, io); };
          }};
}

}  // namespace envpin::cli

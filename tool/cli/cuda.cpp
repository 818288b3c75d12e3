// SPDX-License-Identifier: Apache-2.0
// `envpin cuda`: the CUDA decision for a manifest, for flags, or for this machine.
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "manifest/load.hpp"
#include "probe/gpu_probe.hpp"
#include "resolve/cuda_policy.hpp"
#include "resolve/environment.hpp"

namespace envpin::cli {
namespace {

struct CudaOptions : resolve::CudaFlags {
  std::string manifest;
  bool json = false;
  bool probe = false;
};

int cuda_decide(const CudaOptions& o, Streams& io);

// With --json, stdout always holds one object of the same shape (docs/commands.md, "envpin cuda --json"):
// a refusal is {"decision": null, "machine": null, "error": {...}} there, and the usual lines on
// stderr, exit 1.
int cuda(const CudaOptions& o, Streams& io) {
  if (!o.json) return cuda_decide(o, io);
  try {
    return cuda_decide(o, io);
  } catch (const diag::Error& e) {
    nlohmann::json error = {
        {"message", e.message()}, {"hint", e.hint()}, {"file", nullptr}, {"line", nullptr}, {"column", nullptr}};
    if (e.where()) {
      error["file"] = e.where()->file;
      if (e.where()->line > 0) error["line"] = e.where()->line;
      if (e.where()->column > 0) error["column"] = e.where()->column;
    }
    const nlohmann::json j = {{"decision", nullptr}, {"machine", nullptr}, {"error", error}};
    io.out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    throw;
  }
}

int cuda_decide(const CudaOptions& o, Streams& io) {
  const bool flags_given = !o.gpus.empty() || !o.cuda.empty() || !o.driver.empty() || !o.torch.empty();
  std::optional<manifest::Manifest> m;
  const std::string manifest_file = o.manifest.empty() ? "envpin.yaml" : o.manifest;
  if (!o.manifest.empty() || (!flags_given && !o.probe)) m = manifest::load(manifest_file);
  if (m && !m->cuda)
    throw diag::Error(
        m->file + " has no cuda section", diag::Location{m->file, 0, 0},
        "add one (see the cuda.* keys in docs/manifest-guide.md), or pass --gpu/--cuda to ask without a manifest");

  std::optional<probe::GpuProbe> machine;
  CudaOptions effective = o;
  if (o.probe) {
    machine = probe::probe_machine(probe::options_from_environment());
    // This machine fills the inputs nobody gave: its GPUs and its driver.
    if (!m && effective.gpus.empty())
      for (const auto& g : machine->gpus) effective.gpus.push_back(g.sm ? "sm_" + std::to_string(g.sm) : g.name);
    if (effective.driver.empty() && !(m && m->cuda->driver)) effective.driver = machine->driver;
  }

  std::optional<resolve::CudaDecision> decision;
  if (m || !effective.gpus.empty() || !o.probe)
    decision = resolve::decide_cuda(resolve::request_from_flags(effective, m ? &*m : nullptr));
  if (decision)
    for (const auto& w : decision->warnings)
      io.err << diag::paint_diagnostic(io.err_term, diag::format_warning(w.text, w.where));

  if (o.json) {
    nlohmann::json j;
    j["decision"] = decision ? nlohmann::json::parse(resolve::decision_json(*decision)) : nlohmann::json(nullptr);
    j["machine"] = machine ? nlohmann::json::parse(probe::probe_json(*machine)) : nlohmann::json(nullptr);
    j["error"] = nullptr;
    io.out << j.dump(2) << "\n";
    return kOk;
  }
  if (machine) io.out << probe::format_probe(*machine) << (decision ? "\n" : "");
  if (decision) io.out << resolve::format_decision(*decision);
  return kOk;
}

}  // namespace

Command cuda_command() {
  return {"cuda", "choose the CUDA toolkit, arch list and torch wheels for a fleet, and say why",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<CudaOptions>();
            app.add_option("-f,--manifest", o->manifest,
                           "read the request from this manifest (default: envpin.yaml unless flags are given)");
            app.add_option("--gpu", o->gpus,
                           "a GPU of the fleet: product (H100) or capability (9.0); repeat for a mixed fleet");
            app.add_option("--driver", o->driver, "the fleet's lowest NVIDIA driver, e.g. 535.104.05");
            app.add_option("--torch", o->torch, "the torch version to install, e.g. 2.4.1");
            app.add_option("--cuda", o->cuda, "the CUDA toolkit, x.y or x.y.z, or 'auto' (default)");
            app.add_option("--platform", o->platforms, "linux/amd64 (default) or linux/arm64; repeatable");
            app.add_option("--os", o->os,
                           "the Ubuntu of the image, e.g. ubuntu24.04 (default: ubuntu22.04 where published)");
            app.add_flag("--probe", o->probe, "describe this machine's driver, GPUs and nvcc, and decide for them");
            app.add_flag("--json", o->json, "print JSON: {\"decision\": ..., \"machine\": ...}");
            return [o](Streams& io) { return cuda(*o, io); };
          }};
}

}  // namespace envpin::cli

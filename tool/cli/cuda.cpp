// SPDX-License-Identifier: Apache-2.0
// `envpin cuda`: the CUDA decision for a manifest, for flags, or for this machine.
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/cursor.hpp"
#include "manifest/load.hpp"
#include "manifest/requirement.hpp"
#include "probe/gpu_probe.hpp"
#include "resolve/cuda_policy.hpp"
#include "resolve/environment.hpp"

namespace envpin::cli {
namespace {

using resolve::Input;
using resolve::Origin;

struct CudaOptions {
  std::string manifest;
  std::vector<std::string> gpus;
  std::string driver;
  std::string torch;
  std::string cuda;
  std::vector<std::string> platforms;
  std::string os;
  bool json = false;
  bool probe = false;
};

Origin flag(const char* name) { return Origin{name, std::nullopt}; }

// A value as pasted from a terminal: without the spaces around it.
std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t") - first + 1));
}

// "--torch 'torch>=2.6,<2.8'" or "--torch torch==2.4.1": a requirement line, the name first.
std::string torch_specifier(std::string_view s) {
  std::string v = trimmed(s);
  if (v.size() > 5 && (v.compare(0, 5, "torch") == 0 || v.compare(0, 5, "Torch") == 0) &&
      std::string_view("=<>!~ ").find(v[5]) != std::string_view::npos)
    v = trimmed(v.substr(5));
  return v;
}

// Flags override what the manifest says; without a manifest they are the whole request.
resolve::CudaRequest build_request(const CudaOptions& given, const manifest::Manifest* m) {
  CudaOptions o = given;
  for (std::string* v : {&o.driver, &o.cuda, &o.os}) *v = trimmed(*v);
  for (std::string& v : o.gpus) v = trimmed(v);
  for (std::string& v : o.platforms) v = trimmed(v);
  o.torch = torch_specifier(o.torch);
  resolve::CudaRequest r;
  if (m) r = resolve::request_from_manifest(*m);
  if (!o.cuda.empty()) {
    diag::Cursor c{o.cuda};
    const bool version = c.digits(1, 2) && c.eat(".") && c.digits(1, 2) && (c.done() || (c.eat(".") && c.digits(1, 2)));
    if (o.cuda != "auto" && !(version && c.done()))
      throw diag::Error("invalid CUDA version '" + o.cuda + "'", diag::Location{"--cuda", 0, 0},
                        "give the toolkit as x.y or x.y.z, e.g. '--cuda 12.4', or 'auto'");
    r.cuda = {o.cuda, flag("--cuda")};
  }
  if (!o.gpus.empty()) {
    r.gpus.clear();
    r.gpus_origin = flag("--gpu");
    for (const auto& g : o.gpus) r.gpus.push_back({g, flag("--gpu")});
  }
  if (!o.driver.empty()) {
    std::string v = o.driver;
    if (v.starts_with(">=")) v.erase(0, 2);
    r.driver = Input<std::string>{v, flag("--driver")};
  }
  if (!o.torch.empty() && o.torch.find_first_of("<>=!~,") != std::string::npos && !o.torch.starts_with("==")) {
    // A range ("--torch '>=2.7'"): the policy picks the newest release in it that fits.
    r.torch.reset();
    r.torch_variant.reset();
    r.torch_range = Input<std::string>{o.torch, flag("--torch")};
  } else if (!o.torch.empty()) {
    std::string v = o.torch.starts_with("==") ? o.torch.substr(2) : o.torch;
    r.torch_variant.reset();
    if (const auto plus = v.find('+'); plus != std::string::npos) {
      r.torch_variant = Input<std::string>{v.substr(plus + 1), flag("--torch")};
      v.resize(plus);
    }
    r.torch = Input<std::string>{v, flag("--torch")};
  }
  if (!o.platforms.empty()) {
    r.platforms.clear();
    for (const auto& p : o.platforms) {
      if (p != "linux/amd64" && p != "linux/arm64")
        throw diag::Error("unsupported platform '" + p + "'", diag::Location{"--platform", 0, 0},
                          "use linux/amd64 or linux/arm64");
      r.platforms.push_back({{p == "linux/arm64" ? manifest::Arch::arm64 : manifest::Arch::amd64}, flag("--platform")});
    }
  }
  if (!o.os.empty()) {
    if (!o.os.starts_with("ubuntu"))
      throw diag::Error("nvidia/cuda images are built on Ubuntu, not '" + o.os + "'", diag::Location{"--os", 0, 0},
                        "use --os ubuntu22.04 or --os ubuntu24.04");
    r.ubuntu = Input<std::string>{o.os.substr(6), flag("--os")};
  }
  return r;
}

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
    decision = resolve::decide_cuda(build_request(effective, m ? &*m : nullptr));
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

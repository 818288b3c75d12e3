// SPDX-License-Identifier: Apache-2.0
// A CUDA decision as `envpin cuda` prints it, and as JSON.
#include <nlohmann/json.hpp>

#include <sstream>

#include "resolve/cuda_policy.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::resolve {
namespace {

std::string fit_text(DriverFit f) {
  switch (f) {
    case DriverFit::full:
      return "full";
    case DriverFit::minor_version:
      return "minor-version";
    case DriverFit::forward:
      return "forward";
    case DriverFit::unknown:
      break;
  }
  return "unknown";
}

}  // namespace

std::string format_decision(const CudaDecision& d) {
  std::ostringstream out;
  auto row = [&](const char* key, const std::string& value) {
    out << "  " << key << std::string(15 - std::string(key).size(), ' ') << value << "\n";
  };
  out << "CUDA " << d.toolkit << "\n";
  row("image", d.base_image);
  if (!d.devel_image.empty()) row("smoke stage", d.devel_image + " (nvcc)");
  std::string platforms;
  for (const auto& p : d.platforms) platforms += (platforms.empty() ? "" : ", ") + p;
  row("platforms", platforms);
  std::string gpus;
  for (const auto& g : d.gpus) gpus += (gpus.empty() ? "" : ", ") + gpu_label(g);
  row("gpus", gpus);
  row("cmake archs", d.cmake_architectures);
  row("torch archs", d.torch_arch_list);
  row("driver",
      ">= " + d.driver_packaged +
          (d.driver_minor_compat.empty() ? "" : " (minor-version compatibility: >= " + d.driver_minor_compat + ")"));
  if (!d.driver_floor.empty()) row("fleet driver", d.driver_floor + " (" + fit_text(d.driver_fit) + " compatibility)");
  if (d.torch) row("torch", d.torch->version + " " + d.torch->variant + " from " + d.torch->index_url);
  out << "why:\n";
  for (const auto& r : d.reasons) out << "  - " << r << "\n";
  return out.str();
}

std::string decision_json(const CudaDecision& d) {
  nlohmann::json j;
  j["toolkit"] = d.toolkit;
  j["minor"] = d.minor;
  j["base_image"] = d.base_image;
  j["devel_image"] = d.devel_image;
  j["os"] = "ubuntu" + d.os_version;
  j["platforms"] = d.platforms;
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : d.gpus)
    j["gpus"].push_back(
        {{"input", g.input}, {"product", g.product}, {"sm", g.sm}, {"capability", capability_text(g.sm)}});
  j["sms"] = d.sms;
  j["cmake_architectures"] = d.cmake_architectures;
  j["torch_cuda_arch_list"] = d.torch_arch_list;
  j["driver"] = {{"packaged", d.driver_packaged},
                 {"minor_version_compat", d.driver_minor_compat},
                 {"fleet_floor", d.driver_floor},
                 {"fit", fit_text(d.driver_fit)}};
  j["start_gate"] = {{"verdict", d.start_gate.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.start_gate)},
                     {"bypassed", d.gate_bypassed}};
  if (d.torch)
    j["torch"] = {{"version", d.torch->version},
                  {"variant", d.torch->variant},
                  {"index_url", d.torch->index_url},
                  {"range", d.torch->range.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.torch->range)},
                  {"sass", d.torch->sass},
                  {"ptx", d.torch->ptx ? nlohmann::json(d.torch->ptx) : nlohmann::json(nullptr)}};
  else
    j["torch"] = nullptr;
  j["reasons"] = d.reasons;
  j["warnings"] = nlohmann::json::array();
  for (const auto& w : d.warnings) j["warnings"].push_back(w.text);
  return j.dump(2) + "\n";
}

}  // namespace envpin::resolve

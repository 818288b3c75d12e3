// SPDX-License-Identifier: Apache-2.0
#include "resolve/cuda_packages.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "diag/error.hpp"
#include "diag/text.hpp"

namespace envpin::resolve {

namespace {

// The CUDA a package is built for, as its name, an extra or its local version says.
struct Build {
  int major = 0;
  std::string variant;  // "cu118" from a local version: torch's own wheels must match it exactly
  std::string what;     // "its name", "its extra [cuda12]", "its version +cu118"
  std::string fix;
};

// Digits right after `prefix` at the end of `s` (or before a trailing `suffix`): "11" from
// "nvidia-cublas-cu11" with "-cu".
std::optional<std::string> digits_after(const std::string& s, const std::string& prefix, const std::string& suffix) {
  if (!s.ends_with(suffix)) return std::nullopt;
  const std::string head = s.substr(0, s.size() - suffix.size());
  const auto at = head.rfind(prefix);
  if (at == std::string::npos) return std::nullopt;
  const std::string d = head.substr(at + prefix.size());
  if (d.empty() || d.size() > 3 || !std::all_of(d.begin(), d.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return d;
}

// "118" -> 11, "12" -> 12, "92" -> 9 (CUDA 9.2: no CUDA major has reached 20).
int major_of_digits(const std::string& d) {
  if (d.size() == 3) return std::stoi(d.substr(0, 2));
  const int v = std::stoi(d);
  return v >= 20 ? v / 10 : v;
}

std::optional<Build> build_of(const manifest::Requirement& r) {
  const std::string& n = r.normalized;
  // NVIDIA's runtime wheels (nvidia-cublas-cu11, nvidia-cudnn-cu12) and projects named per CUDA
  // (dgl-cu113, mxnet-cu112): torch's own wheels depend on the ones they need.
  if (const auto d = digits_after(n, "-cu", ""))
    return Build{major_of_digits(*d), "", "its name",
                 n.starts_with("nvidia-") ? "drop it: torch's wheels bring the CUDA libraries they need"
                                          : "use the build for the chosen CUDA"};
  // CuPy: cupy-cuda11x, cupy-cuda12x (and the older cupy-cuda113).
  if (const auto d = digits_after(n, "cupy-cuda", "x")) return Build{std::stoi(*d), "", "its name", ""};
  if (const auto d = digits_after(n, "cupy-cuda", "")) return Build{major_of_digits(*d), "", "its name", ""};
  for (const std::string& e : r.extras) {
    std::string x = manifest::normalize_name(e);
    for (const std::string& p : {std::string("cuda"), std::string("cu")})
      for (const std::string& tail : {std::string("x"), std::string("")})
        if (const auto d = digits_after(x, p, tail);
            d && x.starts_with(p) && x.size() == p.size() + d->size() + tail.size())
          return Build{major_of_digits(*d), "", "its extra [" + e + "]", ""};
  }
  if (const auto v = r.pinned())
    if (const auto plus = v->find("+cu"); plus != std::string::npos)
      if (const auto d = digits_after(*v, "+cu", ""); d && d->size() >= 2)
        return Build{major_of_digits(*d), "cu" + *d, "its version +cu" + *d, ""};
  return std::nullopt;
}

}  // namespace

std::vector<std::string> cuda_package_warnings(const manifest::Manifest& m, const CudaDecision& decision) {
  std::vector<std::string> out;
  if (!m.python) return out;
  const bool torch = decision.torch.has_value();
  const std::string variant = torch ? decision.torch->variant : "";
  // "cu121" -> 12, toolkit "12.4.1" -> 12.
  const int chosen_major = std::stoi(torch ? variant.substr(2, 2) : decision.toolkit);
  const std::string subject = torch ? "torch's " + variant + " wheels, which bring CUDA " + std::to_string(chosen_major)
                                    : "the CUDA " + decision.toolkit + " image";
  const auto check = [&](const manifest::Located<manifest::Requirement>& p) {
    const manifest::Requirement& r = p.value;
    if (r.normalized == "torch") return;  // the CUDA choice itself
    const auto b = build_of(r);
    if (!b) return;
    // Without torch an nvidia-*-cuNN wheel is wanted by something else (onnxruntime, tensorflow)
    // and brings its own CUDA libraries: nothing the image's toolkit replaces.
    if (!torch && r.normalized.starts_with("nvidia-")) return;
    const bool other_variant = torch && !b->variant.empty() && b->variant != variant;
    if (b->major == chosen_major && !other_variant) return;
    std::string fix = b->fix;
    if (!b->variant.empty())
      fix = torch ? "pin +" + variant + " (the chosen torch's variant)" : "drop the local version";
    else if (r.normalized.starts_with("cupy-cuda"))
      fix = "use cupy-cuda" + std::to_string(chosen_major) + "x";
    else if (fix.empty())
      fix = "use the extra for CUDA " + std::to_string(chosen_major);
    out.push_back(diag::format_warning("'" + diag::printable(r.name) + "' is built for CUDA " +
                                           (other_variant ? b->variant : std::to_string(b->major)) + " (" + b->what +
                                           "), but the environment runs " + subject + ": " + fix,
                                       p.where));
  };
  for (const auto& p : m.python->packages) check(p);
  for (const auto& p : m.python->requirement_lines) check(p);
  return out;
}

}  // namespace envpin::resolve

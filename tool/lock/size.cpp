// SPDX-License-Identifier: Apache-2.0
#include "lock/size.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "manifest/requirement.hpp"

namespace envpin::lock {
namespace {

using json = nlohmann::json;

// The CUDA libraries an nvidia/cuda image flavor installs that a torch wheel set brings again.
// NVIDIA's Dockerfiles (gitlab.com/nvidia/container-images/cuda, dist/12.x/ubuntu2204): `base`
// has the CUDA runtime (libcudart) and cuda-compat only; `runtime` adds cuda-libraries (cudart,
// NVRTC, cuFFT, cuRAND, cuSOLVER, cuSPARSE, nvJitLink, NPP, nvJPEG), cuda-nvtx, libcublas and
// libnccl2 (pytorch/serve#2392 lists them in /usr/local/cuda/lib64); `devel` is built FROM
// `runtime`; the cudnn flavors add libcudnn. libcudart is in every flavor and under 1 MB: not
// listed. The wheel of each: nvidia-NAME, NAME-cu11 or -cu12 (torch's Requires-Dist).
struct CudaLibrary {
  const char* library;
  const char* wheel;   // the wheel's name without its -cuNN suffix
  const char* soname;  // the soname without its version
  const char* fixed;   // the soname's version when it is not the wheel's major version
  bool cudnn_only;     // only in the cudnn flavors
};
constexpr CudaLibrary kLibraries[] = {
    {"cuDNN", "nvidia-cudnn", "libcudnn.so", nullptr, true},
    {"cuBLAS", "nvidia-cublas", "libcublas.so", nullptr, false},
    {"NCCL", "nvidia-nccl", "libnccl.so", nullptr, false},
    {"cuSPARSE", "nvidia-cusparse", "libcusparse.so", nullptr, false},
    {"cuSOLVER", "nvidia-cusolver", "libcusolver.so", nullptr, false},
    {"cuFFT", "nvidia-cufft", "libcufft.so", nullptr, false},
    {"cuRAND", "nvidia-curand", "libcurand.so", nullptr, false},
    {"NVRTC", "nvidia-cuda-nvrtc", "libnvrtc.so", nullptr, false},
    {"nvJitLink", "nvidia-nvjitlink", "libnvJitLink.so", nullptr, false},
    {"NVTX", "nvidia-nvtx", "libnvToolsExt.so", "1", false},
};

// "nvidia-cublas-cu12" and "nvidia-cublas" are cuBLAS's wheels; "nvidia-cusparselt-cu12" is not cuSPARSE's.
bool is_wheel_of(std::string_view name, std::string_view stem) {
  if (!name.starts_with(stem)) return false;
  std::string_view rest = name.substr(stem.size());
  if (rest.empty()) return true;
  if (!rest.starts_with("-cu") || rest.size() == 3) return false;
  for (char c : rest.substr(3))
    if (c < '0' || c > '9') return false;
  return true;
}

std::int64_t wheel_bytes(const PythonPackage& p, int& unknown) {
  std::int64_t bytes = 0;
  for (const WheelFile& f : p.files) {
    if (f.size > 0)
      bytes += f.size;
    else
      ++unknown;
  }
  return bytes;
}

void add(Part& part, std::int64_t bytes) {
  ++part.count;
  if (bytes > 0)
    part.bytes += bytes;
  else
    ++part.unknown;
}

}  // namespace

std::string cuda_flavor(std::string_view image) {
  const std::size_t at = image.find('@');
  if (at != std::string_view::npos) image = image.substr(0, at);
  const std::size_t colon = image.rfind(':');
  if (colon == std::string_view::npos) return {};
  const std::string_view repository = image.substr(0, colon);
  if (!(repository == "nvidia/cuda" || repository.ends_with("/nvidia/cuda"))) return {};
  // "12.4.1-cudnn-runtime-ubuntu22.04", "11.8.0-cudnn8-runtime-ubuntu22.04", "12.4.1-base-ubuntu22.04"
  bool cudnn = false;
  std::string flavor;
  for (std::string_view tag = image.substr(colon + 1); !tag.empty();) {
    const std::size_t dash = tag.find('-');
    const std::string_view word = tag.substr(0, dash);
    if (word.starts_with("cudnn")) cudnn = true;
    if (word == "base" || word == "runtime" || word == "devel") flavor = word;
    tag = dash == std::string_view::npos ? std::string_view() : tag.substr(dash + 1);
  }
  return flavor.empty() ? "" : (cudnn ? "cudnn-" : "") + flavor;
}

std::string system_cuda_reason(std::string_view n) {
  if (n == "ctranslate2")
    return "CTranslate2 loads cuBLAS and cuDNN from the system or LD_LIBRARY_PATH (SYSTRAN/faster-whisper#153)";
  if (n == "tensorflow-gpu" || n == "paddlepaddle-gpu") return "it loads CUDA and cuDNN from the system";
  if (n.starts_with("cudf-cu") || n.starts_with("cuml-cu") || n.starts_with("cugraph-cu"))
    return "RAPIDS' pip wheels wanted a CUDA Toolkit on the system (NVIDIA/cudf#12772)";
  if (n == "onnxruntime-gpu")
    return "its CUDA provider loads cuBLAS and cuDNN from the system unless it was installed with its [cuda,cudnn] "
           "extras (1.21 and later)";
  return {};
}

SizeReport size_report(const Lock& lock) {
  SizeReport r;
  r.platform = lock.platforms.empty() ? "linux/amd64" : lock.platforms.front();
  if (lock.image) {
    r.image = lock.image->requested;
    std::int64_t bytes = 0;
    for (const PlatformManifest& p : lock.image->platforms)
      if (p.platform == r.platform) bytes = p.size;
    add(r.base, bytes);
  }
  for (const AptPackage& a : lock.apt) add(r.apt, a.size);
  for (const PythonPackage& p : lock.python) {
    Part& part = heavy_wheel(p) ? r.heavy : r.light;
    ++part.count;
    part.bytes += wheel_bytes(p, part.unknown);
  }
  for (const PythonPackage& p : lock.python)
    if (const std::string why = system_cuda_reason(manifest::normalize_name(p.name));
        !why.empty() && r.system_user.empty())
      r.system_user = p.name + ": " + why;
  r.flavor = cuda_flavor(r.image);
  const bool libraries = r.flavor.ends_with("runtime") || r.flavor.ends_with("devel");
  const bool cudnn = r.flavor.starts_with("cudnn-");
  if (!libraries) return r;
  for (const CudaLibrary& l : kLibraries) {
    if (l.cudnn_only && !cudnn) continue;
    for (const PythonPackage& p : lock.python) {
      if (!is_wheel_of(manifest::normalize_name(p.name), l.wheel)) continue;
      const std::string major = l.fixed ? l.fixed : p.version.substr(0, p.version.find('.'));
      int unknown = 0;
      r.duplicates.push_back(
          {l.library, std::string(l.soname) + "." + major, p.name, p.version, wheel_bytes(p, unknown)});
    }
  }
  return r;
}

std::string bytes_text(std::int64_t bytes) {
  char text[32];
  const double b = static_cast<double>(bytes);
  if (bytes < 1000)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else if (bytes < 1000 * 1000)
    std::snprintf(text, sizeof text, "%.1f kB", b / 1e3);
  else if (bytes < 1000LL * 1000 * 1000)
    std::snprintf(text, sizeof text, "%.1f MB", b / 1e6);
  else
    std::snprintf(text, sizeof text, "%.2f GB", b / 1e9);
  return text;
}

std::string size_text(const SizeReport& r) {
  std::string out = "what a node pulls for " + r.platform + " (compressed bytes the lock records)\n";
  char line[512];
  const auto row = [&](const char* what, const std::string& detail, const Part& p) {
    std::string bytes = p.count == p.unknown && p.count ? "unknown" : bytes_text(p.bytes);
    if (p.unknown && p.unknown != p.count) bytes += " + " + std::to_string(p.unknown) + " unknown";
    std::snprintf(line, sizeof line, "  %-8s %-52s %s\n", what, detail.c_str(), bytes.c_str());
    out += line;
  };
  const auto count = [](int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  if (r.base.count) row("image", r.image, r.base);
  if (r.apt.count) row("apt", count(r.apt.count, ".deb", ".debs"), r.apt);
  if (r.heavy.count)
    row("wheels", count(r.heavy.count, "heavy wheel (a layer of its own)", "heavy wheels (a layer of their own)"),
        r.heavy);
  if (r.light.count) row(r.heavy.count ? "" : "wheels", count(r.light.count, "other wheel", "other wheels"), r.light);
  std::snprintf(line, sizeof line, "  %-8s %-52s %s\n", "total", r.unknown() ? "(of those with a recorded size)" : "",
                bytes_text(r.total()).c_str());
  out += line;
  if (r.unknown())
    out += "  " + std::to_string(r.unknown()) +
           " without a size: the lock predates sizes, or the registry or index did not say (envpin lock again)\n";
  out += "  the image's own layers hold what these install, compressed by the engine: about these bytes, not exactly\n";
  if (!r.duplicates.empty()) {
    std::int64_t twice = 0;
    out += "CUDA libraries carried twice: in " + r.image + " and in the wheels\n";
    for (const Duplicate& d : r.duplicates) {
      std::snprintf(line, sizeof line, "  %-10s %-22s %-38s %s\n", d.library.c_str(), d.soname.c_str(),
                    (d.wheel + " " + d.version).c_str(), d.bytes ? bytes_text(d.bytes).c_str() : "size unknown");
      out += line;
      twice += d.bytes;
    }
    out += "  the wheels' copies are " + bytes_text(twice) +
           "; torch loads those (its libraries' RPATH), so the image's serve only code that loads the system's "
           "CUDA libraries\n";
    if (!r.system_user.empty())
      out += "  kept: " + r.system_user + "\n";
    else if (r.flavor.ends_with("devel"))
      out +=
          "  (a devel image is for nvcc: where nothing in the image is compiled against CUDA, the base flavor "
          "carries neither copy)\n";
    else
      out += "  hint: set cuda.flavor: base" +
             std::string(r.flavor.starts_with("cudnn-") ? " and remove cuda.cudnn" : "") +
             " in envpin.yaml, then envpin lock\n";
  }
  return out;
}

std::string size_json(const SizeReport& r) {
  const auto part = [](const Part& p) { return json{{"count", p.count}, {"bytes", p.bytes}, {"unknown", p.unknown}}; };
  json duplicates = json::array();
  for (const Duplicate& d : r.duplicates)
    duplicates.push_back(
        {{"library", d.library}, {"soname", d.soname}, {"wheel", d.wheel}, {"version", d.version}, {"bytes", d.bytes}});
  const json j = {{"platform", r.platform},        {"image", r.image},         {"flavor", r.flavor},
                  {"base", part(r.base)},          {"apt", part(r.apt)},       {"heavy_wheels", part(r.heavy)},
                  {"other_wheels", part(r.light)}, {"total_bytes", r.total()}, {"duplicates", duplicates}};
  return j.dump(2) + "\n";
}

}  // namespace envpin::lock

// SPDX-License-Identifier: Apache-2.0
#include "probe/gpu_probe.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "diag/cursor.hpp"
#include "io/atomic_file.hpp"
#include "io/process.hpp"
#include "resolve/cuda_tables.hpp"

// The NVML C ABI envpin uses, declared from NVIDIA's public nvml.h documentation
// (https://docs.nvidia.com/deploy/nvml-api/). The structs keep nvml.h's global names: a call
// through a pointer whose parameter types name other structs is undefined behaviour (UBSan's
// -fsanitize=function reports it), even when the layout is the same.
struct nvmlDevice_st;
struct nvmlMemory_st {
  unsigned long long total, free, used;
};

namespace envpin::probe {
namespace {

// Every NVML call returns nvmlReturn_t, 0 = success.
using nvmlReturn_t = int;
using nvmlDevice_t = ::nvmlDevice_st*;
using nvmlMemory_t = ::nvmlMemory_st;
constexpr nvmlReturn_t kNvmlSuccess = 0;

// A dlopen'ed library with typed symbol lookup (NVML, libcudart).
class Library {
 public:
  explicit Library(const std::string& library) : handle_(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) error_ = dlerror();
  }
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

  template <class Fn>
  Fn* symbol(const char* name) {
    void* p = dlsym(handle_, name);
    if (!p && error_.empty()) error_ = std::string("NVML has no ") + name;
    return reinterpret_cast<Fn*>(p);
  }

 private:
  void* handle_;
  std::string error_;
};

bool probe_nvml(const std::string& library, GpuProbe& out) {
  Library nvml(library);
  if (!nvml.loaded()) {
    out.notes.push_back("NVML: " + nvml.error());
    return false;
  }
  auto init = nvml.symbol<nvmlReturn_t()>("nvmlInit_v2");
  auto shutdown = nvml.symbol<nvmlReturn_t()>("nvmlShutdown");
  auto error_string = nvml.symbol<const char*(nvmlReturn_t)>("nvmlErrorString");
  auto driver = nvml.symbol<nvmlReturn_t(char*, unsigned)>("nvmlSystemGetDriverVersion");
  auto cuda = nvml.symbol<nvmlReturn_t(int*)>("nvmlSystemGetCudaDriverVersion_v2");
  auto count = nvml.symbol<nvmlReturn_t(unsigned*)>("nvmlDeviceGetCount_v2");
  auto by_index = nvml.symbol<nvmlReturn_t(unsigned, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
  auto name = nvml.symbol<nvmlReturn_t(nvmlDevice_t, char*, unsigned)>("nvmlDeviceGetName");
  auto capability = nvml.symbol<nvmlReturn_t(nvmlDevice_t, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
  auto memory = nvml.symbol<nvmlReturn_t(nvmlDevice_t, nvmlMemory_t*)>("nvmlDeviceGetMemoryInfo");
  if (!init || !shutdown || !error_string || !driver || !cuda || !count || !by_index || !name || !capability ||
      !memory) {
    out.notes.push_back("NVML: " + nvml.error());
    return false;
  }
  if (const nvmlReturn_t r = init(); r != kNvmlSuccess) {
    out.notes.push_back(std::string("NVML: nvmlInit failed: ") + error_string(r));
    return false;
  }
  std::array<char, 96> text{};
  GpuProbe found;
  found.source = "nvml";
  bool ok = driver(text.data(), text.size()) == kNvmlSuccess;
  found.driver = text.data();
  int cuda_version = 0;
  if (ok && cuda(&cuda_version) == kNvmlSuccess) found.cuda_driver = cuda_version_text(cuda_version);
  unsigned n = 0;
  ok = ok && count(&n) == kNvmlSuccess;
  for (unsigned i = 0; ok && i < n; ++i) {
    nvmlDevice_t dev = nullptr;
    if (by_index(i, &dev) != kNvmlSuccess) continue;
    ProbedGpu gpu;
    text.fill('\0');
    if (name(dev, text.data(), text.size()) == kNvmlSuccess) gpu.name = text.data();
    int major = 0, minor = 0;
    if (capability(dev, &major, &minor) == kNvmlSuccess) gpu.sm = major * 10 + minor;
    nvmlMemory_t mem{};
    if (memory(dev, &mem) == kNvmlSuccess) gpu.memory_mib = mem.total / (1024ULL * 1024);
    found.gpus.push_back(std::move(gpu));
  }
  shutdown();
  if (!ok) {
    out.notes.push_back("NVML: could not read the driver version or the device count");
    return false;
  }
  found.notes = std::move(out.notes);
  out = std::move(found);
  return true;
}

// The CUDA runtime this machine would load, and its version (works without a GPU).
void probe_cudart(const ProbeOptions& o, GpuProbe& out) {
  for (const std::string& name : o.cudart) {
    Library lib(name);
    if (!lib.loaded()) continue;
    auto version = lib.symbol<int(int*)>("cudaRuntimeGetVersion");
    int v = 0;
    if (version && version(&v) == 0 && v > 0) {
      out.cuda_runtime = cuda_version_text(v);
      out.cuda_runtime_path = name;
      return;
    }
  }
  out.notes.push_back("CUDA runtime: no libcudart found by the dynamic loader");
}

// What a tool printed, errors first (nvidia-smi prints its failures on stdout).
std::string output_of(const io::ProcessResult& r) { return r.err.empty() ? r.out : r.err + r.out; }

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

bool probe_smi(const ProbeOptions& o, GpuProbe& out) {
  const std::string smi = io::find_on_path("nvidia-smi", o.path);
  if (smi.empty()) {
    out.notes.push_back("nvidia-smi: not found on PATH");
    return false;
  }
  const io::ProcessResult query = io::run_process(
      {smi, "--query-gpu=name,compute_cap,memory.total,driver_version", "--format=csv,noheader,nounits"});
  if (query.exit_code != 0) {
    out.notes.push_back("nvidia-smi: exit " + std::to_string(query.exit_code) + ": " + first_line(output_of(query)));
    return false;
  }
  GpuProbe found;
  std::string error;
  if (!parse_smi_query(query.out, found, error)) {
    out.notes.push_back("nvidia-smi: " + error);
    return false;
  }
  found.source = "nvidia-smi";
  const io::ProcessResult banner = io::run_process({smi});
  if (banner.exit_code == 0) found.cuda_driver = parse_smi_cuda_version(banner.out);
  found.notes = std::move(out.notes);
  out = std::move(found);
  return true;
}

void probe_nvcc(const ProbeOptions& o, GpuProbe& out) {
  std::string nvcc;
  if (!o.cudacxx.empty() && access(o.cudacxx.c_str(), X_OK) == 0) nvcc = o.cudacxx;
  if (nvcc.empty()) nvcc = io::find_on_path("nvcc", o.path);
  if (nvcc.empty() && access("/usr/local/cuda/bin/nvcc", X_OK) == 0) nvcc = "/usr/local/cuda/bin/nvcc";
  if (nvcc.empty()) {
    out.notes.push_back("nvcc: not found ($CUDACXX, PATH, /usr/local/cuda/bin)");
    return;
  }
  const io::ProcessResult r = io::run_process({nvcc, "--version"});
  out.nvcc = r.exit_code == 0 ? parse_nvcc_version(r.out) : "";
  if (out.nvcc.empty()) {
    out.notes.push_back("nvcc: " + nvcc + " --version gave no release");
    return;
  }
  out.nvcc_path = nvcc;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(0, 1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

ProbeOptions options_from_environment() {
  ProbeOptions o;
  if (const char* p = std::getenv("ENVPIN_NVML_LIBRARY"); p && *p) o.nvml_library = p;
  if (const char* p = std::getenv("ENVPIN_NVIDIA_PROC_VERSION"); p && *p) o.proc_version = p;
  if (const char* p = std::getenv("ENVPIN_CUDART_LIBRARY"); p && *p) o.cudart = {p};
  if (const char* p = std::getenv("PATH")) o.path = p;
  if (const char* p = std::getenv("CUDACXX")) o.cudacxx = p;
  return o;
}

GpuProbe probe_machine(const ProbeOptions& o) {
  GpuProbe p;
  if (!probe_nvml(o.nvml_library, p) && !probe_smi(o, p)) {
    if (const auto text = io::read_file(o.proc_version)) {
      p.driver = parse_proc_version(*text);
      if (!p.driver.empty()) p.source = "proc";
    } else {
      p.notes.push_back(o.proc_version + ": not present (no NVIDIA kernel driver loaded)");
    }
  }
  probe_cudart(o, p);
  probe_nvcc(o, p);
  return p;
}

bool parse_smi_query(std::string_view text, GpuProbe& out, std::string& error) {
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    if (trim(line).empty()) continue;
    std::vector<std::string> fields;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) fields.push_back(trim(cell));
    if (fields.size() != 4) {
      error = "unexpected line '" + line + "' (want name, compute_cap, memory.total, driver_version)";
      return false;
    }
    ProbedGpu gpu;
    gpu.name = fields[0];
    const auto sm = resolve::gpu_sm(fields[1]);
    gpu.sm = sm ? *sm : 0;
    try {
      gpu.memory_mib = std::stoull(fields[2]);
    } catch (const std::exception&) {
      gpu.memory_mib = 0;
    }
    if (out.driver.empty()) out.driver = fields[3];
    out.gpus.push_back(std::move(gpu));
  }
  return true;
}

namespace {

// Consumes "N.N" (and ".N" more when `parts` is 3; `optional_third` lets it be absent) and
// returns the text, or nothing.
std::optional<std::string_view> dotted(diag::Cursor& c, int parts, bool optional_third = false) {
  const std::size_t start = c.at;
  if (!c.digits() || !c.eat(".") || !c.digits()) return std::nullopt;
  if (parts == 3) {
    diag::Cursor more = c;
    if (more.eat(".") && more.digits())
      c = more;
    else if (!optional_third)
      return std::nullopt;
  }
  return c.s.substr(start, c.at - start);
}

// The first place in `text` where `marker` is followed by what `after` accepts; `after` gets a
// cursor just past the marker and returns the captured text or nothing.
template <class After>
std::string find_after(std::string_view text, std::string_view marker, After after) {
  for (std::size_t at = text.find(marker); at != std::string_view::npos; at = text.find(marker, at + 1)) {
    diag::Cursor c{text, at + marker.size()};
    if (const std::optional<std::string_view> v = after(c)) return std::string(*v);
  }
  return "";
}

}  // namespace

// "CUDA Version: 12.4" in nvidia-smi's banner.
std::string parse_smi_cuda_version(std::string_view text) {
  return find_after(text, "CUDA Version:", [](diag::Cursor& c) {
    c.spaces();
    return dotted(c, 2);
  });
}

// "release 12.4, V12.4.131" in nvcc --version.
std::string parse_nvcc_version(std::string_view text) {
  return find_after(text, "release ", [](diag::Cursor& c) -> std::optional<std::string_view> {
    if (!dotted(c, 2) || !c.eat(", V")) return std::nullopt;
    return dotted(c, 3);
  });
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  ..." or "... Kernel Module for
// aarch64  535.104.05 ..." in /proc/driver/nvidia/version.
std::string parse_proc_version(std::string_view text) {
  return find_after(text, "Kernel Module", [](diag::Cursor& c) -> std::optional<std::string_view> {
    diag::Cursor named = c;
    if (named.eat(" for ") &&
        !named.span([](char x) { return diag::is_digit(x) || (x >= 'a' && x <= 'z') || x == '_'; }).empty())
      c = named;
    if (c.spaces() == 0) return std::nullopt;
    return dotted(c, 3, true);
  });
}

std::string cuda_version_text(int encoded) {
  // cudaDriverGetVersion encoding, 1000 * major + 10 * minor (cuda-facts.md §7.2).
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 100) / 10);
}

std::string format_probe(const GpuProbe& p) {
  std::ostringstream out;
  out << "this machine\n";
  if (p.source.empty()) {
    out << "  driver         none: no NVIDIA driver or GPU found\n";
  } else {
    out << "  driver         " << p.driver << (p.cuda_driver.empty() ? "" : " (runs CUDA <= " + p.cuda_driver + ")")
        << " via " << p.source << "\n";
    if (p.gpus.empty() && p.source != "proc") out << "  gpus           none visible\n";
    for (std::size_t i = 0; i < p.gpus.size(); ++i) {
      const ProbedGpu& g = p.gpus[i];
      out << "  gpu " << i << std::string(i < 10 ? 10 : 9, ' ') << g.name;
      if (g.sm) out << ", sm_" << g.sm << " (" << resolve::capability_text(g.sm) << ")";
      if (g.memory_mib) out << ", " << g.memory_mib << " MiB";
      out << "\n";
    }
  }
  out << "  cuda runtime   " << (p.cuda_runtime.empty() ? "none" : p.cuda_runtime + " (" + p.cuda_runtime_path + ")")
      << "\n";
  out << "  nvcc           " << (p.nvcc.empty() ? "none" : p.nvcc + " (" + p.nvcc_path + ")") << "\n";
  for (const auto& n : p.notes) out << "  note           " << n << "\n";
  return out.str();
}

std::string probe_json(const GpuProbe& p) {
  nlohmann::json j;
  j["source"] = p.source;
  j["driver"] = p.driver;
  j["cuda_driver"] = p.cuda_driver;
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : p.gpus) j["gpus"].push_back({{"name", g.name}, {"sm", g.sm}, {"memory_mib", g.memory_mib}});
  j["cuda_runtime"] = p.cuda_runtime;
  j["cuda_runtime_path"] = p.cuda_runtime_path;
  j["nvcc"] = p.nvcc;
  j["nvcc_path"] = p.nvcc_path;
  j["notes"] = p.notes;
  return j.dump();
}

}  // namespace envpin::probe

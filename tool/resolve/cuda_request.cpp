// SPDX-License-Identifier: Apache-2.0
// What a manifest asks of the CUDA policy: its cuda section, the pinned torch, the torch index.
#include <string_view>

#include "diag/cursor.hpp"
#include "diag/error.hpp"
#include "manifest/requirement.hpp"
#include "resolve/cuda_policy.hpp"

namespace envpin::resolve {

using diag::Error;

namespace {

// "cpu" or "cuNNN" for PyTorch's own wheel index (http[s]://download.pytorch.org/whl/<variant>
// with an optional trailing slash), "" for any other URL.
std::string pytorch_index_variant(std::string_view url) {
  diag::Cursor c{url};
  if (!c.eat("https://") && !c.eat("http://")) return "";
  if (!c.eat("download.pytorch.org/whl/")) return "";
  const std::size_t start = c.at;
  if (!c.eat("cpu") && !(c.eat("cu") && c.digits())) return "";
  const std::string variant(url.substr(start, c.at - start));
  c.eat("/");
  return c.done() ? variant : "";
}

// A Python requirement that loads CUDA libraries from the system (an nvidia/cuda runtime image or
// LD_LIBRARY_PATH) instead of bringing them as nvidia-* wheels: with one, the image keeps the
// runtime flavor, and one that loads cuDNN too needs cuda.cudnn. Sources (docs/cuda.md):
// onnxruntime-gpu ships no cuBLAS/cuDNN, its [cuda,cudnn] extras bring them from 1.21
// (microsoft/onnxruntime#20745, #23659); CTranslate2 (and faster-whisper on it) loads cuBLAS and
// cuDNN from the system or LD_LIBRARY_PATH (SYSTRAN/faster-whisper#153, its README's GPU
// section); CuPy wants a CUDA Toolkit unless its [ctk] extra installs the wheels (cupy-cuda12x's
// PyPI page, cupy#9444), cuDNN optional; TensorFlow finds system CUDA/cuDNN unless [and-cuda]
// (tensorflow#60646, its pip install page); jax's cuda12_local extra uses a local CUDA and cuDNN
// (docs.jax.dev installation); paddlepaddle-gpu before 2.6 needs the system's CUDA and cuDNN
// (PaddlePaddle/Paddle#54923, #60841 for 2.6); RAPIDS' cudf/cuml/cugraph pip wheels a CUDA
// Toolkit (NVIDIA/cudf#12772; dinov2 lists cuml-cu11: tests/init/corpus/dinov2).
struct SystemCudaUser {
  std::string name, why;
  bool cudnn = false;  // it loads cuDNN from the system too
};
std::optional<SystemCudaUser> system_cuda_user(const manifest::Manifest& m) {
  if (!m.python) return std::nullopt;
  for (const auto* list : {&m.python->packages, &m.python->requirement_lines})
    for (const auto& located : *list) {
      const manifest::Requirement& r = located.value;
      const auto has = [&](std::string_view extra) {
        for (const auto& e : r.extras)  // extras compare as names do (PEP 685)
          if (manifest::normalize_name(e) == manifest::normalize_name(extra)) return true;
        return false;
      };
      const std::string& n = r.normalized;
      if (n == "onnxruntime-gpu" && !(has("cuda") && has("cudnn")))
        return SystemCudaUser{r.name,
                              "its CUDA provider loads cuBLAS and cuDNN from the system (the [cuda,cudnn] extras, "
                              "onnxruntime-gpu 1.21 and later, bring them as wheels)",
                              true};
      if (n == "ctranslate2" || n == "faster-whisper")
        return SystemCudaUser{r.name,
                              "CTranslate2 loads cuBLAS and cuDNN from the system or LD_LIBRARY_PATH, not from "
                              "torch's wheels",
                              true};
      if (n.starts_with("cupy-cuda") && !has("ctk"))
        return SystemCudaUser{
            r.name, "it loads the CUDA Toolkit's libraries from the system (its [ctk] extra brings them as wheels)",
            false};
      if ((n == "tensorflow" && !has("and-cuda")) || n == "tensorflow-gpu")
        return SystemCudaUser{
            r.name, "it finds CUDA and cuDNN on the system (tensorflow[and-cuda] brings them as wheels)", true};
      for (const char* rapids : {"cudf-cu", "cuml-cu", "cugraph-cu"})
        if (n.starts_with(rapids))
          return SystemCudaUser{r.name,
                                "RAPIDS' pip wheels wanted a CUDA Toolkit on the system (NVIDIA/cudf#12772); "
                                "kept for any version",
                                false};
      if (n == "paddlepaddle-gpu")  // kept on runtime whatever the version: a range may allow the old ones
        return SystemCudaUser{r.name,
                              "before 2.6 it loads CUDA and cuDNN from the system (PaddlePaddle/Paddle#54923; 2.6 "
                              "and later bring them as wheels: set cuda.flavor: base for those)",
                              true};
      for (const char* local : {"cuda11_local", "cuda12_local", "cuda13_local"})
        if ((n == "jax" || n == "jaxlib") && has(local))
          return SystemCudaUser{r.name + "[" + local + "]", "it uses the CUDA and cuDNN installed on the system", true};
    }
  return std::nullopt;
}

}  // namespace

std::optional<Input<std::string>> torch_pin(const manifest::Manifest& m) {
  if (!m.python) return std::nullopt;
  auto from = [&](const std::vector<manifest::Located<manifest::Requirement>>& reqs,
                  const std::string& label) -> std::optional<Input<std::string>> {
    for (const auto& r : reqs) {
      if (r.value.normalized != "torch") continue;
      for (const auto& s : r.value.specifiers) {
        if (s.op != "==" && s.op != "===") continue;
        std::string v = s.version;
        if (v.ends_with(".*")) v.resize(v.size() - 2);
        return Input<std::string>{v, {label, r.where}};
      }
    }
    return std::nullopt;
  };
  if (auto t = from(m.python->packages, "python.packages")) return t;
  return from(m.python->requirement_lines, "python.requirements");
}

CudaRequest request_from_manifest(const manifest::Manifest& m) {
  const manifest::Cuda& c = *m.cuda;
  CudaRequest r;
  r.cuda = {c.version.value, {"cuda.version", c.version.where}};
  r.gpus_origin = {"cuda.gpus", c.gpus_where};
  for (const auto& g : c.gpus) r.gpus.push_back({g.value, {"cuda.gpus", g.where}});
  if (c.driver) r.driver = Input<std::string>{c.driver->value, {"cuda.driver", c.driver->where}};
  for (const auto& p : m.platforms) r.platforms.push_back({p.value.arch, {"platforms", p.where}});
  if (m.os) r.ubuntu = Input<std::string>{m.os->value.substr(std::string("ubuntu").size()), {"os", m.os->where}};
  r.flavor = c.flavor.value == manifest::CudaFlavor::base    ? "base"
             : c.flavor.value == manifest::CudaFlavor::devel ? "devel"
                                                             : "runtime";
  r.cudnn = c.cudnn.value;
  r.flavor_given = c.flavor.where.line != 0;
  if (c.repository) r.repository = c.repository->value;
  if (c.require_check && !c.require_check->value)
    r.require_off = Input<bool>{true, {"cuda.require_check", c.require_check->where}};
  if (c.forward_compat && c.forward_compat->value)
    r.forward_compat = Input<bool>{true, {"cuda.forward_compat", c.forward_compat->where}};
  if (!torch_pin(m) && m.python) {
    // torch without '==' ("torch>=2.7", a bare "torch"): the policy picks from the table.
    for (const auto* list : {&m.python->packages, &m.python->requirement_lines})
      for (const auto& req : *list)
        if (req.value.normalized == "torch" && !r.torch_range) {
          std::string spec;
          for (const auto& s : req.value.specifiers) spec += (spec.empty() ? "" : ",") + s.op + s.version;
          r.torch_range = Input<std::string>{
              spec, {list == &m.python->packages ? "python.packages" : "python.requirements", req.where}};
        }
  }
  if (auto t = torch_pin(m)) {
    // A local version ("2.4.1+cu124") names the wheel variant too.
    if (const auto plus = t->value.find('+'); plus != std::string::npos) {
      r.torch_variant = Input<std::string>{t->value.substr(plus + 1), t->origin};
      t->value.resize(plus);
    }
    r.torch = t;
  }
  if (m.python) r.python = Input<std::string>{m.python->version.value, {"python.version", m.python->version.where}};
  // torch's wheels bring every CUDA library it loads (nvidia-* wheels, or inside torch/lib for
  // the bundled builds) and find them through their RPATH: the runtime flavor's cuBLAS, cuFFT,
  // NCCL, ... would be a second copy of gigabytes. Without cuda.flavor, such a project gets the
  // base flavor (CUDA runtime and cuda-compat only), unless another package wants the system's.
  const auto user = system_cuda_user(m);
  if (user) r.system_user = user->name;
  if (user && (r.flavor == "base" || (user->cudnn && !r.cudnn)))
    r.system_libraries_missing = user->name + (r.flavor == "base" ? " loads CUDA libraries" : " loads cuDNN") +
                                 " from the system, and the image has none (" + user->why + ")";
  if (!r.flavor_given && !r.cudnn && (r.torch || r.torch_range)) {
    if (user)
      r.flavor_why = "flavor: runtime, as " + user->name + " needs: " + user->why;
    else {
      r.flavor = "base";
      r.flavor_why =
          "flavor: base (the CUDA runtime and cuda-compat): torch's wheels bring cuBLAS, cuDNN, NCCL and the other "
          "libraries it loads, which the runtime flavor would carry a second time; set cuda.flavor: runtime for code "
          "that loads the system's";
    }
  }
  if (m.python) {
    std::vector<std::pair<std::string, const manifest::Located<std::string>*>> all;
    if (m.python->index) all.emplace_back("python.index", &*m.python->index);
    for (const auto& u : m.python->extra_index) all.emplace_back("python.extra_index", &u);
    for (const auto& [label, u] : all)
      if (pytorch_index_variant(u->value) == "cpu")
        throw Error(label + " selects CPU-only torch wheels, but the manifest has a cuda section", u->where,
                    "remove it and let envpin choose the CUDA variant, or name one such as "
                    "https://download.pytorch.org/whl/cu124");
  }
  if (m.python && !r.torch_variant) {
    std::vector<std::pair<std::string, manifest::Located<std::string>>> urls;
    if (m.python->index) urls.emplace_back("python.index", *m.python->index);
    for (const auto& u : m.python->extra_index) urls.emplace_back("python.extra_index", u);
    for (const auto& [label, u] : urls) {
      const std::string variant = pytorch_index_variant(u.value);
      if (variant.starts_with("cu")) r.torch_variant = Input<std::string>{variant, {label, u.where}};
    }
  }
  return r;
}

namespace {

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

}  // namespace

CudaRequest request_from_flags(const CudaFlags& given, const manifest::Manifest* m) {
  CudaFlags o = given;
  for (std::string* v : {&o.driver, &o.cuda, &o.os}) *v = trimmed(*v);
  for (std::string& v : o.gpus) v = trimmed(v);
  for (std::string& v : o.platforms) v = trimmed(v);
  o.torch = torch_specifier(o.torch);
  CudaRequest r;
  if (m) r = request_from_manifest(*m);
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

}  // namespace envpin::resolve

// SPDX-License-Identifier: Apache-2.0
#include "report/diff.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "report/report.hpp"
#include "report/smoke.hpp"
#include "resolve/cuda_tables.hpp"

namespace envpin::report {
namespace {

using nlohmann::json;

std::string str(const json& j, const json::json_pointer& p) {
  if (!j.contains(p)) return "";
  const json& v = j.at(p);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::pair<int, int> major_minor(const std::string& v) {
  std::istringstream in(v);
  int major = -1, minor = -1;
  char dot = 0;
  in >> major >> dot >> minor;
  return {major, minor};
}

const json& first_python(const json& r) {
  static const json kNone = json::object();
  const json& list = r["packages"]["python"];
  return list.is_array() && !list.empty() ? list[0] : kNone;
}

// Frameworks whose build decides whether a GPU job runs at all.
bool is_framework(const std::string& name) {
  static const std::set<std::string> kNames = {"torch",      "torchvision", "torchaudio", "jax",        "jaxlib",
                                               "tensorflow", "triton",      "cupy",       "flash-attn", "xformers"};
  return kNames.contains(name) || name.starts_with("jax-cuda") || name.starts_with("cupy-cuda");
}

// Packaging tools: their versions differ between any two machines and break no job.
bool is_pip_tooling(const std::string& name) {
  static const std::set<std::string> kNames = {"pip", "setuptools", "wheel", "distribute", "pkg-resources"};
  return kNames.contains(name);
}

int importance(const std::string& field) {
  if (field == "gpu.arch_vs_torch" || field == "gpu.driver_vs_torch" || field == "gpu.torch_cpu_build") return 0;
  if (field.starts_with("python.pkg.") && is_framework(field.substr(11))) return 1;
  if (field == "system.arch" || field == "python.version") return 2;
  if (field.starts_with("gpu.")) return 3;
  if (field.starts_with("python.")) return 4;
  return 5;
}

class Differ {
 public:
  Differ(const json& a, const json& b, std::string an, std::string bn)
      : a_(a), b_(b), an_(std::move(an)), bn_(std::move(bn)) {}

  std::vector<Difference> run() {
    if (is_report(a_) && is_report(b_)) {
      system();
      gpu();
      python();
      dpkg();
      config();
    }
    smoke();
    // By verdict, then by what stops a GPU job first: torch against the GPU and driver, the
    // framework itself, the architecture and Python, the rest of the GPU layer, other packages.
    std::stable_sort(out_.begin(), out_.end(), [](const Difference& x, const Difference& y) {
      const auto rank = [](const std::string& v) { return v == "breaks" ? 0 : v == "risk" ? 1 : 2; };
      return std::pair(rank(x.verdict), importance(x.field)) < std::pair(rank(y.verdict), importance(y.field));
    });
    return out_;
  }

 private:
  const json& a_;
  const json& b_;
  std::string an_, bn_;
  std::vector<Difference> out_;

  void add(std::string verdict, std::string field, std::string a, std::string b, std::string why) {
    out_.push_back({std::move(verdict), std::move(field), std::move(a), std::move(b), std::move(why)});
  }

  void compare(const char* field, const char* pointer, const char* verdict, const char* why) {
    const std::string x = str(a_, json::json_pointer(pointer)), y = str(b_, json::json_pointer(pointer));
    if (x != y) add(verdict, field, x, y, why);
  }

  void system() {
    compare("system.arch", "/system/arch/value", "breaks",
            "images and wheels built for one do not run on the other ('exec format error')");
    const std::string os_a = str(a_, "/system/os/id"_json_pointer) + " " + str(a_, "/system/os/version"_json_pointer);
    const std::string os_b = str(b_, "/system/os/id"_json_pointer) + " " + str(b_, "/system/os/version"_json_pointer);
    if (os_a != os_b) add("risk", "system.os", os_a, os_b, "host libraries differ; run both in the pinned image");
    compare("system.glibc", "/system/glibc/value", "risk", "wheels built against the newer glibc fail on the older");
    compare("system.container", "/system/container/value", "info", "");
    compare("system.gcc", "/system/compilers/gcc/value", "info", "");
  }

  void gpu() {
    const json& ga = a_["gpu"]["gpus"];
    const json& gb = b_["gpu"]["gpus"];
    const auto list = [](const json& gpus) {
      std::string s;
      for (const auto& g : gpus)
        s += (s.empty() ? "" : ", ") + g.value("name", "") + " (sm_" + std::to_string(g.value("sm", 0)) + ")";
      return s.empty() ? std::string("none") : s;
    };
    if (list(ga) != list(gb))
      add(ga.empty() || gb.empty() ? "risk" : "info", "gpu.devices", list(ga), list(gb),
          ga.empty() || gb.empty() ? "GPU code paths run on only one of them" : "");
    compare("gpu.driver", "/gpu/driver", "info", "");
    // torch from one side on the other side's driver and GPUs.
    check_torch_on(a_, b_, an_, bn_);
    check_torch_on(b_, a_, bn_, an_);
  }

  void check_torch_on(const json& from, const json& to, const std::string& from_name, const std::string& to_name) {
    const json& py = first_python(from);
    if (!py.contains("torch")) return;
    const std::string version = py["torch"].value("version", "");
    const std::string cuda = py["torch"].value("cuda", "");
    if (cuda.empty()) {
      if (!to["gpu"]["gpus"].empty())
        add("risk", "gpu.torch_cpu_build", "torch " + version + " (CPU build) on " + from_name,
            std::to_string(to["gpu"]["gpus"].size()) + " GPU(s) on " + to_name,
            "a CPU-only torch does not use the GPUs; pin a CUDA variant (envpin cuda)");
      return;
    }
    const std::string driver_cuda = to["gpu"].value("cuda_driver", "");
    const auto need = major_minor(cuda), have = major_minor(driver_cuda);
    if (!driver_cuda.empty() && have < need) {
      // Another major: the runtime refuses (35). Same major: minor-version compatibility runs
      // it, but cannot JIT PTX newer than the driver (cuda-facts.md §1.2).
      const bool breaks = have.first < need.first;
      const std::string torch = "torch " + version + " (CUDA " + cuda + ") on " + from_name;
      const std::string driver = "driver for CUDA " + driver_cuda + " on " + to_name;
      add(breaks ? "breaks" : "risk", "gpu.driver_vs_torch", from_name == an_ ? torch : driver,
          from_name == an_ ? driver : torch,
          breaks ? "the driver is a major release behind torch's CUDA (cudaErrorInsufficientDriver, 35)"
                 : "runs only through minor-version compatibility: no PTX JIT (error 222 for PTX-only kernels)");
    }
    for (const auto& g : to["gpu"]["gpus"]) {
      const int sm = g.value("sm", 0);
      const resolve::TorchVariant* wheel = resolve::find_torch_variant(version, cuda);
      if (sm && wheel && !resolve::kernels_run_on(wheel->sass, wheel->ptx, sm))
        add("breaks", "gpu.arch_vs_torch", "torch " + version + " (CUDA " + cuda + ") on " + from_name,
            g.value("name", "") + " (sm_" + std::to_string(sm) + ") on " + to_name,
            "that torch build has no kernels for sm_" + std::to_string(sm) +
                " ('no kernel image is available for execution on the device')");
    }
  }

  void python() {
    const json& pa = first_python(a_);
    const json& pb = first_python(b_);
    const std::string va = pa.value("version", ""), vb = pb.value("version", "");
    if (va != vb)
      add(major_minor(va) != major_minor(vb) ? "breaks" : "risk", "python.version", va.empty() ? "none" : va,
          vb.empty() ? "none" : vb,
          major_minor(va) != major_minor(vb) ? "another minor: compiled wheels and pins do not carry over"
                                             : "patch level differs");
    const json& ka = pa.value("packages", json::object());
    const json& kb = pb.value("packages", json::object());
    std::vector<std::string> only_a, only_b;
    for (auto& [name, v] : ka.items()) {
      if (!kb.contains(name)) {
        // A framework on one side only is named on its own, never lost in a list.
        if (is_framework(name))
          add("breaks", "python.pkg." + name, v.get<std::string>(), "not installed", "installed only on " + an_);
        else
          only_a.push_back(name);
        continue;
      }
      const std::string x = v.get<std::string>(), y = kb[name].get<std::string>();
      if (x == y) continue;
      if (is_pip_tooling(name)) {
        add("info", "python.pkg." + name, x, y, "packaging tool");
        continue;
      }
      const bool minor = major_minor(x) != major_minor(y);
      add(minor ? "breaks" : "risk", "python.pkg." + name, x, y,
          minor ? "another minor version" : "another patch version");
    }
    for (auto& [name, v] : kb.items()) {
      if (ka.contains(name)) continue;
      if (is_framework(name))
        add("breaks", "python.pkg." + name, "not installed", v.get<std::string>(), "installed only on " + bn_);
      else
        only_b.push_back(name);
    }
    const auto names = [](const std::vector<std::string>& v) {
      std::string s;
      for (std::size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + v[i];
      if (v.size() > 8) s += ", ... (" + std::to_string(v.size()) + ")";
      return s;
    };
    if (!only_a.empty()) add("risk", "python.only_in_a", names(only_a), "", "installed only on " + an_);
    if (!only_b.empty()) add("risk", "python.only_in_b", "", names(only_b), "installed only on " + bn_);
  }

  static bool is_report(const json& r) { return r.value("schema", "") == kSchema; }
  static const json* smoke_of(const json& r) {
    if (!is_report(r)) return &r;
    return r.contains("smoke") && r["smoke"].is_object() ? &r["smoke"] : nullptr;
  }
  static std::string result_text(const json& p) {
    const std::string result = p.value("result", "fail");
    std::string text = p.value("summary", "");
    if (text.empty()) text = p.value("message", "");
    return result + (text.empty() ? "" : ": " + text);
  }

  // Smoke results (envpin smoke, envpin report --smoke): the integer kernel computes the same
  // bits on every GPU and CPU, so its digests must be equal everywhere; the framework digest is
  // comparable only for the same device model, torch build, seed and settings.
  void smoke() {
    const json* sa = smoke_of(a_);
    const json* sb = smoke_of(b_);
    if (!sa || !sb) {
      if (sa || sb)
        add("info", "smoke", sa ? "run" : "not run", sb ? "run" : "not run",
            "smoke results in only one of them (envpin report --smoke)");
      return;
    }
    kernel(sa->value("kernel", json::object()), sb->value("kernel", json::object()));
    framework(sa->value("framework", json::object()), sb->value("framework", json::object()));
  }

  void kernel(const json& ka, const json& kb) {
    if (ka.empty() || kb.empty()) return;
    const std::string ra = ka.value("result", "fail"), rb = kb.value("result", "fail");
    if (ra == "fail" || rb == "fail") {
      add("breaks", "smoke.kernel", result_text(ka), result_text(kb),
          "the CUDA smoke kernel fails on " + (ra == "fail" && rb == "fail" ? std::string("both")
                                               : ra == "fail"               ? an_
                                                                            : bn_));
      return;
    }
    const std::string ca = ka.value("cpu_sha256", ""), cb = kb.value("cpu_sha256", "");
    if (!ca.empty() && !cb.empty() && ca != cb) {
      add("breaks", "smoke.kernel.cpu_sha256", ca, cb,
          "the CPU reference differs: not the same smoke program, or a host that computes integers differently");
      return;
    }
    const std::string ga = ka.value("gpu_sha256", ""), gb = kb.value("gpu_sha256", "");
    if (!ga.empty() && !gb.empty() && ga != gb)
      add("breaks", "smoke.kernel.gpu_sha256", ga, gb, "the integer kernel computes other bits on the two GPUs");
    else if (ga.empty() != gb.empty())
      add("info", "smoke.kernel", result_text(ka), result_text(kb),
          "the kernel ran on a GPU only on " + (ga.empty() ? bn_ : an_) + "; the CPU references agree");
  }

  void framework(const json& fa, const json& fb) {
    if (fa.empty() && fb.empty()) return;
    if (fa.empty() || fb.empty()) {
      add("info", "smoke.framework", fa.empty() ? "not run" : result_text(fa), fb.empty() ? "not run" : result_text(fb),
          "the framework smoke ran on only one of them");
      return;
    }
    const std::string ra = fa.value("result", "fail"), rb = fb.value("result", "fail");
    if (ra != "pass" || rb != "pass") {
      const bool failed = ra == "fail" || ra == "unavailable" || rb == "fail" || rb == "unavailable";
      add(failed ? "breaks" : "info", "smoke.framework", result_text(fa), result_text(fb),
          failed ? "the framework smoke does not run on " + (ra != "pass" && rb != "pass" ? std::string("both")
                                                             : ra != "pass"               ? an_
                                                                                          : bn_)
                 : "it was skipped on one of them");
      return;
    }
    const std::string da = fa.value("digest", ""), db = fb.value("digest", "");
    if (da == db) return;
    const auto shown = [](const json& f) {
      return f.value("digest", "").substr(0, 12) + " (loss " + f.value("loss", "") + "; torch " + f.value("torch", "") +
             ", " + f.value("cuda_variant", "") + ", " + f.value("device", "") + " " + f.value("device_name", "") +
             ", seed " + std::to_string(f.value("seed", -1)) + ")";
    };
    // Why the two need not agree; with no reason left, they must.
    std::vector<std::string> reasons;
    const auto differs = [&](const char* key, const std::string& what) {
      const std::string x = str(fa, json::json_pointer(std::string("/") + key));
      const std::string y = str(fb, json::json_pointer(std::string("/") + key));
      if (x != y) reasons.push_back(what + " (" + x + " vs " + y + ")");
    };
    differs("seed", "different seeds");
    differs("torch", "different torch versions");
    differs("cuda_variant", "different torch builds");
    differs("device", "different devices");
    differs("device_name", "different device models");
    differs("capability", "different architectures");
    differs("threads", "different thread counts (another reduction order)");
    if (!fa.value("deterministic", false) || !fb.value("deterministic", false))
      reasons.push_back("non-deterministic kernels on one side");
    if (fa.value("tf32", false) || fb.value("tf32", false)) reasons.push_back("TF32 enabled on one side");
    if (reasons.empty()) {
      add("breaks", "smoke.framework.digest", shown(fa), shown(fb),
          "the same device model, torch build, seed and settings computed different gradients: the compute chain "
          "differs (a library, driver or hardware fault)");
      return;
    }
    std::string why = "digests differ, as they may: ";
    for (std::size_t i = 0; i < reasons.size(); ++i) why += (i ? "; " : "") + reasons[i];
    add("info", "smoke.framework.digest", shown(fa), shown(fb), why);
  }

  void dpkg() {
    const json& da = a_["packages"].value("dpkg", json::object());
    const json& db = b_["packages"].value("dpkg", json::object());
    int differ = 0, only = 0;
    for (auto& [n, v] : da.items()) {
      if (!db.contains(n))
        ++only;
      else if (db[n] != v)
        ++differ;
    }
    for (auto& [n, v] : db.items())
      if (!da.contains(n)) ++only;
    if (differ || only)
      add("info", "dpkg", std::to_string(da.size()) + " packages", std::to_string(db.size()) + " packages",
          std::to_string(differ) + " at other versions, " + std::to_string(only) + " on one side only");
  }

  void config() {
    const json& ca = a_["config"];
    const json& cb = b_["config"];
    for (const char* section : {"env", "secrets"}) {
      const json& x = ca.value(section, json::object());
      const json& y = cb.value(section, json::object());
      std::set<std::string> keys;
      for (auto& [k, v] : x.items()) keys.insert(k);
      for (auto& [k, v] : y.items()) keys.insert(k);
      for (const auto& k : keys) {
        const std::string vx = x.contains(k) && !x[k].is_null() ? x[k].get<std::string>() : "unset";
        const std::string vy = y.contains(k) && !y[k].is_null() ? y[k].get<std::string>() : "unset";
        if (vx != vy) add("risk", std::string(section) + "." + k, vx, vy, "");
      }
    }
    const json& pa = ca.value("paths", json::object());
    const json& pb = cb.value("paths", json::object());
    for (auto& [k, v] : pa.items()) {
      if (!pb.contains(k)) continue;
      const bool ea = v.value("exists", false), eb = pb[k].value("exists", false);
      if (ea != eb)
        add("breaks", "path." + k, v.value("path", "") + (ea ? " exists" : " missing"),
            pb[k].value("path", "") + (eb ? " exists" : " missing"), "the job reads or writes it");
    }
    const std::string la = ca.value("lock_digest", ""), lb = cb.value("lock_digest", "");
    if (la != lb)
      add("breaks", "lock", la.empty() ? "none" : la, lb.empty() ? "none" : lb, "not the same pinned environment");
  }
};

void check_schema(const json& r, const std::string& name) {
  if (!r.is_object() || !r.contains("schema") || !r["schema"].is_string())
    throw diag::Error(name + " is not an envpin report (no \"schema\")", diag::Location{name, 0, 0},
                      "make it with 'envpin report --json --output " + name + "'");
  const std::string schema = r["schema"].get<std::string>();
  if (schema == kSmokeSchema) return;  // smoke results alone (envpin smoke --json)
  if (schema != kSchema)
    throw diag::Error(
        name + " is a report of schema " + schema + "; this envpin reads " + kSchema + " and " + kSmokeSchema,
        diag::Location{name, 0, 0}, "make both reports with the same envpin version");
  for (const char* layer : {"system", "gpu", "packages", "config"})
    if (!r.contains(layer) || !r[layer].is_object())
      throw diag::Error(name + " has no '" + layer + "' layer", diag::Location{name, 0, 0},
                        "make it again with 'envpin report --json'");
}

}  // namespace

std::vector<Difference> diff(const json& a, const json& b, const std::string& a_name, const std::string& b_name) {
  check_schema(a, a_name);
  check_schema(b, b_name);
  try {
    return Differ(a, b, a_name, b_name).run();
  } catch (const json::exception& e) {
    throw diag::Error(std::string("a report has an unexpected shape: ") + e.what(), std::nullopt,
                      "make both reports with 'envpin report --json'");
  }
}

std::string format_diff(const std::vector<Difference>& d) {
  std::ostringstream out;
  int breaks = 0, risks = 0, infos = 0;
  for (const auto& x : d) {
    std::string verdict = x.verdict == "breaks" ? "BREAKS" : x.verdict == "risk" ? "RISK" : "info";
    // The values come from report files, possibly a server's: one printable line each.
    out << verdict << std::string(8 - verdict.size(), ' ') << diag::printable(x.field)
        << "\n    A: " << (x.a.empty() ? "-" : diag::printable(x.a))
        << "\n    B: " << (x.b.empty() ? "-" : diag::printable(x.b)) << "\n";
    if (!x.why.empty()) out << "    " << diag::printable(x.why) << "\n";
    (x.verdict == "breaks" ? breaks : x.verdict == "risk" ? risks : infos)++;
  }
  out << "envpin diff: " << breaks << " breaks, " << risks << " risks, " << infos << " info\n";
  return out.str();
}

json diff_json(const std::vector<Difference>& d) {
  json j = {{"schema", "envpin.diff/1"}, {"differences", json::array()}};
  for (const auto& x : d)
    j["differences"].push_back({{"verdict", x.verdict}, {"field", x.field}, {"a", x.a}, {"b", x.b}, {"why", x.why}});
  return j;
}

}  // namespace envpin::report

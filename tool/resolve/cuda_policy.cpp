// SPDX-License-Identifier: Apache-2.0
#include "resolve/cuda_policy.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "diag/suggest.hpp"
#include "resolve/cuda_tables.hpp"
#include "resolve/policy_parts.hpp"
#include "resolve/torch_fit.hpp"

namespace envpin::resolve {
namespace {

using diag::Error;
using namespace detail;

class Policy {
 public:
  explicit Policy(CudaRequest r) : req_(std::move(r)) {
    for (const auto& p : req_.platforms) platforms_.push_back(p.value);
    if (platforms_.empty()) platforms_.push_back(manifest::Arch::amd64);
  }

  CudaDecision decide() {
    std::optional<Candidate> requested;
    check_driver_input();
    if (req_.cuda.value != "auto") {
      check_in_table();
      // A version without an image that could not build for the fleet anyway: the GPU is the
      // cause to name, with a version that builds for it ("10.2 for an RTX 3090": 11.1 or newer).
      if (!find_cuda_release(req_.cuda.value) && !req_.gpus.empty()) {
        resolve_gpus();
        check_unpublished_compiles();
        fleet_.clear();
        sms_.clear();
      }
      requested = requested_candidate();
    }
    resolve_gpus();
    read_tegra_driver();
    check_driver_knows_gpus();
    torch_fit_.check_input(early_notes_);
    if (!requested) return decide_auto();
    const Candidate& c = *requested;
    CudaDecision d;
    if (auto b = evaluate(c, d)) throw Refusal(*b);
    d.reasons.insert(
        d.reasons.begin(),
        "toolkit: CUDA " + c.toolkit +
            (c.toolkit == req_.cuda.value ? " as requested"
                                          : ", the newest published " + std::string(c.release->minor) + " release"));
    return d;
  }

 private:
  CudaRequest req_;  // a copy: the driver is normalized in place (check_driver_input)
  std::vector<manifest::Arch> platforms_;
  std::vector<GpuTarget> fleet_;
  std::vector<int> sms_;
  std::optional<DriverVersion> floor_;
  TorchFit torch_fit_{req_, platforms_, fleet_, sms_, floor_};
  std::vector<Note> early_notes_;

  bool has_platform(manifest::Arch a) const {
    return std::find(platforms_.begin(), platforms_.end(), a) != platforms_.end();
  }

  std::string requested_label() const {
    return req_.cuda.value == "auto" ? req_.cuda.origin.label + " auto" : req_.cuda.origin.describe();
  }

  void resolve_gpus() {
    if (req_.gpus.empty())
      throw Error("no GPUs given: the arch list and the toolkit depend on the fleet's GPUs",
                  req_.gpus_origin.location(),
                  req_.gpus_origin.where ? "list them under cuda.gpus, e.g. 'gpus: [A100, H100]'"
                                         : "name them with --gpu, e.g. '--gpu A100 --gpu H100'");
    std::set<int> sms;
    for (const auto& in : req_.gpus) {
      GpuTarget t;
      t.input = in.value;
      const std::optional<int> sm = gpu_sm(in.value);
      if (!sm) check_not_a_list(in);
      if (!sm) {
        throw Error("unknown GPU '" + in.value + "'" + gpu_suggestion(in.value), in.origin.location(),
                    "name a product such as 'H100' or give its compute capability, e.g. '9.0'");
      }
      t.sm = *sm;
      if (!find_gpu(in.value)) check_not_tegra(in, *sm);
      if (const GpuModel* g = find_gpu(in.value)) {
        t.product = std::string(g->name);
        if (g->kind == GpuKind::jetson && g->sm != 110)
          throw Error("'" + in.value + "' is a Jetson module (" + sm_name(g->sm) +
                          "): nvidia/cuda images do not run on Jetson, which uses L4T",
                      in.origin.location(),
                      "build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section");
        if (g->host == HostArch::arm64 && !has_platform(manifest::Arch::arm64))
          throw Error("'" + in.value + "' only exists in arm64 hosts (" +
                          (g->kind == GpuKind::jetson ? std::string("Jetson") : std::string("Grace")) +
                          "), but the image is built for linux/amd64 only",
                      in.origin.location(), "add linux/arm64 to platforms");
      }
      sms.insert(t.sm);
      fleet_.push_back(std::move(t));
    }
    sms_.assign(sms.begin(), sms.end());
  }

  // A guess only within one architecture: "L20" is as near "H20" (Hopper, sm_90) as "L40" (Ada,
  // sm_89), and a guess across architectures turns a typo into a wrong arch list.
  static std::string gpu_suggestion(const std::string& input) {
    std::vector<std::string_view> names;
    for (const GpuModel& g : gpu_models()) names.push_back(g.name);
    const std::vector<std::string> near = diag::nearest(input, names);
    if (near.empty()) return "";
    std::set<int> sms;
    for (const std::string& n : near) sms.insert(find_gpu(n)->sm);
    if (sms.size() == 1) return " (did you mean '" + near.front() + "'?)";
    std::string list;
    for (const std::string& n : near) list += (list.empty() ? "" : ", ") + n + " (" + sm_name(find_gpu(n)->sm) + ")";
    return "; names like it are other architectures: " + list;
  }

  // "A100,V100" or "A100 V100": several GPUs in one entry.
  static void check_not_a_list(const Input<std::string>& in) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : in.value + ",") {
      if (c == ',' || c == ' ' || c == ';') {
        if (!part.empty()) parts.push_back(part);
        part.clear();
      } else {
        part += c;
      }
    }
    if (parts.size() < 2 ||
        !std::all_of(parts.begin(), parts.end(), [](const std::string& p) { return gpu_sm(p).has_value(); }))
      return;
    std::string items;
    for (const auto& p : parts) items += (items.empty() ? "" : ", ") + p;
    throw Error("'" + in.value + "' names " + std::to_string(parts.size()) + " GPUs in one entry", in.origin.location(),
                "give each GPU its own entry: a YAML list (gpus: [" + items + "]) or one --gpu per GPU");
  }

  // Capabilities that only Jetson (Tegra) modules have: nvidia/cuda images do not run there.
  static void check_not_tegra(const Input<std::string>& in, int sm) {
    static constexpr std::pair<int, const char*> kTegra[] = {
        {53, "Jetson Nano/TX1"}, {62, "Jetson TX2"}, {72, "Jetson Xavier"}, {87, "Jetson Orin"}};
    for (const auto& [tegra, modules] : kTegra)
      if (sm == tegra)
        throw Error("compute capability '" + in.value + "' (" + sm_name(sm) + ") is " + modules +
                        " only: nvidia/cuda images do not run on Jetson, which uses L4T",
                    in.origin.location(),
                    "build Jetson images from NVIDIA's L4T images with 'base:' and no cuda section");
    // CUDA 13.0 renamed Jetson Thor's sm_101 to sm_110 (CUDA 13.0 release notes).
    if (sm == 101)
      throw Error("compute capability '" + in.value + "' (sm_101) is Jetson Thor before CUDA 13.0 renamed it sm_110",
                  in.origin.location(), "give '11.0' (sm_110), which CUDA 13.0 and newer build for");
  }

  // The driver as users type it: "535.104.05", "R535" (a branch: its first release is the floor),
  // or "12.9", the "CUDA Version" nvidia-smi prints in its header, which names the CUDA the driver
  // runs, not the driver: the first driver that reports it is the floor, said in a note.
  void check_driver_input() {
    if (!req_.driver) return;
    std::string v = req_.driver->value;
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t") + 1);
    if (v.size() > 1 && (v[0] == 'R' || v[0] == 'r') && parse_driver(v.substr(1))) v.erase(0, 1);
    floor_ = parse_driver(v);
    const bool converted = floor_ && (*floor_)[0] < 100;
    if (converted) {
      const std::string cuda = std::to_string((*floor_)[0]) + "." + std::to_string((*floor_)[1]);
      const std::string first = (*floor_)[2] == 0 ? first_driver_reporting(cuda) : "";
      if (first.empty())
        throw Error(
            "driver '" + req_.driver->value + "' is no NVIDIA driver version, nor a CUDA version a driver reports",
            req_.driver->origin.location(), "give the \"Driver Version\" nvidia-smi prints, e.g. '570.133.20'");
      floor_ = parse_driver(first);
      req_.driver->value = first;
      early_notes_.push_back(
          {req_.driver->origin.describe() + " " + v +
               " is the CUDA version nvidia-smi prints, not a driver: drivers report it from " + first +
               " on, which envpin takes as the fleet's floor (give the \"Driver Version\" for an exact verdict)",
           req_.driver->origin.where});
    }
    if (!floor_)
      throw Error("invalid driver version '" + req_.driver->value + "'", req_.driver->origin.location(),
                  "give the driver as nvidia-smi prints it, e.g. '535.104.05'");
    if (req_.driver->value != v && !converted) req_.driver->value = v;
  }

  // Jetson Thor's driver has its own numbering: JetPack 7.0 and 7.1 (L4T r38.2, r38.4) print
  // "Driver Version: 580.00  CUDA Version: 13.0" (vllm-project/vllm#34470's collect_env; users'
  // nvidia-smi on Jetson AGX Thor), below 580.65.06, the first desktop/data-center driver that
  // reports 13.0. For a fleet of Thor only (sm_110, which no other GPU has), 580.00 is taken as
  // the CUDA it reports, the same whether the GPU is named or given as a capability.
  void read_tegra_driver() {
    if (!floor_ || fleet_.empty() || req_.driver->value != "580.00") return;
    if (!std::all_of(fleet_.begin(), fleet_.end(), [](const GpuTarget& g) { return g.sm == 110; })) return;
    const std::string first = first_driver_reporting("13.0");
    floor_ = parse_driver(first);
    early_notes_.push_back({req_.driver->origin.describe() + " 580.00 is Jetson Thor's (JetPack 7.0 and 7.1), which " +
                                "reports CUDA 13.0: taken as " + first + ", the first driver that does elsewhere",
                            req_.driver->origin.where});
  }

  // A driver branch older than a GPU's architecture cannot drive the GPU at all, whatever the
  // image: minor-version compatibility does not help. Blackwell reached the driver with the
  // first CUDA line that builds for it (sm_100/sm_120: CUDA 12.8, packaged with R570; sm_103/
  // sm_121: 12.9, R575; cuda-facts.md §1.1 Table 3 and §2.3). Derived, and checked for
  // Blackwell only: older architectures were in some drivers before a toolkit built for them.
  // Public report: pytorch/pytorch#149845 (an RTX 5090 D failing until the driver was upgraded).
  void check_driver_knows_gpus() const {
    if (!floor_) return;
    for (const GpuTarget& g : fleet_) {
      if (g.sm < 100) continue;
      const std::vector<std::string_view> able = lines_building(g.sm);
      if (able.empty()) continue;
      const std::optional<DriverVersion> first = parse_driver(packaged_driver(std::string(able.front()) + ".0"));
      if (!first || (*floor_)[0] >= (*first)[0]) continue;
      const std::string branch = "R" + std::to_string((*first)[0]);
      throw Error("driver " + req_.driver->value + " (" + req_.driver->origin.describe() + ") cannot drive '" +
                      g.input + "' (" + sm_name(g.sm) + "): its architecture reached NVIDIA's driver with CUDA " +
                      std::string(able.front()) + ", in branch " + branch,
                  req_.driver->origin.location(), "upgrade the fleet's driver to " + branch + " or newer");
    }
  }

  // A line past the table is one envpin knows nothing of, whatever the fleet: that is the cause.
  void check_in_table() const {
    const std::string& v = req_.cuda.value;
    const std::string_view newest = cuda_releases().back().minor;
    if (find_cuda_release(v) || version_pair(v) <= version_pair(newest)) return;
    // A GPU the newest line already dropped (V100 after 12.9) is the cause check_unpublished_compiles names.
    for (const auto& in : req_.gpus)
      if (const auto sm = gpu_sm(in.value); sm && !lines_building(*sm).empty() && lines_building(*sm).back() != newest)
        return;
    throw Error("CUDA " + v + " (" + req_.cuda.origin.describe() +
                    ") is newer than envpin's table, whose newest line is " + std::string(newest),
                req_.cuda.origin.location(),
                "set " + req_.cuda.origin.label + " to " + std::string(newest) + " or older, or update envpin");
  }

  void check_unpublished_compiles() const {
    const std::string& v = req_.cuda.value;
    const auto wanted = version_pair(v.substr(0, v.find('.', v.find('.') + 1)));
    for (const GpuTarget& g : fleet_) {
      const std::vector<std::string_view> able = lines_building(g.sm);
      if (able.empty() || (wanted >= version_pair(able.front()) && wanted <= version_pair(able.back()))) continue;
      // Older than the table's first line: envpin cannot say what it built (V100 and 10.2 is fine).
      if (wanted < version_pair(able.front()) && able.front() == cuda_releases().front().minor) continue;
      const bool older = wanted < version_pair(able.front());
      const auto loc =
          std::find_if(req_.gpus.begin(), req_.gpus.end(), [&](const auto& in) { return in.value == g.input; });
      throw Error("CUDA " + v + " (" + req_.cuda.origin.describe() + ") cannot build code for '" + g.input + "' (" +
                      sm_name(g.sm) + "); CUDA " + std::string(able.front()) + " to " + std::string(able.back()) +
                      " can (and nvidia/cuda publishes no " + v + " image)",
                  loc->origin.location(),
                  "set " + req_.cuda.origin.label + " to " + std::string(older ? able.front() : able.back()) +
                      (older ? " or newer" : " or older"));
    }
  }

  Candidate requested_candidate() const {
    const std::string& v = req_.cuda.value;
    const CudaRelease* release = find_cuda_release(v);
    if (!release) {
      const std::string major = v.substr(0, v.find('.'));
      std::string same_major;
      for (const CudaRelease& r : cuda_releases())
        if (r.minor.substr(0, r.minor.find('.')) == major)
          same_major += (same_major.empty() ? "" : ", ") + std::string(r.minor);
      // A driver too old for every published line: the hint must name what actually works.
      const CudaRelease& oldest = cuda_releases().front();
      const std::string oldest_driver = packaged_driver(oldest.patches.front());
      if (floor_ && *floor_ < *parse_driver(oldest_driver))
        throw Error("nvidia/cuda has no supported image for CUDA " + v + ", and " + req_.driver->origin.describe() +
                        " " + req_.driver->value + " runs none that does: the oldest, CUDA " +
                        std::string(oldest.patches.front()) + ", needs driver >= " + oldest_driver,
                    req_.cuda.origin.location(),
                    "upgrade the fleet's driver to " + oldest_driver + " or newer, then set " + req_.cuda.origin.label +
                        " to " + std::string(oldest.minor) + " or newer");
      throw Error("nvidia/cuda has no supported image for CUDA " + v, req_.cuda.origin.location(),
                  same_major.empty() ? "supported CUDA lines: 11.x, 12.x, 13.x"
                                     : "CUDA " + major + " images exist for " + same_major);
    }
    if (std::count(v.begin(), v.end(), '.') == 2) {
      if (std::find(release->patches.begin(), release->patches.end(), v) == release->patches.end())
        throw Error(
            "nvidia/cuda publishes no tag for CUDA " + v + " (kept: " + std::string(release->patches.back()) + ")",
            req_.cuda.origin.location(),
            (req_.cuda.origin.where ? "write 'version: \"" + std::string(release->minor) + "\"'"
                                    : "use '--cuda " + std::string(release->minor) + "'") +
                " to get the newest published patch release");
      return {release, v};
    }
    return {release, std::string(release->patches.back())};
  }

  // --- constraints: each returns why candidate `c` cannot be used, or fills `d` ---------

  std::optional<Blocker> check_os(const Candidate& c, CudaDecision& d) const {
    const auto& list = c.release->ubuntu;
    if (req_.ubuntu) {
      if (std::find(list.begin(), list.end(), req_.ubuntu->value) == list.end()) {
        std::string names;
        for (auto u : list) names += (names.empty() ? "ubuntu" : ", ubuntu") + std::string(u);
        return Blocker{"nvidia/cuda has no CUDA " + c.toolkit + " image for ubuntu" + req_.ubuntu->value,
                       "set os to one of: " + names, req_.ubuntu->origin.location()};
      }
      d.os_version = req_.ubuntu->value;
    } else {
      d.os_version = std::find(list.begin(), list.end(), "22.04") != list.end() ? "22.04" : std::string(list.back());
    }
    return std::nullopt;
  }

  std::optional<Blocker> check_compile(const Candidate& c) const {
    const std::vector<int> compilable = compilable_sms(c.release->minor);
    for (const GpuTarget& g : fleet_) {
      if (std::find(compilable.begin(), compilable.end(), g.sm) != compilable.end()) continue;
      const std::vector<std::string_view> able = lines_building(g.sm);
      const std::string where_to =
          able.empty() ? "" : "; CUDA " + std::string(able.front()) + " to " + std::string(able.back()) + " can";
      const auto loc =
          std::find_if(req_.gpus.begin(), req_.gpus.end(), [&](const auto& in) { return in.value == g.input; });
      Blocker b{"CUDA " + c.toolkit + " (" + requested_label() + ") cannot build code for '" + g.input + "' (" +
                    sm_name(g.sm) + ")" + where_to,
                "drop '" + g.input + "'", loc->origin.location()};
      if (able.empty()) {
        b.hint = "no CUDA line envpin knows builds " + sm_name(g.sm) + ": drop '" + g.input + "'";
      } else {
        const bool newer = version_pair(able.front()) > version_pair(c.release->minor);
        const std::string to(newer ? able.front() : able.back());
        b.fixes.push_back(
            with_cuda(to, "set " + req_.cuda.origin.label + " to " + to + (newer ? " or newer" : " or older")));
      }
      return b;
    }
    return std::nullopt;
  }

  std::optional<Blocker> check_driver(const Candidate& c, CudaDecision& d) const {
    d.driver_packaged = packaged_driver(c.toolkit);
    d.driver_minor_compat = minor_compat_floor(major_of(c.release->minor));
    if (!floor_) {
      d.driver_fit = DriverFit::unknown;
      return std::nullopt;
    }
    d.driver_floor = req_.driver->value;
    if (*floor_ >= *parse_driver(d.driver_packaged)) {
      d.driver_fit = DriverFit::full;
      return std::nullopt;
    }
    if (!d.driver_minor_compat.empty() && *floor_ >= *parse_driver(d.driver_minor_compat)) {
      d.driver_fit = DriverFit::minor_version;
      return std::nullopt;
    }
    // Forward compatibility (cuda-compat-X-Y, in every nvidia/cuda image): an older driver major
    // runs a newer CUDA, on data-center GPUs only (NVIDIA's forward-compatibility guide; other
    // GPUs fail with error 804). Opt-in: the verdict cannot see the hardware.
    if (req_.forward_compat) {
      for (const GpuTarget& g : fleet_) {
        const GpuModel* model = g.product.empty() ? nullptr : find_gpu(g.product);
        if (!model || model->kind != GpuKind::data_center)
          return Blocker{req_.forward_compat->origin.describe() + " needs data-center GPUs, but '" + g.input + "' is " +
                             (model ? "not one" : "a bare capability, whose product envpin cannot tell") +
                             ": forward compatibility fails there with CUDA error 804",
                         model ? "upgrade the fleet's driver, or drop cuda.forward_compat"
                               : "name the GPU product (e.g. 'A100') in cuda.gpus",
                         req_.forward_compat->origin.location()};
      }
      // NVIDIA supports forward compatibility on some branches only; the tag's start gate lists
      // exactly the branches its cuda-compat libraries are for, whatever cuda.require_check says.
      if (const StartGate* gate = find_start_gate(c.toolkit);
          gate && !gate->branches.empty() &&
          std::find(gate->branches.begin(), gate->branches.end(), (*floor_)[0]) == gate->branches.end()) {
        std::string branches;
        for (int b : gate->branches) branches += (branches.empty() ? "R" : ", R") + std::to_string(b);
        return Blocker{req_.forward_compat->origin.describe() + ": " + req_.repository + ":" + c.toolkit +
                           " supports forward compatibility on " + branches + ", not on driver " + req_.driver->value,
                       "upgrade the fleet's driver to a supported branch", req_.forward_compat->origin.location()};
      }
      d.driver_fit = DriverFit::forward;
      return std::nullopt;
    }
    std::string newest_full, newest_any;
    for (const CudaRelease& r : cuda_releases()) {
      if (*floor_ >= *parse_driver(packaged_driver(r.patches.back()))) newest_full = std::string(r.minor);
      const std::string mvc = minor_compat_floor(major_of(r.minor));
      if (!mvc.empty() && *floor_ >= *parse_driver(mvc)) newest_any = std::string(r.minor);
    }
    const std::string needed =
        "NVIDIA driver >= " + d.driver_packaged +
        (d.driver_minor_compat.empty() ? "" : " (>= " + d.driver_minor_compat + " with minor-version compatibility)");
    Blocker b{"CUDA " + c.toolkit + " (" + requested_label() + ") needs " + needed + ", but " +
                  req_.driver->origin.describe() + " is " + req_.driver->value,
              "", req_.driver->origin.location()};
    if (!newest_full.empty())
      b.fixes.push_back(with_cuda(
          newest_full, "set " + req_.cuda.origin.label + " to " + newest_full + " (the newest this driver runs fully" +
                           (newest_any.empty() || newest_any == newest_full
                                ? ""
                                : "; up to " + newest_any + " with minor-version compatibility") +
                           ")"));
    // Data-center GPUs run a newer major on an older driver through forward compatibility, where
    // the image's start gate lists the driver's branch (decided with the fix, before it is shown).
    if (all_data_center()) b.fixes.push_back(with_forward_compat());
    b.fixes.push_back(
        with_driver(req_, d.driver_packaged, "upgrade the fleet's driver to " + d.driver_packaged + " or newer"));
    return b;
  }

  // The image's own start gate (NVIDIA_REQUIRE_CUDA, cuda_tables.cpp): the NVIDIA container
  // runtime starts the container only where the driver's own CUDA is at least the tag's, or where
  // the driver's branch is listed for the GPU's brand; every GPU of the node must pass. Public
  // reports: "unsatisfied condition: cuda>=12.8" on R535 and R550 hosts (open-webui/docs#507,
  // theroyallab/tabbyAPI#324), while nvidia/cuda:12.5.0 starts on an R535 data-center host
  // (rapidsai/devcontainers#332).
  std::optional<Blocker> check_gate(const Candidate& c, CudaDecision& d) const {
    if (!floor_) return std::nullopt;
    const StartGate* found = find_start_gate(c.toolkit);
    if (!found) return std::nullopt;
    const StartGate& gate = *found;
    const std::string reported = cuda_reported_by(*floor_);
    const std::string requirement = "cuda>=" + std::string(gate.cuda);
    const std::string& driver = req_.driver->value;
    if (!reported.empty() && version_pair(reported) >= version_pair(gate.cuda)) {
      d.start_gate = requirement + ", and driver " + driver + " reports CUDA " + reported;
      return std::nullopt;
    }
    const int branch = (*floor_)[0];
    const std::string reports = reported.empty() ? "reports no CUDA envpin knows" : "reports CUDA " + reported;
    std::string brands;
    for (const manifest::Arch a : platforms_) {
      for (const GpuTarget& g : fleet_) {
        const GpuModel* model = g.product.empty() ? nullptr : find_gpu(g.product);
        const std::string_view brand = model ? gpu_brand(*model, branch) : std::string_view();
        const bool admitted = model && gate_admits(gate, brand, branch, a == manifest::Arch::arm64);
        // GeForce and TITAN GPUs on a driver older than the image's CUDA fail once started: the
        // image's cuda-compat libraries load for the older driver, and they run on data-center
        // GPUs only (error 804). Public reports, each a GeForce the 12.1-12.4 gates admitted:
        // oobabooga/textgen#4407 (GTX 1050 Ti, 525.125.06, CUDA 12.1), AIR-DISCOVER/
        // ICRA2024-Sim2Real-AXS#5 (RTX 3090, R525, 12.1), vllm-project/vllm#5283 (RTX 4090,
        // 535.171.04, 12.4), and with the gate off, EricLBuehler/mistral.rs#1858 (RTX 5090, R580,
        // 13.1).
        if (model && (brand == "geforce" || brand == "titan") && (admitted || req_.require_off)) {
          Blocker b{"CUDA in " + req_.repository + ":" + c.toolkit + " fails on '" + g.input + "' with driver " +
                        driver + " (it " + reports +
                        "): the image's cuda-compat libraries load for a driver older than " +
                        "its CUDA, and on GeForce and TITAN GPUs that is error 804 (\"forward compatibility was "
                        "attempted on non supported HW\")",
                    "", req_.driver->origin.location()};
          gate_fixes(b, c, gate, reported, true);
          b.fixes.pop_back();  // not the gate's opt-out: the container would start and fail
          return b;
        }
        if (admitted) {
          if (brands.find(std::string(brand)) == std::string::npos)
            brands += (brands.empty() ? "" : ", ") + std::string(brand);
          continue;
        }
        if (req_.require_off) {
          d.gate_bypassed = true;
          d.start_gate = requirement + ", which driver " + driver + " (it " + reports + ") does not meet";
          return std::nullopt;
        }
        const std::string why =
            !model ? "'" + g.input + "' is a bare capability, and the gate's exceptions depend on the GPU's brand"
            : std::find(gate.branches.begin(), gate.branches.end(), branch) == gate.branches.end()
                ? "its exceptions do not list branch R" + std::to_string(branch)
                : "its exceptions do not list " + std::string(brand) + " GPUs ('" + g.input + "')" +
                      (a == manifest::Arch::arm64 && !gate.arm64_same ? " in the arm64 image" : "");
        Blocker b{"the NVIDIA container runtime refuses to start " + req_.repository + ":" + c.toolkit + " on driver " +
                      driver + ": the image requires " + requirement + ", the driver " + reports + ", and " + why,
                  "", req_.driver->origin.location()};
        gate_fixes(b, c, gate, reported, model != nullptr);
        return b;
      }
    }
    d.start_gate = requirement + ", or branch R" + std::to_string(branch) + " for " + brands + " GPUs (driver " +
                   driver + " " + reports + ")";
    // The floor's branch is listed; a node on a later branch the tag does not list is refused.
    std::string unlisted;
    const auto upgrade = parse_driver(first_driver_reporting(gate.cuda));
    std::set<int> known;
    for (const ToolkitDriver& t : toolkit_drivers()) known.insert((*parse_driver(t.linux_driver))[0]);
    for (int b : known)
      if (b > branch && upgrade && b < (*upgrade)[0] &&
          std::find(gate.branches.begin(), gate.branches.end(), b) == gate.branches.end())
        unlisted += (unlisted.empty() ? "R" : ", R") + std::to_string(b);
    if (!unlisted.empty())
      d.warnings.push_back({"nodes on " + unlisted + " (above the fleet's floor " + driver + ", below " +
                                first_driver_reporting(gate.cuda) + ") would be refused at start: " + c.toolkit +
                                "'s NVIDIA_REQUIRE_CUDA does not list those branches",
                            req_.driver->origin.where});
    return std::nullopt;
  }

  // The fixes: the newest line the driver reports, the driver that reports this tag's CUDA, or
  // the opt-out (each decided before it is shown).
  void gate_fixes(Blocker& b, const Candidate& c, const StartGate& gate, const std::string& reported,
                  bool named) const {
    if (!named) b.hint = "name the GPU product in " + req_.gpus_origin.label;
    std::string newest;
    for (const CudaRelease& r : cuda_releases())
      if (!reported.empty() && version_pair(r.minor) <= version_pair(reported)) newest = std::string(r.minor);
    if (!newest.empty() && version_pair(newest) < version_pair(c.release->minor))
      b.fixes.push_back(with_cuda(
          newest, "set " + req_.cuda.origin.label + " to " + newest + " (the newest CUDA the driver reports)"));
    if (const std::string upgrade = first_driver_reporting(gate.cuda); !upgrade.empty())
      b.fixes.push_back(with_driver(req_, upgrade, "upgrade the fleet's driver to " + upgrade + " or newer"));
    b.fixes.push_back(with_require_off());
  }

  bool all_data_center() const {
    return !fleet_.empty() && std::all_of(fleet_.begin(), fleet_.end(), [](const GpuTarget& g) {
      const GpuModel* m = g.product.empty() ? nullptr : find_gpu(g.product);
      return m && m->kind == GpuKind::data_center;
    });
  }

  // All constraints on one candidate; fills `d` when it passes.
  std::optional<Blocker> evaluate(const Candidate& c, CudaDecision& d) const {
    d = CudaDecision{};
    if (auto b = check_os(c, d)) return b;
    if (auto b = check_compile(c)) return b;
    if (auto b = check_driver(c, d)) return b;
    if (auto b = check_gate(c, d)) return b;
    if (auto b = torch_fit_.check(c, d, requested_label())) return b;
    finish(c, d);
    return std::nullopt;
  }

  void finish(const Candidate& c, CudaDecision& d) const {
    d.toolkit = c.toolkit;
    d.minor = std::string(c.release->minor);
    const std::string cudnn = req_.cudnn ? std::string(c.release->cudnn_part) + "-" : "";
    d.base_image = req_.repository + ":" + c.toolkit + "-" + cudnn + req_.flavor + "-ubuntu" + d.os_version;
    // The smoke program is compiled by this toolkit's nvcc (cuDNN plays no part in it).
    d.devel_image = req_.repository + ":" + c.toolkit + "-devel-ubuntu" + d.os_version;
    for (const manifest::Arch a : platforms_) d.platforms.push_back(manifest::Platform{a}.text());
    d.gpus = fleet_;
    d.sms = sms_;
    for (std::size_t i = 0; i < sms_.size(); ++i) {
      const bool last = i + 1 == sms_.size();
      d.cmake_architectures += (i ? ";" : "") + std::to_string(sms_[i]) + (last ? "" : "-real");
      d.torch_arch_list += (i ? ";" : "") + capability_text(sms_[i]) + (last ? "+PTX" : "");
    }
    d.warnings.insert(d.warnings.begin(), early_notes_.begin(), early_notes_.end());

    std::string gpus;
    for (const GpuTarget& g : fleet_) gpus += (gpus.empty() ? "" : ", ") + gpu_label(g);
    d.reasons.push_back("GPUs: " + gpus);
    d.reasons.push_back("arch list: SASS for " + sm_list(sms_) + ", PTX compute_" + std::to_string(sms_.back()) +
                        " for GPUs newer than the fleet");
    const std::string drivers =
        "needs driver >= " + d.driver_packaged + " (packaged with CUDA " + c.toolkit + ")" +
        (d.driver_minor_compat.empty() ? "" : ", or >= " + d.driver_minor_compat + " with minor-version compatibility");
    switch (d.driver_fit) {
      case DriverFit::unknown:
        d.reasons.push_back("driver: " + drivers + "; no fleet driver floor given");
        break;
      case DriverFit::full:
        d.reasons.push_back("driver: " + drivers + "; the fleet's " + d.driver_floor + " runs it fully");
        break;
      case DriverFit::forward:
        d.reasons.push_back("driver: " + drivers + "; the fleet's " + d.driver_floor +
                            " runs it only through forward compatibility (cuda.forward_compat: the image's "
                            "cuda-compat libraries, data-center GPUs)");
        d.warnings.push_back(
            {"driver " + d.driver_floor + " is a major release behind CUDA " + c.toolkit +
                 ": it runs only through forward compatibility, with the cuda-compat libraries of the image "
                 "(the NVIDIA container runtime enables them; on other GPUs CUDA error 804)",
             req_.driver->origin.where});
        break;
      case DriverFit::minor_version:
        d.reasons.push_back("driver: " + drivers + "; the fleet's " + d.driver_floor +
                            " runs it only through minor-version compatibility");
        d.warnings.push_back(
            {"driver " + d.driver_floor + " is older than " + d.driver_packaged + " (CUDA " + c.toolkit +
                 "): it runs through minor-version compatibility, which cannot JIT newer PTX; the arch list "
                 "carries SASS for every fleet GPU, but PTX-only kernels fail with error 222",
             req_.driver->origin.where});
        break;
    }
    if (!req_.flavor_why.empty()) d.reasons.push_back(req_.flavor_why);
    if (!req_.system_libraries_missing.empty())
      d.warnings.push_back({req_.system_libraries_missing + ": set " +
                                (req_.flavor == "base" ? std::string("cuda.flavor: runtime") : "cuda.cudnn: true") +
                                ", or install its wheels as the reason says",
                            std::nullopt});
    // (devel is chosen for nvcc, to build extensions in the image, not for its libraries: not said.)
    if (d.torch && (req_.flavor_given || req_.cudnn) && req_.flavor == "runtime" && req_.system_user.empty())
      d.warnings.push_back(
          {"cuda.flavor: " + req_.flavor + (req_.cudnn ? " with cuda.cudnn" : "") +
               " carries CUDA libraries (cuBLAS, NCCL, cuFFT" + (req_.cudnn ? ", cuDNN" : "") +
               ", ...) that torch's wheels bring again: two copies in the image, about 2-3 GB (envpin size lists them "
               "once locked); torch loads its own, so the base flavor is enough unless other code loads the system's",
           std::nullopt});
    if (d.torch) {
      const auto& t = *d.torch;
      std::string line = "torch " + t.version + ": " + t.variant + " wheels from " + t.index_url + " (kernels for " +
                         sm_list(t.sass) + (t.ptx ? ", PTX compute_" + std::to_string(t.ptx) : "") + ")";
      // Only a devel image has nvcc; the others carry the CUDA runtime libraries.
      if (variant_cuda(t.variant) != d.minor)
        line += "; they bring their own CUDA " + variant_cuda(t.variant) + " libraries, " +
                (req_.flavor == "devel" ? "nvcc in the image is " : "the image's CUDA runtime is ") + d.minor;
      d.reasons.push_back(line);
      // torch brings its own cuDNN (nvidia-cudnn wheels): 8 before torch 2.4, 9 from 2.4 on
      // (RELEASE.md matrix, cuda-facts.md §3.2). A cuDNN image of the other major gives code that
      // links the system cuDNN (extensions, other frameworks) another major than torch's.
      if (req_.cudnn) {
        const int image_cudnn = std::string_view(c.release->cudnn_part) == "cudnn8" ? 8 : 9;
        const int torch_cudnn = version_pair(t.version) < std::pair(2, 4) ? 8 : 9;
        if (image_cudnn != torch_cudnn)
          d.warnings.push_back(
              {"the image's cuDNN " + std::to_string(image_cudnn) + " (" + d.base_image + ") is not the cuDNN " +
                   std::to_string(torch_cudnn) + " torch " + t.version +
                   "'s wheels bring: torch uses its own, code linking the system cuDNN gets the other major",
               req_.torch ? req_.torch->origin.where : std::nullopt});
      }
    }
    if (!d.start_gate.empty())
      d.reasons.push_back("start gate: " +
                          (d.gate_bypassed ? "bypassed by " + req_.require_off->origin.describe() +
                                                 " (NVIDIA_DISABLE_REQUIRE=1): the image asks "
                                           : std::string("the container starts: ")) +
                          d.start_gate);
    d.reasons.push_back("image: " + d.base_image);
  }

  // --- auto --------------------------------------------------------------------------

  // Newest first, preferring (in this order) a driver that runs the toolkit fully, then a
  // toolkit equal to the torch wheels' own CUDA, so extensions build with a matching nvcc.
  CudaDecision decide_auto() const {
    std::vector<Candidate> candidates;
    for (const CudaRelease& r : cuda_releases()) candidates.push_back({&r, std::string(r.patches.back())});
    std::reverse(candidates.begin(), candidates.end());  // newest first
    std::optional<CudaDecision> best;
    int best_rank = 8;
    int best_distance = 0;
    for (const Candidate& c : candidates) {
      CudaDecision d;
      if (evaluate(c, d)) continue;
      const bool torch_mismatch = d.torch && variant_cuda(d.torch->variant) != d.minor;
      // Full before minor-version before forward compatibility, then the torch match.
      const int rank = (d.driver_fit == DriverFit::forward         ? 4
                        : d.driver_fit == DriverFit::minor_version ? 2
                                                                   : 0) +
                       (torch_mismatch ? 1 : 0);
      // Wheels of a CUDA line without an image (cu102, cu113): the nearest image the driver runs.
      int distance = 0;
      if (torch_mismatch && !find_cuda_release(variant_cuda(d.torch->variant))) {
        const auto [vmajor, vminor] = version_pair(variant_cuda(d.torch->variant));
        const auto [cmajor, cminor] = version_pair(d.minor);
        distance = (cmajor - vmajor) * 100 + cminor - vminor;
      }
      if (rank < best_rank || (rank == best_rank && distance < best_distance)) {
        best = std::move(d);
        best_rank = rank;
        best_distance = distance;
      }
    }
    if (!best) throw conflict(candidates);
    std::string why = "toolkit: CUDA " + best->toolkit + ", the newest that " + auto_summary();
    if (best->torch && best_rank % 2 == 0) why += ", matching the torch " + best->torch->variant + " wheels";
    if (best_rank >= 2) {
      // Name the real constraint: a toolkit the driver runs fully may exist, ruled out by torch.
      std::string newest_full;
      for (const Candidate& c : candidates)
        if (newest_full.empty() && floor_ && *floor_ >= *parse_driver(packaged_driver(c.toolkit)))
          newest_full = c.toolkit;
      if (!newest_full.empty() && best->torch && req_.torch_variant)
        why += " (CUDA " + newest_full + " runs fully on driver " + req_.driver->value + ", but the pinned torch " +
               req_.torch_variant->value + " wheels need a CUDA " + variant_cuda(req_.torch_variant->value) +
               " or newer image)";
      else if (!newest_full.empty() && best->torch)
        why += " (CUDA " + newest_full + " runs fully on driver " + req_.driver->value + ", but torch " +
               req_.torch->value + " has no wheels at or below it that fit)";
      else
        why += " (no toolkit fits the driver floor fully)";
    }
    best->reasons.insert(best->reasons.begin(), why);
    return *best;
  }

  std::string auto_summary() const {
    std::string s = "builds for every fleet GPU";
    if (torch_fit_.release()) s += ", has torch " + req_.torch->value + " wheels";
    if (floor_) s += ", runs on driver " + req_.driver->value;
    if (req_.ubuntu) s += ", has an ubuntu" + req_.ubuntu->value + " image";
    return s;
  }

  struct Constraint {
    std::string label;  // "cuda.gpus (line 5)"
    diag::Location where;
    std::vector<bool> allows;  // per candidate
  };

  static std::string ranges(const std::vector<Candidate>& cs, const std::vector<bool>& allows) {
    // candidates are newest first; describe oldest first
    std::string out;
    std::string_view first, last;
    bool open = false;
    for (std::size_t i = cs.size(); i-- > 0;) {
      if (allows[i]) {
        if (!open) first = cs[i].release->minor;
        last = cs[i].release->minor;
        open = true;
      }
      if (open && (!allows[i] || i == 0)) {
        out += (out.empty() ? "" : ", ") + std::string(first) + (first == last ? "" : " to " + std::string(last));
        open = false;
      }
    }
    return out.empty() ? "none" : out;
  }

  Error conflict(const std::vector<Candidate>& cs) const {
    std::vector<Constraint> constraints;
    auto add = [&](std::string label, diag::Location where, const std::function<bool(const Candidate&)>& ok) {
      Constraint k{std::move(label), std::move(where), {}};
      for (const Candidate& c : cs) k.allows.push_back(ok(c));
      constraints.push_back(std::move(k));
    };
    CudaDecision scratch;
    add(req_.gpus_origin.describe(), req_.gpus_origin.location(),
        [&](const Candidate& c) { return !check_compile(c); });
    if (floor_)
      add(req_.driver->origin.describe() + " " + req_.driver->value, req_.driver->origin.location(),
          [&](const Candidate& c) { return !check_driver(c, scratch) && !check_gate(c, scratch); });
    if (torch_fit_.release())
      add("torch " + req_.torch->value + " (" + req_.torch->origin.describe() + ")", req_.torch->origin.location(),
          [&](const Candidate& c) { return !torch_fit_.check(c, scratch, requested_label()); });
    if (req_.ubuntu)
      add("os ubuntu" + req_.ubuntu->value + " (" + req_.ubuntu->origin.describe() + ")",
          req_.ubuntu->origin.location(), [&](const Candidate& c) { return !check_os(c, scratch); });
    // One input that no toolkit satisfies: its own blocker, on the oldest toolkit the other
    // inputs allow, says what is wrong with it.
    for (std::size_t i = 0; i < constraints.size(); ++i) {
      if (std::find(constraints[i].allows.begin(), constraints[i].allows.end(), true) != constraints[i].allows.end())
        continue;
      std::optional<std::size_t> pick;
      for (std::size_t k = 0; k < cs.size(); ++k) {
        bool others = true;
        for (std::size_t j = 0; j < constraints.size(); ++j) others = others && (j == i || constraints[j].allows[k]);
        if (others) pick = k;  // candidates are newest first: the last match is the oldest
      }
      CudaDecision d;
      if (auto b = evaluate(cs[pick.value_or(cs.size() - 1)], d)) throw Refusal(*b);
    }
    // The three nearest toolkits (the most inputs allow them, newest first), one reason each.
    std::vector<std::size_t> order(cs.size());
    for (std::size_t k = 0; k < cs.size(); ++k) order[k] = k;
    const auto allowed_by = [&](std::size_t k) {
      return std::count_if(constraints.begin(), constraints.end(), [&](const Constraint& c) { return c.allows[k]; });
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return allowed_by(a) > allowed_by(b); });
    // One reason each, and three different reasons where there are: 12.9.1, 12.8.1 and 12.6.3
    // refused for the same driver floor say one thing, 11.8.0 refused for error 804 another.
    std::string nearest;
    std::set<std::string> said;
    for (std::size_t i = 0, listed = 0; i < order.size() && listed < 3; ++i) {
      CudaDecision d;
      const auto b = evaluate(cs[order[i]], d);
      if (!b) continue;
      const std::string cause = short_cause(b->message, "CUDA " + cs[order[i]].toolkit + " (");
      std::string kind = b->message;
      std::erase_if(kind, [](char ch) { return (ch >= '0' && ch <= '9') || ch == '.'; });
      if (!said.insert(kind).second) continue;
      nearest += (nearest.empty() ? "" : "; ") + cs[order[i]].toolkit + ": " + cause;
      ++listed;
    }
    for (std::size_t i = 0; i < constraints.size(); ++i)
      for (std::size_t j = i + 1; j < constraints.size(); ++j) {
        bool any = false;
        for (std::size_t k = 0; k < cs.size(); ++k) any = any || (constraints[i].allows[k] && constraints[j].allows[k]);
        if (any) continue;
        return Error("no CUDA toolkit fits both " + constraints[i].label + ", which allows CUDA " +
                         ranges(cs, constraints[i].allows) + ", and " + constraints[j].label + ", which allows " +
                         ranges(cs, constraints[j].allows) + (nearest.empty() ? "" : "; nearest: " + nearest),
                     constraints[j].where, "change one of the two; a fixed cuda.version shows the exact conflict");
      }
    std::string all;
    for (const Constraint& k : constraints)
      all += (all.empty() ? "" : "; ") + k.label + " allows CUDA " + ranges(cs, k.allows);
    return Error("no CUDA toolkit fits all inputs: " + all + (nearest.empty() ? "" : "; nearest: " + nearest),
                 req_.cuda.origin.location(), "relax one of them; a fixed cuda.version shows the exact conflict");
  }
};

}  // namespace

std::string Origin::describe() const {
  if (where && where->line > 0) return label + " at line " + std::to_string(where->line);
  return label;
}

std::string gpu_label(const GpuTarget& g) {
  return (g.product.empty() ? g.input : g.product) + " (sm_" + std::to_string(g.sm) + ")";
}

diag::Location Origin::location() const { return where ? *where : diag::Location{label, 0, 0}; }

namespace {

CudaDecision decide_unchecked(const CudaRequest& request) {
  if (!request.torch_range || request.torch) return Policy(request).decide();
  return detail::decide_for_range(request, [](const CudaRequest& pinned) { return Policy(pinned).decide(); });
}

// A hint's changes, decided before they are printed: a change that decides is kept; one that
// refuses again is kept with the one more change its own refusal proposes, where that decides
// and that change alone does not (then the first change is no part of the answer); the rest are
// dropped. Nothing left: the first change, with why it is not enough.
std::string checked_hint(const CudaRequest& request, const Refusal& refusal) {
  std::vector<std::string> kept;
  const auto keep = [&](const std::string& text) {
    if (std::find(kept.begin(), kept.end(), text) == kept.end()) kept.push_back(text);
  };
  const auto decides = [](const CudaRequest& r) {
    try {
      decide_unchecked(r);
      return true;
    } catch (const diag::Error&) {
      return false;
    }
  };
  std::string not_enough;
  for (const Fix& fix : refusal.fixes()) {
    CudaRequest changed = request;
    fix.apply(changed);
    try {
      decide_unchecked(changed);
      keep(fix.text);
      continue;
    } catch (const diag::Error& next) {
      // The second change: what the new refusal proposes, else the start gate's opt-out (a
      // refusal of the toolkit search names no change of its own).
      std::vector<Fix> seconds;
      if (const auto* r = dynamic_cast<const Refusal*>(&next)) seconds = r->fixes();
      // Never after forward compatibility: the gate's branches are where NVIDIA supports it.
      if (!request.require_off && !fix.forward_compat) seconds.push_back(detail::with_require_off());
      bool completed = false;
      for (const Fix& second : seconds) {
        CudaRequest alone = request, both = changed;
        second.apply(alone);
        second.apply(both);
        if (decides(alone)) {
          completed = true;  // the second change is the whole answer; the hint's own options carry it
        } else if (decides(both)) {
          keep(fix.text + ", and " + second.text);
          completed = true;
        }
        if (completed) break;
      }
      if (!completed && not_enough.empty())
        not_enough = fix.text + " is not enough alone: " + detail::short_cause(next.message(), "");
    }
  }
  std::string hint;
  for (const std::string& k : kept) hint += (hint.empty() ? "" : ", or ") + k;
  if (hint.empty()) hint = not_enough;
  if (!refusal.hint().empty()) hint += (hint.empty() ? "" : ", or ") + refusal.hint();
  return hint;
}

}  // namespace

CudaDecision decide_cuda(const CudaRequest& request) {
  try {
    return decide_unchecked(request);
  } catch (const Refusal& refusal) {
    if (refusal.fixes().empty()) throw diag::Error(refusal.message(), refusal.where(), refusal.hint());
    throw diag::Error(refusal.message(), refusal.where(), checked_hint(request, refusal));
  }
}

}  // namespace envpin::resolve

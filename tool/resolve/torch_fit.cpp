// SPDX-License-Identifier: Apache-2.0
#include "resolve/torch_fit.hpp"

#include <algorithm>
#include <cstdint>

#include "diag/cursor.hpp"
#include "resolve/torch_range.hpp"

namespace envpin::resolve::detail {

using diag::Error;

namespace {

// MAJOR.MINOR[.PATCH][letters[digits]], e.g. "2.4.1", "2.5.0rc1".
bool is_torch_version(std::string_view v) {
  diag::Cursor c{v};
  if (!c.digits() || !c.eat(".") || !c.digits()) return false;
  diag::Cursor patch = c;
  if (patch.eat(".") && patch.digits()) c = patch;
  if (!c.span([](char x) { return x >= 'a' && x <= 'z'; }).empty()) c.digits(0);
  return c.done();
}

}  // namespace

void TorchFit::check_input(std::vector<Note>& notes) {
  if (!req_.torch) return;
  const std::string& v = req_.torch->value;
  if (!is_torch_version(v))
    throw Error("invalid torch version '" + v + "'", req_.torch->origin.location(),
                "give it as pip does, e.g. '2.4.1'");
  if (req_.torch_variant && req_.torch_variant->value == "cpu")
    throw Error("torch " + v + "+cpu (" + req_.torch_variant->origin.describe() +
                    ") is the CPU-only build: no CUDA kernel runs in it",
                req_.torch_variant->origin.location(),
                "drop '+cpu' and let envpin choose the CUDA variant, or remove the cuda section for a CPU-only image");
  torch_ = find_torch_release(v);
  if (torch_ && req_.python) check_python_wheels();
  if (torch_) {
    if (req_.torch_variant) {
      const bool known = std::any_of(torch_->variants.begin(), torch_->variants.end(),
                                     [&](const TorchVariant& t) { return t.tag == req_.torch_variant->value; });
      if (!known && std::find(torch_->unserved.begin(), torch_->unserved.end(), req_.torch_variant->value) !=
                        torch_->unserved.end())
        throw Error("torch " + v + "'s " + req_.torch_variant->value + " wheels bring a CUDA runtime older than " +
                        "every nvidia/cuda image envpin builds on (its other CUDA variants: " + variant_list(*torch_) +
                        ")",
                    req_.torch_variant->origin.location(), "use one of its other variants");
      if (!known)
        throw Error("torch " + v + " has no " + req_.torch_variant->value +
                        " wheels (its CUDA variants: " + variant_list(*torch_) + ")",
                    req_.torch_variant->origin.location(),
                    "use one of its variants, or remove the index and let envpin choose");
      check_pinned_variant_kernels();
    } else {
      check_some_variant_runs();
    }
    return;
  }
  const std::size_t dot = v.find('.');
  const std::pair<int, int> wanted{
      bounded_int(v.substr(0, dot)),
      bounded_int(v.substr(dot + 1, v.find_first_not_of("0123456789", dot + 1) - dot - 1))};
  const std::pair<int, int> newest = version_pair(torch_releases().back().minor);
  const std::pair<int, int> oldest = version_pair(torch_releases().front().minor);
  const std::string oldest_text = std::to_string(oldest.first) + "." + std::to_string(oldest.second);
  if (wanted < oldest)
    throw Error("torch " + v + " predates the CUDA wheel table envpin checks (torch " + oldest_text + " to " +
                    std::string(torch_releases().back().minor) + ")",
                req_.torch->origin.location(), "pin torch " + oldest_text + " or newer");
  if (wanted > newest)
    notes.push_back({"torch " + v + " is newer than envpin's wheel table (up to " +
                         std::string(torch_releases().back().minor) +
                         "): its CUDA variant and GPU kernels are not checked",
                     req_.torch->origin.where});
}

// A pinned variant (cu118) whose CUDA predates a fleet GPU: the GPU's SM is the cause, before
// any toolkit is tried ("RTX 5090 with cu118": sm_120 needs CUDA 12.8 or newer).
void TorchFit::check_pinned_variant_kernels() const {
  const TorchVariant* pinned = nullptr;
  for (const TorchVariant& t : torch_->variants)
    if (t.tag == req_.torch_variant->value) pinned = &t;
  // A variant of a CUDA major the fleet's driver cannot run at all (cu130 on R575: 13.x needs
  // R580 even with minor-version compatibility).
  const int major = version_pair(pinned->cuda).first;
  const auto needs_driver = parse_driver(minor_compat_floor(major));
  // With cuda.forward_compat on data-center GPUs, an older driver major runs it: the toolkit's
  // driver check and the image's start gate decide.
  const bool forward =
      req_.forward_compat && !fleet_.empty() && std::all_of(fleet_.begin(), fleet_.end(), [](const GpuTarget& g) {
        const GpuModel* m = g.product.empty() ? nullptr : find_gpu(g.product);
        return m && m->kind == GpuKind::data_center;
      });
  if (floor_ && needs_driver && *floor_ < *needs_driver && !forward) {
    std::string runs;  // the newest variant of this torch the driver runs
    for (const TorchVariant& t : torch_->variants)
      if (const auto f = parse_driver(minor_compat_floor(version_pair(t.cuda).first));
          f && *floor_ >= *f && !t.pinned_only)
        runs = t.tag;
    Blocker b{"torch " + req_.torch->value + "+" + std::string(pinned->tag) + " (" +
                  req_.torch_variant->origin.describe() + ") needs a CUDA " + std::to_string(major) + ".x driver, " +
                  branch_text(minor_compat_floor(major)) + " or newer even with minor-version compatibility, but " +
                  req_.driver->origin.describe() + " is " + req_.driver->value,
              "", req_.torch_variant->origin.location()};
    if (!runs.empty())
      b.fixes.push_back(with_torch(req_, req_.torch->value, runs,
                                   "use torch " + req_.torch->value + "+" + runs + " (the newest variant it runs)"));
    b.fixes.push_back(with_forward_compat());
    b.fixes.push_back(
        with_driver(req_, minor_compat_floor(major),
                    "upgrade the fleet's driver to " + branch_text(minor_compat_floor(major)) + " or newer"));
    throw Refusal(b);
  }
  // A variant with no aarch64 wheels on linux/arm64 (GH200 on 2.7.0+cu126: its x86 wheels have
  // sm_90, 2.7's aarch64 ones are cu128 only): that is the cause, not its kernels.
  if (std::find(platforms_.begin(), platforms_.end(), manifest::Arch::arm64) != platforms_.end() &&
      pinned->sass_arm64.empty()) {
    std::string with;
    for (const TorchVariant& t : torch_->variants)
      if (!t.sass_arm64.empty()) with += (with.empty() ? "" : ", ") + std::string(t.tag);
    Blocker b{"torch " + req_.torch->value + "+" + std::string(pinned->tag) + " (" +
                  req_.torch_variant->origin.describe() + ") has no linux/arm64 wheels: torch " + req_.torch->value +
                  "'s aarch64 CUDA wheels are " + (with.empty() ? "none" : with) +
                  ", and pip would install PyPI's CPU-only aarch64 wheel",
              "", req_.torch_variant->origin.location()};
    refuse_pinned(b, "with linux/arm64 wheels for the fleet", "drop linux/arm64 from platforms");
  }
  for (const GpuTarget& g : fleet_) {
    const bool runs = std::all_of(platforms_.begin(), platforms_.end(), [&](manifest::Arch a) {
      return kernels_run_on(sass_for(*pinned, a), a == manifest::Arch::amd64 ? pinned->ptx : pinned->ptx_arm64, g.sm);
    });
    if (runs) continue;
    const std::vector<std::string_view> able = lines_building(g.sm);
    const bool too_old = !able.empty() && version_pair(pinned->cuda) < version_pair(able.front());
    const std::string needs =
        too_old ? "; " + sm_name(g.sm) + " needs CUDA " + std::string(able.front()) + " or newer" : "";
    Blocker b{"torch " + req_.torch->value + "+" + std::string(pinned->tag) + " (" +
                  req_.torch_variant->origin.describe() + ") wheels are built with CUDA " + std::string(pinned->cuda) +
                  " and carry no kernels for '" + g.input + "' (" + sm_name(g.sm) + ")" + needs,
              "", req_.torch_variant->origin.location()};
    refuse_pinned(b, "with kernels for the fleet", "drop '" + g.input + "'");
  }
}

void TorchFit::refuse_pinned(Blocker b, const std::string& why, const std::string& otherwise) const {
  // Another variant of the same release first: the user keeps the torch they pinned.
  for (auto t = torch_->variants.rbegin(); t != torch_->variants.rend() && b.fixes.empty(); ++t)
    if (runs_on_fleet(*t))
      b.fixes.push_back(
          with_torch(req_, req_.torch->value, std::string(t->tag),
                     "use torch " + req_.torch->value + "+" + std::string(t->tag) + " (its variant " + why + ")"));
  if (b.fixes.empty())
    if (auto f = fleet_fix()) b.fixes.push_back(*f);
  if (b.fixes.empty()) b.hint = otherwise;
  throw Refusal(b);
}

// No variant of this torch carries kernels for a fleet GPU: no toolkit or driver can fix that,
// so it is the cause to name ("K80 with torch 2.8": sm_37 left the wheels long before).
// aarch64 variants without verified lists are left to check(), which names the CPU-only
// wheel pip would take.
void TorchFit::check_some_variant_runs() const {
  // On linux/arm64 only the variants with aarch64 wheels count, when the release has any (Jetson
  // Thor, sm_110, on torch 2.8: only cu129 has them, without sm_110; the others' x86 lists say
  // nothing about arm64). A release with none is left to check(), which names the CPU-only wheel.
  const bool some_arm64 = std::any_of(torch_->variants.begin(), torch_->variants.end(),
                                      [](const TorchVariant& v) { return !v.sass_arm64.empty(); });
  const auto runs = [&](const TorchVariant& v, int sm) {
    return std::all_of(platforms_.begin(), platforms_.end(), [&](manifest::Arch a) {
      if (a == manifest::Arch::arm64 && v.sass_arm64.empty()) return !some_arm64;
      return kernels_run_on(sass_for(v, a), a == manifest::Arch::amd64 ? v.ptx : v.ptx_arm64, sm);
    });
  };
  const bool arm64 = std::find(platforms_.begin(), platforms_.end(), manifest::Arch::arm64) != platforms_.end();
  std::string arm64_variants;  // "cu129": the variants whose aarch64 wheels were looked at
  for (const TorchVariant& v : torch_->variants)
    if (!v.sass_arm64.empty() && !v.pinned_only)
      arm64_variants += (arm64_variants.empty() ? "" : ", ") + std::string(v.tag);
  for (const GpuTarget& g : fleet_) {
    if (std::any_of(torch_->variants.begin(), torch_->variants.end(),
                    [&](const TorchVariant& v) { return !v.pinned_only && runs(v, g.sm); }))
      continue;
    const std::string which =
        arm64 && some_arm64 ? "none of its variants with linux/arm64 wheels (" + arm64_variants + ") has them there"
                            : "none of its variants (" + variant_list(*torch_) + ") does";
    // Where the public record does not settle it, the refusal says so rather than claiming it.
    std::string unsettled;
    for (const TorchVariant& v : torch_->variants)
      if (arm64 && v.unsettled_arm64 == g.sm)
        unsettled = "its aarch64 " + std::string(v.tag) + " wheel may lack them (" + std::string(v.unsettled_why) +
                    "; torch.cuda.get_arch_list() on the machine settles it), and then it fails with";
    Blocker b{"torch " + req_.torch->value + " (" + req_.torch->origin.describe() + ") has no wheels " +
                  (unsettled.empty() ? "with" : "confirmed to carry") + " kernels for '" + g.input + "' (" +
                  sm_name(g.sm) + "): " + (unsettled.empty() ? which + ", so it would fail with" : unsettled) +
                  " \"no kernel image is available for execution on the device\"",
              "", req_.torch->origin.location()};
    if (auto f = fleet_fix()) b.fixes.push_back(*f);
    if (b.fixes.empty()) b.hint = "drop '" + g.input + "'";
    throw Refusal(b);
  }
  // Each GPU has a variant, but no variant has them all (V100 + RTX 5090 on torch 2.11: cu126
  // stops at Hopper, cu128 and cu130 start at Turing): no toolkit or driver can fix that either,
  // and the variant a toolkit would pick names only half the cause.
  std::vector<std::string> lacks;
  for (const TorchVariant& v : torch_->variants) {
    if (v.pinned_only) continue;
    std::string missing;
    for (const GpuTarget& g : fleet_)
      if (!runs(v, g.sm)) missing += (missing.empty() ? "'" : " and '") + g.input + "' (" + sm_name(g.sm) + ")";
    if (missing.empty()) return;
    lacks.push_back(std::string(v.tag) + " has none for " + missing);
  }
  std::string each;
  for (const std::string& l : lacks) each += (each.empty() ? "" : "; ") + l;
  Blocker b{"torch " + req_.torch->value + " (" + req_.torch->origin.describe() +
                ") has no variant with kernels for every fleet GPU: " + each,
            "", req_.torch->origin.location()};
  if (auto f = fleet_fix()) b.fixes.push_back(*f);
  if (b.fixes.empty()) b.hint = "split the fleet: one image per GPU generation";
  throw Refusal(b);
}

// torch publishes wheels for a range of CPython minors per release (RELEASE.md matrix).
void TorchFit::check_python_wheels() const {
  const auto wanted = version_pair(req_.python->value);
  if (wanted >= version_pair(torch_->python_min) && wanted <= version_pair(torch_->python_max)) return;
  // Python too new for this torch: the oldest torch with wheels for it; too old: the newest.
  const bool too_old = wanted < version_pair(torch_->python_min);
  std::string fix;
  for (const TorchRelease& r : torch_releases()) {
    if (wanted < version_pair(r.python_min) || wanted > version_pair(r.python_max)) continue;
    if (too_old)
      fix = ", or pin torch " + std::string(r.minor) + " or older";
    else if (fix.empty())
      fix = ", or pin torch " + std::string(r.minor) + " or newer";
  }
  const std::string minor = std::to_string(wanted.first) + "." + std::to_string(wanted.second);
  throw Error("torch " + req_.torch->value + " (" + req_.torch->origin.describe() + ") has no wheels for Python " +
                  minor + " (" + req_.python->origin.describe() + "): torch " + std::string(torch_->minor) +
                  " supports Python " + std::string(torch_->python_min) + " to " + std::string(torch_->python_max),
              req_.torch->origin.location(),
              "use Python " + std::string(too_old ? torch_->python_min : torch_->python_max) + fix);
}

// The wheels bring their own CUDA runtime; the image must be one the driver runs whenever it
// runs the wheels' CUDA: the same major at or above the wheels' minor. CUDA 10.x has no
// nvidia/cuda image envpin can choose (torch 1.x's cu101 and cu102), so an 11.x image serves it:
// every driver that runs 11.x runs 10.2 (Table 3: 10.2 needs 440.33, 11.x 450.80.02 or newer).
bool image_serves(const TorchVariant& v, const CudaRelease& image) {
  const std::pair<int, int> wheel = version_pair(v.cuda), line = version_pair(image.minor);
  const int vmajor = wheel.first, cmajor = line.first;  // named: clang 14 cannot capture a structured binding
  if (vmajor == cmajor) return wheel.second <= line.second;
  const bool major_published = std::any_of(cuda_releases().begin(), cuda_releases().end(),
                                           [&](const CudaRelease& r) { return major_of(r.minor) == vmajor; });
  return !major_published && cmajor == vmajor + 1;
}

const std::vector<int>& TorchFit::sass_for(const TorchVariant& v, manifest::Arch a) {
  return a == manifest::Arch::amd64 ? v.sass : v.sass_arm64;
}

// Whether a variant's kernels run on every fleet GPU, on every platform of the image (aarch64
// wheels carry their own, shorter lists).
bool TorchFit::runs_on_fleet(const TorchVariant& v) const {
  if (v.pinned_only) return false;  // never proposed
  return std::all_of(platforms_.begin(), platforms_.end(), [&](manifest::Arch a) {
    const int ptx = a == manifest::Arch::amd64 ? v.ptx : v.ptx_arm64;
    return std::all_of(sms_.begin(), sms_.end(), [&](int sm) { return kernels_run_on(sass_for(v, a), ptx, sm); });
  });
}

// The torch releases with a variant whose kernels run on every fleet GPU: "torch 2.7 or
// newer (cu128)", or a closed range when newer releases dropped the fleet ("torch 2.0 to 2.3
// (cu118)" for a K80).
std::string TorchFit::fix_for_fleet() const {
  std::string first, last, tag;
  for (const TorchRelease& r : torch_releases()) {
    const auto it =
        std::find_if(r.variants.rbegin(), r.variants.rend(), [&](const TorchVariant& v) { return runs_on_fleet(v); });
    if (it == r.variants.rend()) continue;
    if (first.empty()) {
      first = std::string(r.minor);
      tag = std::string(it->tag);
    }
    last = std::string(r.minor);
  }
  if (first.empty()) return "";
  const bool to_newest = last == torch_releases().back().minor;
  if (to_newest || first == last) return "torch " + first + (to_newest ? " or newer" : "") + " (" + tag + ")";
  // A closed range: the newest release that fits, and its variant, first.
  std::string last_tag;
  for (const TorchVariant& v : find_torch_release(last)->variants)
    if (runs_on_fleet(v)) last_tag = std::string(v.tag);
  return "torch " + last + " (" + last_tag + "), or an older release down to " + first;
}

// fix_for_fleet as a change: torch pinned to the release it names first (the newest of a closed
// range, the oldest of an open one), its variant left to the policy.
std::optional<Fix> TorchFit::fleet_fix() const {
  const std::string text = fix_for_fleet();
  if (text.empty()) return std::nullopt;
  const std::string release = text.substr(6, text.find(' ', 6) - 6);
  return with_torch(req_, release, "", "use " + text);
}

std::optional<Blocker> TorchFit::check(const Candidate& c, CudaDecision& d, const std::string& requested) const {
  if (!torch_) return std::nullopt;
  const auto [cmajor, cminor] = version_pair(c.release->minor);
  const TorchVariant* chosen = nullptr;
  const TorchVariant* without_arm64 = nullptr;  // fits the toolkit, but has no aarch64 CUDA wheels
  for (const TorchVariant& v : torch_->variants) {
    if (req_.torch_variant ? v.tag != req_.torch_variant->value : v.pinned_only) continue;
    if (!image_serves(v, *c.release)) continue;
    if (std::find(platforms_.begin(), platforms_.end(), manifest::Arch::arm64) != platforms_.end() &&
        v.sass_arm64.empty())
      without_arm64 = &v;
    else
      chosen = &v;
  }
  const std::string torch_label = "torch " + req_.torch->value + " (" + req_.torch->origin.describe() + ")";
  if (!chosen && without_arm64) {
    // pip would take PyPI's CPU-only aarch64 wheel: torch imports, and no kernel runs. The fix:
    // this release's variant that has aarch64 wheels for the fleet (torch 2.8: cu129), else the
    // releases that have one.
    std::string fix;
    for (const TorchVariant& v : torch_->variants)
      if (!v.sass_arm64.empty() && runs_on_fleet(v) && version_pair(v.cuda) > version_pair(c.release->minor) &&
          !req_.torch_variant && req_.cuda.value != "auto")
        fix = "set " + req_.cuda.origin.label + " to " + std::string(v.cuda) + " or newer (torch " + req_.torch->value +
              "'s " + std::string(v.tag) + " wheels have linux/arm64 builds)";
    if (fix.empty()) {
      const std::string releases = fix_for_fleet();
      fix = releases.empty() ? "drop linux/arm64 from platforms" : "use " + releases + " for linux/arm64";
    }
    const bool none = std::none_of(torch_->variants.begin(), torch_->variants.end(),
                                   [](const TorchVariant& v) { return !v.sass_arm64.empty(); });
    return Blocker{torch_label + " has no CUDA wheels for linux/arm64 " +
                       (none ? "in any variant envpin knows of (" + variant_list(*torch_) + ")"
                             : "on its " + std::string(without_arm64->tag) + " index") +
                       ": pip would install PyPI's CPU-only aarch64 wheel",
                   fix, req_.torch->origin.location()};
  }
  if (!chosen) {
    if (req_.torch_variant)
      return Blocker{req_.torch_variant->origin.describe() + " selects torch " + req_.torch_variant->value +
                         " wheels, but CUDA " + c.toolkit + " (" + requested + ") needs a CUDA " +
                         std::to_string(cmajor) + ".x variant at or below " + std::string(c.release->minor),
                     "change the torch index, or " + req_.cuda.origin.label, req_.torch_variant->origin.location()};
    std::string fit;  // toolkits this torch does fit
    for (const TorchVariant& v : torch_->variants)
      if (!v.pinned_only) fit = std::string(v.cuda);
    return Blocker{torch_label + " has no wheels that fit a CUDA " + c.toolkit + " image (" + requested +
                       "): its variants are " + variant_list(*torch_) + ", and one must be CUDA " +
                       std::to_string(cmajor) + ".x at or below " + std::string(c.release->minor) +
                       " (torch refuses to build extensions with an nvcc of another CUDA major, as DeepSpeed's and "
                       "apex's builds do)",
                   "pin a torch built for CUDA " + std::to_string(cmajor),
                   req_.torch->origin.location(),
                   // Decided before it is printed: a toolkit the fleet rules out is never proposed.
                   {with_cuda(fit, "set " + req_.cuda.origin.label + " to " + fit)}};
  }
  for (const manifest::Arch a : platforms_) {
    const std::vector<int>& sass = sass_for(*chosen, a);
    const int ptx = a == manifest::Arch::amd64 ? chosen->ptx : chosen->ptx_arm64;
    for (const GpuTarget& g : fleet_) {
      if (kernels_run_on(sass, ptx, g.sm)) continue;
      const std::string fix = fix_for_fleet();
      return Blocker{
          torch_label + " " + std::string(chosen->tag) + " wheels carry no kernels for '" + g.input + "' (" +
              sm_name(g.sm) + "; they have " + sm_list(sass) + (ptx ? " and PTX compute_" + std::to_string(ptx) : "") +
              "): it would fail with \"no kernel image is available for execution on the device\"",
          fix.empty() ? "drop '" + g.input + "' from the fleet" : "use " + fix, req_.torch->origin.location()};
    }
  }
  TorchChoice t;
  t.version = req_.torch->value;
  t.variant = std::string(chosen->tag);
  t.index_url = torch_index_url(chosen->tag);
  t.sass = sass_for(*chosen, platforms_.front());
  t.ptx = platforms_.front() == manifest::Arch::amd64 ? chosen->ptx : chosen->ptx_arm64;
  d.torch = t;
  return std::nullopt;
}

// A refusal as one clause, in whole words: without the subject a list names already ("torch 2.6
// (python.packages at line 8) "), up to its first ": " (what follows explains it), and cut at a
// word when still long.
std::string short_cause(std::string message, const std::string& subject) {
  if (!subject.empty() && message.starts_with(subject)) {
    if (const auto close = message.find(") ", subject.size()); close != std::string::npos) message.erase(0, close + 2);
  }
  if (const auto colon = message.find(": "); colon != std::string::npos && colon >= 20) message.resize(colon);
  constexpr std::size_t kMax = 120;
  if (message.size() > kMax) {
    const auto space = message.rfind(' ', kMax);
    message.resize(space == std::string::npos ? kMax : space);
    message += " (...)";
  }
  return message;
}

CudaDecision decide_for_range(const CudaRequest& request,
                              const std::function<CudaDecision(const CudaRequest&)>& decide) {
  // A torch range: the newest release in the table that satisfies it and fits the fleet, the
  // driver and the CUDA request; each candidate is decided as if it were pinned.
  const Input<std::string>& range = *request.torch_range;
  const std::string shown = range.value.empty() ? "torch (any version)" : "'torch" + range.value + "'";
  std::vector<std::string> minors;
  for (const TorchRelease& t : torch_releases())
    if (minor_satisfies(t.minor, range.value)) minors.emplace_back(t.minor);
  std::sort(minors.begin(), minors.end(),
            [](const std::string& a, const std::string& b) { return version_pair(a) > version_pair(b); });
  if (minors.empty())
    throw Error(shown + " allows no torch release envpin knows (" +
                    std::to_string(version_pair(torch_releases().front().minor).first) + "." +
                    std::to_string(version_pair(torch_releases().front().minor).second) + " to " +
                    std::string(torch_releases().back().minor) + ")",
                range.origin.location(), "widen the specifier, or pin the release you need with torch==X.Y.Z");
  std::vector<std::string> why;
  for (const std::string& minor : minors) {
    CudaRequest pinned = request;
    pinned.torch = Input<std::string>{minor, range.origin};
    try {
      CudaDecision d = decide(pinned);
      d.torch->range = range.value;
      d.reasons.push_back("torch: " + minor + ".*, the newest release " + shown + " allows that fits the fleet" +
                          (why.empty() ? "" : " (" + std::to_string(why.size()) + " newer do not)"));
      return d;
    } catch (const Error& e) {
      why.push_back(minor + ": " + short_cause(e.message(), "torch " + minor + " ("));
    }
  }
  std::string list;
  for (std::size_t i = 0; i < why.size() && i < 3; ++i) list += (i ? "; " : "") + why[i];
  if (why.size() > 3) list += "; and " + std::to_string(why.size() - 3) + " older";
  // The hint names a release that does fit, decided like the others, where the table has one.
  // The release nearest the range (in the table's order) that fits: the least change to the specifier.
  const auto releases = torch_releases();
  std::vector<std::size_t> allowed;
  for (std::size_t i = 0; i < releases.size(); ++i)
    if (std::find(minors.begin(), minors.end(), std::string(releases[i].minor)) != minors.end()) allowed.push_back(i);
  std::string fits;
  std::size_t best = SIZE_MAX;
  for (std::size_t i = releases.size(); i-- > 0;) {
    std::size_t distance = SIZE_MAX;
    for (std::size_t j : allowed) distance = std::min(distance, i > j ? i - j : j - i);
    if (distance == 0 || distance >= best) continue;
    CudaRequest pinned = request;
    pinned.torch = Input<std::string>{std::string(releases[i].minor), range.origin};
    try {
      decide(pinned);
      fits = std::string(releases[i].minor);
      best = distance;
    } catch (const Error&) {
    }
  }
  throw Error("no torch release " + shown + " allows fits: " + list, range.origin.location(),
              fits.empty()
                  ? "no torch release envpin knows fits this fleet, driver and cuda.version: change one of them"
                  : "torch " + fits +
                        " fits (the nearest release that does): widen the specifier to allow "
                        "it, or change the fleet, driver or cuda.version");
}

}  // namespace envpin::resolve::detail

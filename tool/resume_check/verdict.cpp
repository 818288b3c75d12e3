// SPDX-License-Identifier: Apache-2.0
#include "resume_check/verdict.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <locale>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/json_input.hpp"
#include "pin/sha256.hpp"

namespace envpin::resume_check {

// The jobs domain this verdict reads: checkpoints and their patterns.
using namespace jobs;  // NOLINT(google-build-using-namespace)
namespace {

namespace fs = std::filesystem;
using diag::Error;

bool printable_line(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string number_text(double x) {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o << x;
  return o.str();
}

std::string seconds_text(double s) {
  const long tenths = std::lround(s * 10);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " s";
}

// The most of a compared line a verdict shows, and of any verdict line: lines and names are the
// job's, and may be megabytes.
constexpr std::size_t kLineShown = 300;
constexpr std::size_t kVerdictLineMax = 1000;

fs::path inside_project(const fs::path& project, const CompareItem& item) {
  // What the job left at the path may be a link (or pass through one): it is read only where it
  // resolves inside the project, never from elsewhere on the host.
  const fs::path named = project / item.path_or_prefix;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(named, ec))) return named;
  const fs::path root = fs::weakly_canonical(project, ec);
  const fs::path real = fs::weakly_canonical(named, ec);
  const fs::path rel = real.lexically_relative(root);
  if (ec || rel.empty() || *rel.begin() == "..")
    throw Error("--compare " + item.spec + " is a link out of the project (to " +
                    diag::quote(ec ? std::string("?") : real.generic_string()) +
                    "): envpin reads compared files only inside the project",
                std::nullopt, "have the job write the file itself inside the project, not a link to it");
  return real;
}

}  // namespace

KillAt parse_kill_at(const std::string& text) {
  KillAt k;
  if (text == "auto") return k;
  if (text.empty() || text.size() > 4096 || !printable_line(text))
    throw Error("--kill-at '" + text + "' is not auto, a number of seconds or a text to wait for in the log",
                std::nullopt, "e.g. --kill-at auto, --kill-at 20 or --kill-at 'step 40'");
  const bool number =
      std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }) &&
      std::count(text.begin(), text.end(), '.') <= 1 && text != ".";
  if (number) {
    k.kind = KillAt::Kind::seconds;
    k.seconds = std::strtod(text.c_str(), nullptr);
    if (!(k.seconds > 0))
      throw Error("--kill-at " + text + " is not a positive number of seconds", std::nullopt,
                  "give the seconds after each (re)start, e.g. --kill-at 20");
    return k;
  }
  k.kind = KillAt::Kind::pattern;
  k.pattern = text;
  return k;
}

CompareItem parse_compare(const std::string& text) {
  CompareItem item{text, false, text};
  if (text.starts_with("line:")) {
    item.is_line = true;
    item.path_or_prefix = text.substr(5);
    if (item.path_or_prefix.empty() || !printable_line(item.path_or_prefix))
      throw Error("--compare " + text + " names no line prefix", std::nullopt,
                  "give the start of the line the program prints, e.g. --compare 'line:final digest'");
    return item;
  }
  const fs::path p(text);
  const bool up = std::any_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
  if (text.empty() || !printable_line(text) || p.is_absolute() || up)
    throw Error("--compare '" + text + "' is not a path inside the project", std::nullopt,
                "name a file or directory the command writes, relative to the project (e.g. outputs/final.pt), or "
                "line:PREFIX");
  return item;
}

Outputs collect_outputs(const std::vector<CompareItem>& items, const fs::path& project, const fs::path& checkpoint_dir,
                        const fs::path& log, const Patterns& patterns, std::map<std::string, fs::path>* files) {
  Outputs out;
  const auto file = [&](const std::string& name, const fs::path& path, const std::string& digest) {
    out[name] = digest;
    if (files) (*files)[name] = path;
  };
  if (items.empty()) {
    for (const CheckpointFile& f : list_checkpoints(checkpoint_dir, patterns)) {
      std::string digest;
      if (!f.has_sidecar)
        digest = pin::sha256_file(checkpoint_dir / f.name);
      else if (!sidecar_matches(checkpoint_dir, f, &digest))
        continue;  // cut off: not a result
      file("checkpoint " + f.name, checkpoint_dir / f.name, digest);
    }
    // Nothing compared would read as "identical".
    if (out.empty())
      throw Error(
          "there is nothing to compare: the job left no complete checkpoint in " + checkpoint_dir.generic_string(),
          std::nullopt,
          "name what the job writes with --compare (a project file, or line:PREFIX for a line it prints), or say "
          "which files are checkpoints with jobs.checkpoints.pattern");
    return out;
  }
  for (const CompareItem& item : items) {
    if (item.is_line) {
      // The job owns its log's directory: a link there is not its log.
      std::error_code lec;
      if (!fs::is_regular_file(fs::symlink_status(log, lec)))
        throw Error("the job's log " + log.generic_string() + " is not a regular file (a link, or missing)",
                    std::nullopt, "have the job print to its output, not replace its log file");
      std::ifstream in(log, std::ios::binary);
      std::string line, last;
      bool found = false;
      while (std::getline(in, line))
        if (line.starts_with(item.path_or_prefix)) {
          last = line;
          found = true;
        }
      if (!found)
        throw Error("no line of the job's log (" + log.generic_string() + ") starts with '" + item.path_or_prefix + "'",
                    std::nullopt, "print the value to compare on a line of its own, e.g. 'final digest <hex>'");
      out[item.spec] = last;
      continue;
    }
    const fs::path target = inside_project(project, item);
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(target, ec))) {
      file(item.spec, target, pin::sha256_file(target));
    } else if (fs::is_directory(target, ec)) {
      for (auto it = fs::recursive_directory_iterator(target, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_regular_file() && !it->is_symlink())
          file(item.spec + "/" + it->path().lexically_relative(target).generic_string(), it->path(),
               pin::sha256_file(it->path()));
    } else {
      throw Error("--compare " + item.spec + " does not exist after the run (" + target.generic_string() + ")",
                  std::nullopt, "name a file or directory the command writes, relative to the project");
    }
  }
  return out;
}

Tolerance parse_tolerance(const std::string& text) {
  Tolerance t;
  if (text.empty()) return t;
  const auto number = [&](const std::string& part, double& into) {
    char* end = nullptr;
    into = std::strtod(part.c_str(), &end);
    return !part.empty() && end == part.c_str() + part.size() && std::isfinite(into) && into >= 0 &&
           part.find_first_of("xXnNiI") == std::string::npos;
  };
  const auto comma = text.find(',');
  const bool ok = comma == std::string::npos
                      ? number(text, t.rtol)
                      : number(text.substr(0, comma), t.rtol) && number(text.substr(comma + 1), t.atol);
  if (!ok || text.size() > 64)
    throw Error("--tolerance '" + diag::printable(text) + "' is not RTOL or RTOL,ATOL", std::nullopt,
                "give one or two numbers >= 0, e.g. --tolerance 1e-5 or --tolerance 1e-5,1e-8");
  return t;
}

std::map<std::string, long long> parse_steps(const std::string& text) {
  const nlohmann::json doc = io::parse_bounded_json(text);
  std::map<std::string, long long> out;
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("steps") || !doc["steps"].is_object()) return out;
  for (const auto& [id, v] : doc["steps"].items())
    if (v.is_number_unsigned() && v.get<std::uint64_t>() < (1ULL << 62) && id.size() < 64)
      out[id] = static_cast<long long>(v.get<std::uint64_t>());
  return out;
}

bool apply_inner_steps(std::vector<Version>& ref, std::vector<Version>& killed,
                       const std::map<std::string, long long>& steps) {
  const auto step_of = [&](const std::vector<Version>& vs, std::size_t i, const char* run) -> std::optional<long long> {
    if (vs[i].step) return vs[i].step;
    const auto f = steps.find(std::string("step:") + run + ":" + std::to_string(i));
    return f == steps.end() ? std::nullopt : std::optional<long long>(f->second);
  };
  // Name by name: a final.pt without a step does not keep ckpt.pt's versions from theirs.
  std::map<std::string, bool> usable;
  std::map<std::string, long long> last;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const auto u = usable.try_emplace(ref[i].name, true).first;
    const auto s = step_of(ref, i, "r");
    const auto l = last.find(ref[i].name);
    if (!s || (l != last.end() && *s <= l->second)) u->second = false;  // an uninterrupted run's steps rise
    if (s) last[ref[i].name] = *s;
  }
  for (std::size_t j = 0; j < killed.size(); ++j)
    if (!step_of(killed, j, "k")) usable[killed[j].name] = false;
  bool applied = false;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (usable[ref[i].name]) {
      ref[i].step = step_of(ref, i, "r");
      applied = true;
    }
  for (std::size_t j = 0; j < killed.size(); ++j)
    if (const auto u = usable.find(killed[j].name); u != usable.end() && u->second)
      killed[j].step = step_of(killed, j, "k");
  return applied;
}

Semantics parse_semantics(const std::string& text) {
  const nlohmann::json doc = io::parse_bounded_json(text);
  Semantics out;
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
    throw Error("envpin_compare.py's output has no results");
  const auto str = [](const nlohmann::json& o, const char* k) {
    return o.is_object() && o.contains(k) && o[k].is_string() ? diag::printable(o[k].get<std::string>())
                                                              : std::string();
  };
  const auto entries = [&](const nlohmann::json& r, const char* k) {
    std::vector<Semantic::Entry> list;
    if (r.contains(k) && r[k].is_array())
      for (const auto& e : r[k])
        if (list.size() < 20)
          list.push_back({str(e, "key"), str(e, "what"), str(e, "a"), str(e, "b"),
                          e.is_object() && e.contains("elements") && e["elements"].is_number_unsigned()
                              ? e["elements"].get<std::size_t>()
                              : 0});
    return list;
  };
  const auto count = [](const nlohmann::json& r, const char* k) -> std::size_t {
    return r.contains("counts") && r["counts"].is_object() && r["counts"].contains(k) &&
                   r["counts"][k].is_number_unsigned()
               ? r["counts"][k].get<std::size_t>()
               : 0;
  };
  for (const auto& r : doc["results"]) {
    const std::string id = str(r, "id");
    if (id.empty() || !r.contains("equal") || !r["equal"].is_boolean()) continue;
    Semantic m;
    m.how = str(r, "how");
    m.note = str(r, "note");
    m.equal = r["equal"].get<bool>();
    m.state = entries(r, "state");
    m.metadata = entries(r, "metadata");
    m.tolerated = entries(r, "tolerated");
    m.state_count = std::max(count(r, "state"), m.state.size());
    m.metadata_count = std::max(count(r, "metadata"), m.metadata.size());
    m.tolerated_count = std::max(count(r, "tolerated"), m.tolerated.size());
    if (m.how != "bytes" && !m.equal && m.state_count + m.metadata_count + m.tolerated_count == 0)
      m.state_count = 1;  // unequal with nothing named: never taken for the same state
    out[id] = std::move(m);
  }
  return out;
}

std::string torch_version(const std::string& text) {
  try {
    const nlohmann::json doc = io::parse_bounded_json(text);
    return !doc.is_discarded() && doc.is_object() && doc.contains("torch") && doc["torch"].is_string()
               ? diag::printable(doc["torch"].get<std::string>())
               : std::string();
  } catch (const Error&) {
    return {};
  }
}

namespace {

// Versions of two runs matched for comparison, name by name: by step where every version of
// that name in both runs knows its own, else by order (the k-th version of ckpt.pt against the
// k-th).
std::vector<std::pair<std::size_t, std::size_t>> matched_versions(const std::vector<Version>& a,
                                                                  const std::vector<Version>& b) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::map<std::string, std::vector<std::size_t>> by_a, by_b;
  for (std::size_t i = 0; i < a.size(); ++i) by_a[a[i].name].push_back(i);
  for (std::size_t j = 0; j < b.size(); ++j) by_b[b[j].name].push_back(j);
  for (const auto& [name, list] : by_a) {
    const std::vector<std::size_t>& other = by_b[name];
    const bool steps = std::all_of(list.begin(), list.end(), [&](std::size_t i) { return a[i].step.has_value(); }) &&
                       std::all_of(other.begin(), other.end(), [&](std::size_t j) { return b[j].step.has_value(); });
    if (steps) {
      // The last version of each step in b: a repeated step after a resume is the one kept.
      std::map<long long, std::size_t> at;
      for (const std::size_t j : other) at[*b[j].step] = j;
      for (const std::size_t i : list)
        if (const auto f = at.find(*a[i].step); f != at.end()) out.emplace_back(i, f->second);
      continue;
    }
    for (std::size_t k = 0; k < list.size() && k < other.size(); ++k) out.emplace_back(list[k], other[k]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The versions a segment wrote first after a kill that look like saves again of what it resumed
// from: the same name as one written before the kill, with its bytes, or at its step (nanoGPT
// saves ckpt.pt again at the step it resumed at). Each as (that version before the kill, this
// one); stops at the first that is neither.
struct Resave {
  std::size_t before, after;
  bool same_bytes;
};
std::vector<Resave> resaves_after(const std::vector<Version>& v, std::size_t at, const std::vector<Version>& ref) {
  std::vector<Resave> out;
  if (at == 0) return out;
  for (std::size_t j = at; j < v.size() && out.size() < 8; ++j) {
    if (written_once(ref, v[j])) continue;
    std::optional<std::size_t> prev;
    for (std::size_t e = 0; e < at; ++e)
      if (v[e].name == v[j].name) prev = e;
    if (!prev) break;
    const Version& p = v[*prev];
    // Only a copy of what it resumed from: the newest version before the kill, or one at its step
    // (netD_epoch_0.pth beside netG_epoch_0.pth). The bytes of an older one mean it started over.
    const Version& resumed = v[at - 1];
    if (*prev != at - 1 && !(p.step && resumed.step && *p.step == *resumed.step)) break;
    const bool same_bytes = p.sha256 == v[j].sha256;
    if (!same_bytes && !(p.step && v[j].step && *p.step == *v[j].step)) break;
    out.push_back({*prev, j, same_bytes});
  }
  return out;
}

}  // namespace

std::vector<Pair> pairs_to_compare(const RunRecord& ref, const RunRecord& other, const std::string& prefix,
                                   const std::vector<KillPoint>& kills) {
  std::vector<Pair> out;
  for (const auto& [name, path] : ref.files) {
    const auto o = other.files.find(name);
    if (o == other.files.end() || path.empty() || o->second.empty() || ref.outputs.at(name) == other.outputs.at(name))
      continue;
    out.push_back({prefix + "out:" + name, path, o->second});
  }
  if (!prefix.empty()) return out;
  for (const auto& [i, j] : matched_versions(ref.checkpoints, other.checkpoints)) {
    const Version &a = ref.checkpoints[i], &b = other.checkpoints[j];
    if (a.sha256 != b.sha256 && !a.copy.empty() && !b.copy.empty())
      out.push_back({"ver:" + std::to_string(i) + ":" + std::to_string(j), a.copy, b.copy});
  }
  // A save at the step it resumed from, with other bytes: the same weights (a save again of what
  // it loaded), or weights trained again (its step counter was not restored)?
  const auto& v = other.checkpoints;
  for (const KillPoint& k : kills)
    for (const Resave& r : resaves_after(v, k.completed, ref.checkpoints))
      if (!r.same_bytes && !v[r.before].copy.empty() && !v[r.after].copy.empty())
        out.push_back(
            {"same:" + std::to_string(r.before) + ":" + std::to_string(r.after), v[r.before].copy, v[r.after].copy});
  return out;
}

namespace {

std::string version_text(const std::vector<Version>& all, std::size_t i) {
  const Version& v = all[i];
  std::size_t nth = 0, of = 0;
  for (std::size_t k = 0; k < all.size(); ++k)
    if (all[k].name == v.name) {
      ++of;
      if (k <= i) ++nth;
    }
  std::string s = v.name;
  if (v.step)
    s += " (step " + std::to_string(*v.step) + (of > 1 ? ", version " + std::to_string(nth) : "") + ")";
  else if (of > 1)
    s += " (version " + std::to_string(nth) + " of " + std::to_string(of) + ")";
  return s;
}

}  // namespace

namespace {
std::string state_text(const Semantic& m);
}  // namespace

namespace {

// One segment that did not resume: after which kill, the line saying so, and whether it trained
// again from a step it had loaded (its weights were restored, its counter was not).
struct Failure {
  std::size_t kill = 0;
  std::string line;
  bool counter_only = false;
};

std::vector<Failure> failures_of(const RunRecord& ref, const RunRecord& killed, const std::vector<KillPoint>& kills,
                                 const Semantics& semantics) {
  std::vector<Failure> out;
  const auto& v = killed.checkpoints;
  // The uninterrupted run's first step (-1: unknown): a segment back there started from scratch.
  const long long first_step =
      ref.checkpoints.empty() || !ref.checkpoints.front().step ? -1 : *ref.checkpoints.front().step;
  for (std::size_t k = 0; k < kills.size(); ++k) {
    const std::size_t at = kills[k].completed;  // the segment's first version, if it wrote one
    if (at == 0 || at >= v.size()) continue;
    const Version& before = v[at - 1];
    const std::string head = "the job did not resume after kill " + std::to_string(k + 1) + ": ";
    // A program that resumes may first save again what it loaded (same bytes, or the same step
    // with its weights equal): the first version after the kill that is not such a copy tells.
    // The same step with other weights was trained again: the step counter was not restored.
    const std::vector<Resave> resaves = resaves_after(v, at, ref.checkpoints);
    // The same bytes written again are no evidence by themselves: a run that starts over writes
    // its first checkpoint first, byte for byte (a program with no resume, killed by `auto` after
    // that checkpoint). Only a load in envpin_ckpt's journal (one per segment) tells them apart.
    // A name with no step that the uninterrupted run wrote once (a config.json written at each
    // start) is no checkpoint to judge by: a resumed run writes it again too.
    const bool load_recorded = killed.journal.loaded.size() > k;
    // The run's first checkpoint, in each run: a config.json before it passed over.
    const auto first_real = [&](const std::vector<Version>& all) {
      std::size_t j = 0;
      while (j < all.size() && written_once(ref.checkpoints, all[j])) ++j;
      return j;
    };
    const std::size_t v0 = first_real(v), r0 = first_real(ref.checkpoints);
    if (!load_recorded && !resaves.empty() && resaves.front().same_bytes && resaves.front().before == v0 &&
        r0 < ref.checkpoints.size() && ref.checkpoints[r0].sha256 == v[v0].sha256) {
      out.push_back({k, head + "nothing shows it loaded a checkpoint: its first write after the kill, " +
                            version_text(v, resaves.front().after) + ", has the bytes of the run's first checkpoint, " +
                            version_text(v, v0) +
                            ", which a run that starts over writes first (envpin_ckpt.load_latest() records a load)"});
      continue;
    }
    // Only where a step names one save: in the uninterrupted run no two versions of that name
    // share a step (a last.pt saved each N iterations with its epoch as the step would).
    const auto one_save_a_step = [&](const std::string& name) {
      std::set<long long> seen;
      for (const Version& r : ref.checkpoints)
        if (r.name == name && (!r.step || !seen.insert(*r.step).second)) return false;
      return !seen.empty();
    };
    bool trained_again = false;
    for (const Resave& r : resaves) {
      const auto m = semantics.find("same:" + std::to_string(r.before) + ":" + std::to_string(r.after));
      if (r.same_bytes || m == semantics.end() || !m->second.weights_differ() || !one_save_a_step(v[r.after].name))
        continue;
      out.push_back({k,
                     head + "it wrote " + version_text(v, r.after) + " with other weights than " +
                         version_text(v, r.before) + ", written at the same step before the kill: it trained that " +
                         "step again, its step or epoch counter not restored (" + state_text(m->second) + ")",
                     true});
      trained_again = true;
      break;
    }
    if (trained_again) continue;
    // The segment's first checkpoint, a config.json written again at its start passed over.
    std::size_t first = resaves.empty() ? at : resaves.back().after + 1;
    while (first < v.size() && written_once(ref.checkpoints, v[first])) ++first;
    if (first >= v.size()) continue;
    const Version& after = v[first];
    if (before.step && after.step && *after.step < *before.step) {
      const bool from_start = first_step >= 0 && *after.step <= first_step;
      out.push_back({k, head + (from_start ? "it started again from step 0" : "it went back to an earlier step") +
                            " (its first checkpoint after the kill is " + version_text(v, first) +
                            "; the kill came after " + version_text(v, at - 1) + ")"});
      continue;
    }
    // Without steps: a deterministic program that starts over writes an earlier checkpoint again.
    for (std::size_t e = 0; e + 1 < at; ++e)
      if (v[e].sha256 == after.sha256 && v[e].name == after.name) {
        out.push_back({k, head + "it started again: its first checkpoint after the kill, " + version_text(v, first) +
                              ", has the bytes of " + version_text(v, e) + ", written before the kill"});
        break;
      }
  }
  // envpin_ckpt's journal: every segment after a kill loads a checkpoint.
  if (out.empty() && !killed.journal.saved_step.empty() && killed.journal.loaded.size() < kills.size())
    out.push_back({killed.journal.loaded.size(),
                   "the job did not resume after " + std::to_string(kills.size() - killed.journal.loaded.size()) +
                       " of " + std::to_string(kills.size()) +
                       " kills: envpin_ckpt.load_latest() loaded nothing then, so it started again from step 0"});
  return out;
}

}  // namespace

bool written_once(const std::vector<Version>& ref, const Version& v) {
  return !v.step && std::count_if(ref.begin(), ref.end(), [&](const Version& r) { return r.name == v.name; }) == 1;
}

std::vector<std::string> resume_failures(const RunRecord& ref, const RunRecord& killed,
                                         const std::vector<KillPoint>& kills, const Semantics& semantics) {
  std::vector<std::string> out;
  for (const Failure& f : failures_of(ref, killed, kills, semantics)) out.push_back(f.line);
  return out;
}

namespace {

const char* const kContract =
    "an exact resume needs all of the program's state in the checkpoint: model, optimizer, LR scheduler, AMP "
    "scaler, step/epoch, the data position (sampler or loader state) and the RNG states of Python, NumPy, torch and "
    "CUDA (envpin_ckpt.rng_state() collects them), restored before the next step, without re-seeding after the "
    "load; see \"Checkpoint contract\" in envpin's docs/jobs.md";

std::string list_names(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < 5; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 5) s += " and " + std::to_string(names.size() - 5) + " more";
  return s;
}

// What differs in state, one line: "model.layers.3.weight: 1,024 of 4,096 elements differ, ...".
std::string state_text(const Semantic& m) {
  std::string s;
  for (std::size_t i = 0; i < m.state.size() && i < 3; ++i)
    s += (i ? "; " : "") + m.state[i].key + ": " + m.state[i].what;
  if (m.state_count > 3) s += "; and " + std::to_string(m.state_count - 3) + " more";
  return s;
}

std::string metadata_text(const Semantic& m) {
  std::string s;
  for (std::size_t i = 0; i < m.metadata.size() && i < 3; ++i)
    s += (i ? "; " : "") + m.metadata[i].key + ": " + m.metadata[i].a + " vs " + m.metadata[i].b;
  if (m.metadata_count > 3) s += "; and " + std::to_string(m.metadata_count - 3) + " more";
  return s;
}

// How one compared item of two runs relates.
enum class Match { same_bytes, same_state, tolerated, differs };

struct ItemView {
  std::string name;
  Match match = Match::differs;
  const Semantic* semantic = nullptr;
};

std::vector<ItemView> items_of(const Outputs& a, const Outputs& b, const Semantics& sem, const std::string& prefix) {
  std::set<std::string> all;
  for (const auto& [k, _] : a) all.insert(k);
  for (const auto& [k, _] : b) all.insert(k);
  std::vector<ItemView> out;
  for (const std::string& k : all) {
    ItemView v{k};
    const auto x = a.find(k), y = b.find(k);
    if (x != a.end() && y != b.end()) {
      if (x->second == y->second) {
        v.match = Match::same_bytes;
      } else if (const auto m = sem.find(prefix + "out:" + k); m != sem.end()) {
        v.semantic = &m->second;
        v.match = !m->second.same_state()         ? Match::differs
                  : m->second.tolerated_count > 0 ? Match::tolerated
                                                  : Match::same_state;
      }
    }
    out.push_back(v);
  }
  return out;
}

bool all_same(const std::vector<ItemView>& items) {
  return std::all_of(items.begin(), items.end(), [](const ItemView& v) { return v.match != Match::differs; });
}

}  // namespace

std::vector<std::string> split_attempts(const std::string& log, const std::string& job) {
  constexpr std::size_t kKept = 64 * 1024;
  const std::string mark = "envpin run: job " + job + ": attempt ";
  std::vector<std::string> out;
  std::size_t at = log.starts_with(mark) ? 0 : log.find("\n" + mark);
  if (at != std::string::npos && at > 0) ++at;
  while (at != std::string::npos) {
    std::size_t next = log.find("\n" + mark, at);
    const std::size_t end = next == std::string::npos ? log.size() : next + 1;
    out.push_back(log.substr(at, std::min(end - at, kKept)));
    at = next == std::string::npos ? next : next + 1;
  }
  return out;
}

bool results_match(const RunRecord& ref, const RunRecord& other, const Semantics& semantics,
                   const std::string& prefix) {
  return all_same(items_of(ref.outputs, other.outputs, semantics, prefix));
}

namespace {

// Kills after which the run wrote no checkpoint: nothing was resumed from them.
std::vector<std::string> untested_kills(const RunRecord& killed, const std::vector<KillPoint>& kills) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < kills.size(); ++k)
    if (!killed.checkpoints.empty() && kills[k].completed >= killed.checkpoints.size())
      out.push_back("kill " + std::to_string(k + 1) +
                    (kills[k].newest.empty() ? "" : " (after " + kills[k].newest + ")") +
                    " came after the last checkpoint: the run after it wrote none, so it tests no resume");
  return out;
}

// What attempt `n` (0: the first) shows: run.sh's note opening it, and the first line the program
// printed itself that says it loaded, resumed or restored something. (A line naming the checkpoint
// alone tells nothing: "checkpoint at step 5" is a save.)
struct AttemptView {
  bool known = false;
  std::string note;
  std::string said;
};

AttemptView attempt_view(const RunRecord& r, std::size_t n) {
  AttemptView a;
  if (n >= r.attempts.size()) return a;
  a.known = true;
  std::string_view text = r.attempts[n];
  bool first = true;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (first) {
      a.note = line;
      first = false;
      continue;
    }
    if (line.starts_with("envpin run: ")) continue;
    std::string lower(line);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("load") != std::string::npos || lower.find("resum") != std::string::npos ||
        lower.find("restor") != std::string::npos) {
      a.said = line;
      break;
    }
  }
  return a;
}

// The likely cause of failure `f`, from what the attempt after the kill printed and what
// envpin_ckpt's journal recorded; empty when they do not tell.
std::string start_over_cause(const RunRecord& killed, const Failure& f) {
  const AttemptView a = attempt_view(killed, f.kill + 1);
  const std::string attempt = "attempt " + std::to_string(f.kill + 2);
  const bool journal_load = killed.journal.loaded.size() > f.kill;
  std::string loaded = journal_load     ? "envpin_ckpt.load_latest() loaded it"
                       : a.said.empty() ? ""
                                        : attempt + " printed '" + diag::excerpt(a.said, 160) + "'";
  if (loaded.empty() && f.counter_only)
    loaded = "its weights were restored (the step it trained again started from them)";
  const std::string counter =
      "its step or epoch counter was not restored from the checkpoint, nor with it (most likely) the data position, "
      "the optimizer and LR scheduler state and the RNG states: restore them all before the next step (see "
      "\"Checkpoint contract\" in envpin's docs/jobs.md)";
  if (killed.resume_words.empty()) {
    if (!loaded.empty()) return "it found a checkpoint by itself (" + loaded + "), yet it started over: " + counter;
    return "the manifest has no jobs.resume, so each restart ran the original command again and nothing shows the "
           "program found its checkpoint by itself: give its resume option in jobs.resume (e.g. resume: "
           "'--resume {checkpoint}') or read $ENVPIN_CHECKPOINT";
  }
  const std::string words = "the resume words (" + diag::printable(killed.resume_words) + ")";
  const auto from = a.note.find(", resuming from ");
  if (!a.known || from == std::string::npos)
    return loaded.empty() ? "" : words + " were passed and " + loaded + ": " + counter;
  const std::string passed = words + " were passed with the checkpoint (" + attempt + ": '" +
                             diag::excerpt(std::string_view(a.note).substr(from + 2), 160) + "')";
  if (!loaded.empty()) return passed + " and " + loaded + ", yet it started over: " + counter;
  return passed + ", and nothing " + attempt +
         " printed shows it loaded it: the program ignores that option or loads another file";
}

Verdict decide(const RunRecord& ref, const RunRecord& killed, const std::vector<KillPoint>& kills,
               const std::optional<RunRecord>& ref2, const Semantics& semantics, const Tolerance& tolerance,
               const std::string& bytes_only_note) {
  Verdict v;
  std::string where;
  for (std::size_t i = 0; i < kills.size(); ++i)
    where += (i ? ", " : "") + seconds_text(kills[i].seconds) +
             (kills[i].newest.empty() ? "" : " (after " + kills[i].newest + ")");
  const std::string killed_text = plural(kills.size(), "kill", "kills") + (where.empty() ? "" : " at " + where);
  const std::vector<ItemView> items = items_of(ref.outputs, killed.outputs, semantics, "");

  // A segment that started over proves nothing, whatever it ended with.
  if (const auto failures = failures_of(ref, killed, kills, semantics); !failures.empty()) {
    v.exit_code = 1;
    v.lines.push_back("differs: " + killed.job + " (" + killed_text + ") did not resume: " +
                      (all_same(items) ? "its results equal those of the uninterrupted " + ref.job +
                                             " only because it ran again from the start"
                                       : "its results differ from those of the uninterrupted " + ref.job));
    for (const Failure& f : failures) v.lines.push_back("  " + f.line);
    if (const std::string cause = start_over_cause(killed, failures.front()); !cause.empty())
      v.lines.push_back("  likely cause: " + cause);
    return v;
  }

  if (all_same(items)) {
    const bool bitwise =
        std::all_of(items.begin(), items.end(), [](const ItemView& i) { return i.match == Match::same_bytes; });
    const bool tolerated =
        std::any_of(items.begin(), items.end(), [](const ItemView& i) { return i.match == Match::tolerated; });
    v.lines.push_back(std::string(bitwise     ? "identical: "
                                  : tolerated ? "identical within --tolerance (not bit for bit): "
                                              : "identical state: ") +
                      plural(ref.outputs.size(), "compared item", "compared items") + " of " + killed.job + " (" +
                      killed_text + ", resumed each time) equal those of the uninterrupted " + ref.job +
                      (bitwise     ? ""
                       : tolerated ? ""
                                   : " as the program loads them"));
    for (const ItemView& i : items) {
      const std::string& digest = ref.outputs.at(i.name);
      if (i.match == Match::same_bytes) {
        v.lines.push_back("  " + i.name + "  " +
                          (i.name.starts_with("line:") ? diag::excerpt(digest, kLineShown) : "sha256:" + digest));
        continue;
      }
      const Semantic& m = *i.semantic;
      if (i.match == Match::tolerated) {
        std::string t;
        for (std::size_t k = 0; k < m.tolerated.size() && k < 3; ++k)
          t += (k ? "; " : "") + m.tolerated[k].key + ": " + m.tolerated[k].what;
        v.lines.push_back("  " + i.name + "  within rtol " + number_text(tolerance.rtol) + ", atol " +
                          number_text(tolerance.atol) + ": " + t);
      }
      if (m.metadata_count > 0)
        v.lines.push_back("  " + i.name + "  state identical (" + m.how + "), metadata differs: " + metadata_text(m));
      else if (i.match == Match::same_state)
        v.lines.push_back("  " + i.name + "  state identical (" + m.how + "); the files differ in bytes only");
    }
    for (const std::string& n : untested_kills(killed, kills)) v.lines.push_back("  " + n);
    return v;
  }

  v.exit_code = 1;
  std::vector<std::string> differing;
  for (const ItemView& i : items)
    if (i.match == Match::differs) differing.push_back(i.name);
  if (ref2) {
    const std::vector<ItemView> again = items_of(ref.outputs, ref2->outputs, semantics, "ref2:");
    if (!all_same(again)) {
      std::vector<std::string> names;
      for (const ItemView& i : again)
        if (i.match == Match::differs) names.push_back(i.name);
      v.lines.push_back("not deterministic even without interruption: two uninterrupted runs (" + ref.job + ", " +
                        ref2->job + ") differ in " + list_names(names));
      for (const ItemView& i : again)
        if (i.match == Match::differs && i.semantic) v.lines.push_back("  " + i.name + ": " + state_text(*i.semantic));
      v.lines.push_back(
          "  resume cannot be checked until the program repeats itself: seed every RNG (Python, NumPy, "
          "torch), use deterministic algorithms (torch.use_deterministic_algorithms(True)), a fixed data "
          "order and no wall-clock values in what it writes" +
          std::string(tolerance.any() ? "" : "; or compare within a tolerance: --tolerance RTOL[,ATOL]"));
      return v;
    }
  }
  v.lines.push_back("differs: " + killed.job + " (" + killed_text + ", resumed each time) and the uninterrupted " +
                    ref.job + " differ in " + list_names(differing));
  for (const ItemView& i : items) {
    if (i.match != Match::differs) continue;
    if (i.name.starts_with("line:")) {
      const auto a = ref.outputs.find(i.name), b = killed.outputs.find(i.name);
      v.lines.push_back("  " + ref.job + ": " +
                        diag::excerpt(a == ref.outputs.end() ? "(no line)" : a->second, kLineShown));
      v.lines.push_back("  " + killed.job + ": " +
                        diag::excerpt(b == killed.outputs.end() ? "(no line)" : b->second, kLineShown));
    } else if (i.semantic) {
      v.lines.push_back("  " + i.name + ": state differs (" + i.semantic->how + "): " + state_text(*i.semantic));
    }
  }
  if (semantics.empty() && !bytes_only_note.empty()) v.lines.push_back("  note: " + bytes_only_note);

  // Version after version: the first the interrupted run wrote whose state the uninterrupted
  // run's matching version does not have (by step, else by order), and the kill it came after.
  const auto kill_before = [&](std::size_t index) {
    std::size_t n = 0;
    for (const KillPoint& k : kills)
      if (k.completed <= index) ++n;
    return n;
  };
  const auto version_differs = [&](std::size_t i, std::size_t j) {
    const Version &a = ref.checkpoints[i], &b = killed.checkpoints[j];
    if (a.sha256 == b.sha256) return std::optional<std::string>();
    const auto m = semantics.find("ver:" + std::to_string(i) + ":" + std::to_string(j));
    if (m == semantics.end()) return std::optional<std::string>("their bytes differ");
    if (m->second.same_state()) return std::optional<std::string>();
    return std::optional<std::string>(m->second.how == "bytes" ? "their bytes differ" : state_text(m->second));
  };
  for (const auto& [i, j] : matched_versions(ref.checkpoints, killed.checkpoints)) {
    const auto why = version_differs(i, j);
    if (!why) continue;
    const std::size_t kill = kill_before(j);
    const std::string which = version_text(killed.checkpoints, j);
    if (kill == 0) {
      v.lines.push_back("  the runs diverged before any kill, at checkpoint " + which + " (" + *why +
                        "): the program is not deterministic (a second uninterrupted run agreed with the first only "
                        "by chance, or the data changed between runs)");
      return v;
    }
    const KillPoint& k = kills[kill - 1];
    v.lines.push_back("  the runs diverged at checkpoint " + which + ", written after kill " + std::to_string(kill) +
                      " (" + seconds_text(k.seconds) +
                      (k.completed ? ", resumed from " + version_text(killed.checkpoints, k.completed - 1) : "") +
                      "): " + *why + "; every checkpoint before it is identical");
    v.lines.push_back("  likely cause: the resumed program did not restore all of its state; " +
                      std::string(kContract));
    return v;
  }
  if (ref.checkpoints.size() != killed.checkpoints.size() && !ref.checkpoints.empty()) {
    v.lines.push_back("  the interrupted run wrote " + plural(killed.checkpoints.size(), "checkpoint", "checkpoints") +
                      ", the uninterrupted run " + std::to_string(ref.checkpoints.size()) +
                      ": it resumed from another step, or skipped or repeated steps");
    v.lines.push_back("  likely cause: the step counter or data position is not restored exactly; " +
                      std::string(kContract));
    return v;
  }
  v.lines.push_back(
      "  every checkpoint both runs wrote has the same state, yet the compared results differ: they depend on "
      "state that is not in the checkpoint (kept in memory only, or re-initialised on start)");
  v.lines.push_back("  likely cause: " + std::string(kContract));
  return v;
}

}  // namespace

Verdict judge(const RunRecord& ref, const RunRecord& killed, const std::vector<KillPoint>& kills,
              const std::optional<RunRecord>& ref2, const Semantics& semantics, const Tolerance& tolerance,
              const std::string& bytes_only_note) {
  Verdict v = decide(ref, killed, kills, ref2, semantics, tolerance, bytes_only_note);
  // Checkpoint names, compared lines and what the comparison read are the job's: each line is
  // printable (escapes, CR and bidirectional controls shown as \x1b, \r, \u202e) and cut.
  // The cut marker ("... (N bytes)", at most 32 bytes) fits within the line's 1,000.
  for (std::string& line : v.lines) line = diag::excerpt(line, kVerdictLineMax - 32);
  return v;
}

}  // namespace envpin::resume_check

// SPDX-License-Identifier: Apache-2.0
#include "jobs/resume_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <system_error>

#include "diag/error.hpp"
#include "pin/sha256.hpp"

namespace envpin::jobs {
namespace {

namespace fs = std::filesystem;
using diag::Error;

bool printable_line(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string seconds_text(double s) {
  const long tenths = std::lround(s * 10);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " s";
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
                        const fs::path& log) {
  Outputs out;
  if (items.empty()) {
    for (const CheckpointFile& f : list_checkpoints(checkpoint_dir)) {
      std::string digest;
      if (!f.has_sidecar)
        digest = pin::sha256_file(checkpoint_dir / f.name);
      else if (!sidecar_matches(checkpoint_dir, f, &digest))
        continue;  // cut off: not a result
      out["checkpoint " + f.name] = digest;
    }
    // Nothing compared would read as "identical".
    if (out.empty())
      throw Error(
          "there is nothing to compare: the job left no complete checkpoint in " + checkpoint_dir.generic_string(),
          std::nullopt,
          "name what the job writes with --compare (a project file, or line:PREFIX for a line it prints)");
    return out;
  }
  for (const CompareItem& item : items) {
    if (item.is_line) {
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
    const fs::path target = project / item.path_or_prefix;
    std::error_code ec;
    if (fs::is_regular_file(target, ec)) {
      out[item.spec] = pin::sha256_file(target);
    } else if (fs::is_directory(target, ec)) {
      for (auto it = fs::recursive_directory_iterator(target, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec))
        if (it->is_regular_file() && !it->is_symlink())
          out[item.spec + "/" + it->path().lexically_relative(target).generic_string()] = pin::sha256_file(it->path());
    } else {
      throw Error("--compare " + item.spec + " does not exist after the run (" + target.generic_string() + ")",
                  std::nullopt, "name a file or directory the command writes, relative to the project");
    }
  }
  return out;
}

std::vector<std::string> CheckpointWatch::poll() {
  std::vector<std::string> done;
  for (const CheckpointFile& f : list_checkpoints(dir_)) {
    const auto key = std::make_pair(f.size, f.mtime);
    if (const auto r = recorded_.find(f.name); r != recorded_.end() && r->second == key) continue;
    std::string digest;
    bool complete = false;
    if (f.has_sidecar) {
      complete = sidecar_matches(dir_, f, &digest);
    } else if (const auto s = seen_.find(f.name); s != seen_.end() && s->second == key) {
      try {
        digest = pin::sha256_file(dir_ / f.name);
        complete = true;
      } catch (const Error&) {
      }
    }
    seen_[f.name] = key;
    if (!complete) continue;
    recorded_[f.name] = key;
    completed_.emplace_back(f.name, digest);
    done.push_back(f.name);
  }
  return done;
}

Verdict judge(const RunRecord& ref, const RunRecord& killed, const std::vector<KillPoint>& kills,
              const std::optional<RunRecord>& ref2) {
  Verdict v;
  std::string where;
  for (std::size_t i = 0; i < kills.size(); ++i)
    where += (i ? ", " : "") + seconds_text(kills[i].seconds) +
             (kills[i].newest.empty() ? "" : " (after " + kills[i].newest + ")");
  const std::string killed_text = plural(kills.size(), "kill", "kills") + (where.empty() ? "" : " at " + where);
  if (ref.outputs == killed.outputs) {
    v.lines.push_back("identical: " + plural(ref.outputs.size(), "compared item", "compared items") + " of " +
                      killed.job + " (" + killed_text + ", resumed each time) equal those of the uninterrupted " +
                      ref.job);
    for (const auto& [name, digest] : ref.outputs)
      v.lines.push_back("  " + name + "  " + (name.starts_with("line:") ? digest : "sha256:" + digest));
    return v;
  }
  v.exit_code = 1;
  const auto differing = [](const Outputs& a, const Outputs& b) {
    std::vector<std::string> names;
    std::set<std::string> all;
    for (const auto& [k, _] : a) all.insert(k);
    for (const auto& [k, _] : b) all.insert(k);
    for (const std::string& k : all) {
      const auto x = a.find(k), y = b.find(k);
      if (x == a.end() || y == b.end() || x->second != y->second) names.push_back(k);
    }
    return names;
  };
  const auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 5; ++i) s += (i ? ", " : "") + names[i];
    if (names.size() > 5) s += " and " + std::to_string(names.size() - 5) + " more";
    return s;
  };
  if (ref2 && ref2->outputs != ref.outputs) {
    v.lines.push_back("not deterministic even without interruption: two uninterrupted runs (" + ref.job + ", " +
                      ref2->job + ") differ in " + list(differing(ref.outputs, ref2->outputs)));
    v.lines.push_back(
        "  resume cannot be checked until the program repeats itself: seed every RNG (Python, NumPy, "
        "torch), use deterministic algorithms (torch.use_deterministic_algorithms(True)), a fixed data "
        "order and no wall-clock values in what it writes");
    return v;
  }
  v.lines.push_back("differs: " + killed.job + " (" + killed_text + ", resumed each time) and the uninterrupted " +
                    ref.job + " differ in " + list(differing(ref.outputs, killed.outputs)));
  // Checkpoint after checkpoint: the first version the interrupted run wrote that the
  // uninterrupted run never did, and the kill it came after.
  const auto versions = [](const RunRecord& r) {
    return std::set<std::pair<std::string, std::string>>(r.checkpoints.begin(), r.checkpoints.end());
  };
  const auto ours = versions(ref), theirs = versions(killed);
  const std::string contract =
      "an exact resume needs all of the program's state in the checkpoint: model, optimizer, LR scheduler, AMP "
      "scaler, step/epoch, the data position (sampler or loader state) and the RNG states of Python, NumPy, torch and "
      "CUDA (envpin_ckpt.rng_state() collects them), restored before the next step, without re-seeding after the "
      "load; see \"Checkpoint contract\" in envpin's README";
  for (std::size_t i = 0; i < killed.checkpoints.size(); ++i) {
    if (ours.count(killed.checkpoints[i])) continue;
    const std::string& name = killed.checkpoints[i].first;
    std::size_t kill = 0;  // kills before it completed
    for (const KillPoint& k : kills)
      if (k.completed <= i) ++kill;
    if (kill == 0) {
      v.lines.push_back("  the runs diverged before any kill, at checkpoint " + name +
                        ": the program is not deterministic (a second uninterrupted run agreed with the first only by "
                        "chance, or the data changed between runs)");
      return v;
    }
    const KillPoint& k = kills[kill - 1];
    v.lines.push_back("  the runs diverged at checkpoint " + name + ", written after kill " + std::to_string(kill) +
                      " (" + seconds_text(k.seconds) + (k.newest.empty() ? "" : ", resumed from " + k.newest) +
                      "); every checkpoint before it is identical");
    v.lines.push_back("  likely cause: the resumed program did not restore all of its state; " + contract);
    return v;
  }
  for (const auto& c : ref.checkpoints)
    if (!theirs.count(c)) {
      v.lines.push_back("  the interrupted run never wrote checkpoint " + c.first +
                        " as the uninterrupted run did: it resumed from another step, or skipped or repeated steps");
      v.lines.push_back("  likely cause: the step counter or data position is not restored exactly; " + contract);
      return v;
    }
  v.lines.push_back(
      "  every checkpoint both runs wrote is identical, yet the compared results differ: they depend on "
      "state that is not in the checkpoint (kept in memory only, or re-initialised on start)");
  v.lines.push_back("  likely cause: " + contract);
  return v;
}

}  // namespace envpin::jobs

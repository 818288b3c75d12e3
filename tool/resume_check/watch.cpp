// SPDX-License-Identifier: Apache-2.0
#include "resume_check/watch.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "pin/sha256.hpp"

namespace envpin::resume_check {

// The jobs domain this reads: what counts as a checkpoint, and a complete one.
using namespace jobs;  // NOLINT(google-build-using-namespace)
namespace fs = std::filesystem;
using diag::Error;

namespace {

// "saved 20 <sha256> ckpt-000020.pt": a word, a step or '-', 64 hex digits, a name.
std::optional<long long> step_word(const std::string& w) {
  if (w == "-" || w.empty() || w.size() > 15 || w.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(w);
}

bool hex64(const std::string& h) {
  return h.size() == 64 &&
         std::all_of(h.begin(), h.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The number in a checkpoint's name, its last run of digits (ckpt-000020.pt: 20).
std::optional<long long> name_number(const std::string& name) {
  const std::string base = name.substr(name.rfind('/') + 1);
  const auto end = base.find_last_of("0123456789");
  if (end == std::string::npos) return std::nullopt;
  auto begin = base.find_last_not_of("0123456789", end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  if (end + 1 - begin > 15) return std::nullopt;
  return std::stoll(base.substr(begin, end + 1 - begin));
}

}  // namespace

Journal parse_journal(const std::string& text) {
  Journal j;
  std::istringstream in(text);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line) && ++lines <= 100000;) {
    std::istringstream words(line);
    std::string what, step, sha;
    if (!(words >> what >> step >> sha) || !hex64(sha) || (step != "-" && !step_word(step))) continue;
    if (what == "saved") {
      if (const auto s = step_word(step)) j.saved_step[sha] = *s;
    } else if (what == "loaded") {
      j.loaded.emplace_back(step_word(step), sha);
    }
  }
  return j;
}

Journal read_journal(const fs::path& dir) {
  const fs::path file = dir / ".envpin-ckpt.log";
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(file, ec))) return {};
  std::ifstream in(file, std::ios::binary);
  std::string text(1 << 20, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return parse_journal(text);
}

std::vector<std::string> CheckpointWatch::poll() {
  std::vector<std::string> done;
  // In the order they were written (as run.sh picks the newest for a resume), not by name.
  std::vector<CheckpointFile> files = list_checkpoints(dir_, patterns_);
  std::stable_sort(files.begin(), files.end(),
                   [](const CheckpointFile& a, const CheckpointFile& b) { return a.mtime < b.mtime; });
  for (const CheckpointFile& f : files) {
    const auto key = std::make_pair(f.size, f.mtime);
    if (const auto r = recorded_.find(f.name); r != recorded_.end() && r->second == key) continue;
    const bool settled = f.has_sidecar || (seen_.count(f.name) && seen_[f.name] == key);
    seen_[f.name] = key;
    if (!settled) continue;
    // The bytes are copied first and hashed from the copy: a file rewritten meanwhile is
    // caught by the sidecar (or by the next poll), never recorded with another version's digest.
    Version v{f.name, "", std::nullopt, {}};
    std::error_code ec;
    if (!snapshots_.empty() && f.size <= budget_) {
      v.copy = snapshots_ / (std::to_string(completed_.size()) + "-" + fs::path(f.name).filename().string());
      fs::create_directories(snapshots_, ec);
      fs::remove(v.copy, ec);
      // Never through a link the job put in the checkpoint's place since it was listed.
      if (!io::copy_regular(dir_ / f.name, v.copy, budget_)) v.copy.clear();
    }
    if (v.copy.empty() && !fs::is_regular_file(fs::symlink_status(dir_ / f.name, ec))) continue;
    try {
      v.sha256 = pin::sha256_file(v.copy.empty() ? dir_ / f.name : v.copy);
    } catch (const Error&) {
      continue;  // gone meanwhile (a keep-N prune)
    }
    if (f.has_sidecar && v.sha256 != f.sidecar_sha256) {
      if (!v.copy.empty()) fs::remove(v.copy, ec);
      continue;  // not complete yet
    }
    if (!v.copy.empty()) budget_ -= std::min(budget_, f.size);
    recorded_[f.name] = key;
    // A version with the bytes of the one before it under that name (a resumed program saving
    // again what it loaded) is recorded, for the verdict, but is no progress: --kill-at auto
    // waits for new bytes, not a new mtime, before it kills again.
    const auto last = last_sha256_.find(f.name);
    const bool same_bytes = last != last_sha256_.end() && last->second == v.sha256;
    last_sha256_[f.name] = v.sha256;
    completed_.push_back(std::move(v));
    if (!same_bytes) done.push_back(f.name);
  }
  return done;
}

void CheckpointWatch::resolve_steps(const Journal& journal) {
  // Numbers in names count only when they change from version to version: "resnet-v2.pt"
  // rewritten in place carries no step.
  std::set<long long> numbers;
  bool all = !completed_.empty();
  for (const Version& v : completed_) {
    const auto n = name_number(v.name);
    if (n)
      numbers.insert(*n);
    else
      all = false;
  }
  const bool names_count = all && numbers.size() > 1;
  for (Version& v : completed_) {
    if (const auto s = journal.saved_step.find(v.sha256); s != journal.saved_step.end())
      v.step = s->second;
    else if (names_count)
      v.step = name_number(v.name);
  }
}

}  // namespace envpin::resume_check

// SPDX-License-Identifier: Apache-2.0
// `envpin resume-check`: the parts that do not touch an engine. Where to kill a run
// (--kill-at), what a run leaves to compare (--compare), the checkpoints a run wrote as they
// complete, and the verdict from an uninterrupted and an interrupted run (and a second
// uninterrupted one when they differ). The runs themselves go through .envpin/run.sh
// (cli/jobs.cpp), the real restart and resume path.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobs/checkpoints.hpp"

namespace envpin::jobs {

// --kill-at: "auto" (as soon as a segment has written a new complete checkpoint), SECONDS
// after each (re)start, or the first log line of the segment containing a text.
struct KillAt {
  enum class Kind { automatic, seconds, pattern } kind = Kind::automatic;
  double seconds = 0;
  std::string pattern;
};
// Throws diag::Error for an empty value or a number that is not positive.
KillAt parse_kill_at(const std::string& text);

// What one --compare names: a file or directory of the project after the run ("outputs"),
// or "line:PREFIX", the last line of the job's log that starts with PREFIX.
struct CompareItem {
  std::string spec;
  bool is_line = false;
  std::string path_or_prefix;
};
CompareItem parse_compare(const std::string& text);

// name -> sha256 (a line item: the line itself) of everything compared after one run.
using Outputs = std::map<std::string, std::string>;

// Collects what `items` name after a run of job `log`: files hashed (a directory file by
// file, "DIR/REL"), lines found. With no items, the checkpoint directory's complete files.
// Throws diag::Error naming the item when it does not exist, or when there is nothing at all.
Outputs collect_outputs(const std::vector<CompareItem>& items, const std::filesystem::path& project,
                        const std::filesystem::path& checkpoint_dir, const std::filesystem::path& log);

// Watches a checkpoint directory while a job runs: each version of a checkpoint is recorded
// once complete (its sidecar matches; without one, unchanged between two polls), with its
// digest, in the order they completed. A file rewritten under the same name (one "checkpoint"
// overwritten every N steps) is a new version.
class CheckpointWatch {
 public:
  explicit CheckpointWatch(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // Looks once; returns the names that completed since the last poll.
  std::vector<std::string> poll();
  // name, sha256 of every version, in completion order.
  const std::vector<std::pair<std::string, std::string>>& completed() const { return completed_; }

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::pair<std::uintmax_t, std::filesystem::file_time_type>> seen_;  // pending or recorded
  std::map<std::string, std::pair<std::uintmax_t, std::filesystem::file_time_type>> recorded_;
  std::vector<std::pair<std::string, std::string>> completed_;
};

struct RunRecord {
  std::string job;
  Outputs outputs;
  std::vector<std::pair<std::string, std::string>> checkpoints;  // in completion order
  double seconds = 0;
};

struct KillPoint {
  double seconds = 0;         // since the run started
  std::string newest;         // the newest complete checkpoint at the kill
  std::size_t completed = 0;  // how many checkpoint versions had completed then
};

struct Verdict {
  int exit_code = 0;  // 0 identical, 1 differs
  std::vector<std::string> lines;
};

// The verdict on `ref` (uninterrupted) and `killed` (interrupted at `kills`); `ref2`, a second
// uninterrupted run, tells a program that is not deterministic from one that resumes wrongly.
Verdict judge(const RunRecord& ref, const RunRecord& killed, const std::vector<KillPoint>& kills,
              const std::optional<RunRecord>& ref2);

}  // namespace envpin::jobs

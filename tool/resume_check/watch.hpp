// SPDX-License-Identifier: Apache-2.0
// What a run's checkpoint directory held, version by version, for resume-check: each completed
// version of each checkpoint (watched while the job runs, its bytes snapshotted to compare later),
// and the steps envpin_ckpt.py's journal gives them. verdict.hpp judges two runs' versions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jobs/checkpoints.hpp"

namespace envpin::resume_check {

using jobs::Patterns;

// One completed version of a checkpoint: a file written once, or each rewrite of a file
// overwritten in place ("ckpt.pt" every N steps).
struct Version {
  std::string name;
  std::string sha256;
  std::optional<long long> step;  // envpin_ckpt's journal, else the number in the file's name
  std::filesystem::path copy;     // a snapshot of its bytes, to compare later; empty when not kept
};

// What envpin_ckpt.py's journal (<checkpoint dir>/.envpin-ckpt.log) says: the step of each
// saved checkpoint (by sha256), and each load, in order. The file is data the job wrote (and
// anyone may edit): read with a grammar, at most 1 MiB; lines that break it are skipped.
struct Journal {
  std::map<std::string, long long> saved_step;                           // sha256 -> step
  std::vector<std::pair<std::optional<long long>, std::string>> loaded;  // step, sha256
};
Journal read_journal(const std::filesystem::path& dir);
Journal parse_journal(const std::string& text);

// Watches a checkpoint directory while a job runs: each version of a checkpoint
// (is_checkpoint_name with the manifest's patterns) is recorded once complete (its sidecar
// matches; without one, unchanged between two polls), with its digest, in the order they
// completed; a file rewritten under the same name is a new version. With a snapshot directory,
// each version's bytes are copied there (and hashed from the copy) while `budget` bytes last.
class CheckpointWatch {
 public:
  explicit CheckpointWatch(std::filesystem::path dir, Patterns patterns = {}, std::filesystem::path snapshots = {},
                           std::uintmax_t budget = 0)
      : dir_(std::move(dir)), patterns_(std::move(patterns)), snapshots_(std::move(snapshots)), budget_(budget) {}
  // Looks once; returns the names that completed since the last poll with bytes other than their
  // previous version's (every version, new bytes or not, is in completed()).
  std::vector<std::string> poll();
  const std::vector<Version>& completed() const { return completed_; }
  // After the run: each version's step, from the journal, else from a number in its name when
  // the names carry one that changes (ckpt-000020.pt, netG_epoch_3.pth).
  void resolve_steps(const Journal& journal);

 private:
  std::filesystem::path dir_;
  Patterns patterns_;
  std::filesystem::path snapshots_;
  std::uintmax_t budget_ = 0;
  std::map<std::string, std::pair<std::uintmax_t, std::filesystem::file_time_type>> seen_;  // pending or recorded
  std::map<std::string, std::pair<std::uintmax_t, std::filesystem::file_time_type>> recorded_;
  std::vector<Version> completed_;
  std::map<std::string, std::string> last_sha256_;  // each name's newest recorded version
};

}  // namespace envpin::resume_check

// SPDX-License-Identifier: Apache-2.0
// `envpin resume-check`: the parts that do not touch an engine. Where to kill a run
// (--kill-at), what a run leaves to compare (--compare), the checkpoints a run wrote as they
// complete, and the verdict from an uninterrupted and an interrupted run (and a second
// uninterrupted one when they differ). The runs themselves go through .envpin/run.sh
// (cli/jobs.cpp), the real restart and resume path.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobs/checkpoints.hpp"
#include "resume_check/watch.hpp"

namespace envpin::resume_check {

using jobs::Patterns;

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
// file, "DIR/REL"), lines found. With no items, the checkpoint directory's complete
// checkpoints. `files` receives each file item's path. Throws diag::Error naming the item when
// it does not exist, or when there is nothing at all.
Outputs collect_outputs(const std::vector<CompareItem>& items, const std::filesystem::path& project,
                        const std::filesystem::path& checkpoint_dir, const std::filesystem::path& log,
                        const Patterns& patterns = {}, std::map<std::string, std::filesystem::path>* files = nullptr);

struct RunRecord {
  std::string job;
  Outputs outputs;
  std::map<std::string, std::filesystem::path> files;  // each compared file item's path after the run
  std::vector<Version> checkpoints;                    // in completion order
  Journal journal;
  double seconds = 0;
  std::string resume_words;  // jobs.resume as the manifest gives it (empty: none), for the causes
  // What each attempt printed (attempt 1 first), split from the job's log by split_attempts: the
  // causes read whether a checkpoint was passed in and what the program said it loaded. Empty:
  // not known (a cause the log would decide is then left out).
  std::vector<std::string> attempts;
};

// The job's log cut into its attempts at run.sh's "envpin run: job JOB: attempt N in ..." notes;
// what came before the first note is dropped. Each attempt keeps its note and at most 64 KiB.
std::vector<std::string> split_attempts(const std::string& log, const std::string& job);

struct KillPoint {
  double seconds = 0;         // since the run started
  std::string newest;         // the newest complete checkpoint at the kill
  std::size_t completed = 0;  // how many checkpoint versions had completed then
};

// --tolerance RTOL[,ATOL]: floating-point elements within |a - b| <= ATOL + RTOL * |b| pass,
// reported as tolerated. Throws diag::Error for anything but one or two finite numbers >= 0.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  bool any() const { return rtol > 0 || atol > 0; }
};
Tolerance parse_tolerance(const std::string& text);

// What envpin_compare.py found for one pair of files, loaded as the program loads them.
struct Semantic {
  std::string how;  // torch, safetensors, numpy, json, pickle, or bytes
  std::string note;
  bool equal = false;
  struct Entry {
    std::string key, what, a, b;
    std::size_t elements = 0;  // a tensor's or array's size (0: another value)
  };
  std::vector<Entry> state, metadata, tolerated;  // the first of each, at most 20
  std::size_t state_count = 0, metadata_count = 0, tolerated_count = 0;
  // The state a resume continues from is the same (metadata and tolerated elements aside).
  bool same_state() const { return how == "bytes" ? equal : state_count == 0; }
  // Weights differ: a tensor or array of more than one element among the state differences
  // (a loss or a counter aside).
  bool weights_differ() const {
    return how != "bytes" && std::any_of(state.begin(), state.end(), [](const Entry& e) { return e.elements > 1; });
  }
};
using Semantics = std::map<std::string, Semantic>;  // by pair id
// envpin_compare.py's output (bounded JSON; anything else: an error naming it).
Semantics parse_semantics(const std::string& json);
std::string torch_version(const std::string& json);
// The steps envpin_compare.py read inside files (its "steps": id -> integer or null), by id;
// entries that are not a non-negative integer are left out.
std::map<std::string, long long> parse_steps(const std::string& json);
// Steps read inside each version's file (ids "step:r:I" for ref's version I, "step:k:J" for
// killed's) given to the versions that have none, name by name where they carry the signal:
// every version of that name in both runs then has a step, and in the uninterrupted run they
// rise. Returns whether any were applied.
bool apply_inner_steps(std::vector<Version>& ref, std::vector<Version>& killed,
                       const std::map<std::string, long long>& steps);

// A pair of files to compare semantically: an id the verdict looks up, and the two paths.
struct Pair {
  std::string id;
  std::filesystem::path a, b;
};
// The pairs the verdict needs: each compared file item that differs in bytes between `ref` and
// `other` ("out:NAME"; with prefix "ref2:" for the second uninterrupted run), and each version
// pair that differs in bytes and has snapshots ("ver:I:J", ref's version I against other's J).
// With `kills`, also each version a segment wrote at the step it resumed from with other bytes,
// against the one before the kill ("same:I:J"): saved again, or trained again.
std::vector<Pair> pairs_to_compare(const RunRecord& ref, const RunRecord& other, const std::string& prefix,
                                   const std::vector<KillPoint>& kills = {});

// Whether every compared item of `ref` and `other` is the same: equal bytes, or the same state
// as envpin_compare.py loaded it (pair ids with `prefix`).
bool results_match(const RunRecord& ref, const RunRecord& other, const Semantics& semantics, const std::string& prefix);

// A version whose name the uninterrupted run `ref` wrote once and without a step (a config.json
// written at each start): no checkpoint to judge a resume by, count or kill after.
bool written_once(const std::vector<Version>& ref, const Version& v);

// Each kill's resume checked: the segment after it must continue from the newest checkpoint,
// not start again. A line for each that did not; empty when each did or it cannot be told.
// (judge adds the likely cause: from the attempts' output where it tells, else left out.)
// With `semantics` (pairs_to_compare's "same:I:J"), a save at the step it resumed from with
// other weights counts as a segment that trained that step again.
std::vector<std::string> resume_failures(const RunRecord& ref, const RunRecord& killed,
                                         const std::vector<KillPoint>& kills, const Semantics& semantics = {});

struct Verdict {
  int exit_code = 0;  // 0 identical, 1 differs
  std::vector<std::string> lines;
};

// The verdict on `ref` (uninterrupted) and `killed` (interrupted at `kills`); `ref2`, a second
// uninterrupted run, tells a program that is not deterministic from one that resumes wrongly.
// `semantics` holds envpin_compare.py's findings for pairs_to_compare (none: bytes only, said so).
// Every line is printable and at most 1,000 bytes (then cut): names and lines in it are the job's.
Verdict judge(const RunRecord& ref, const RunRecord& killed, const std::vector<KillPoint>& kills,
              const std::optional<RunRecord>& ref2, const Semantics& semantics = {}, const Tolerance& tolerance = {},
              const std::string& bytes_only_note = {});

}  // namespace envpin::resume_check

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: what envpin reads back that anyone may have written (-DENVPIN_FUZZ=ON, clang).
// The first byte picks the surface, the rest is the text:
//   0: a job's status file (jobs::parse_status): parsed, or one located error; no value it
//      accepts holds a control or bidi character; the error line is printable. The same text as
//      a ch-run session record (jobs::parse_ch_record): none, or a pid above 1, a start of digits,
//      a host of letters, digits, '.', '_' and '-', an exit below 1000.
//   1: a smoke program's output or a report file (io::parse_bounded_json, then report::diff of it
//      against itself and format_smoke): never a crash, however deep or odd the JSON; what is
//      printed is printable lines.
//   3: a slurmrestd answer of any version: its OpenAPI document (jobs::choose_api: a version
//      envpin speaks, or an error whose text is printable) and its job list (jobs::rest_job:
//      every word it keeps is printable and bounded, the exit a number, "signal N" or "-").
//   5: envpin.lock as `envpin mirror` and `lock --verify` read it (lock::parse): accepted, every
//      size within what envpin records, every value printable, and written back the same; or
//      one printable error. With 13 (mod 16): the text is a .deb's control paragraph made into
//      the mirror's Packages stanza (workflow::packages_stanza): one paragraph, no field twice
//      in any case, the lock's Filename/Size/SHA256 the only ones.
//   9 (mod 16): what the server of `envpin dev --host` answers (issue 61): each line as a server URL
//      (workflow::parse_dev_url): none, or a name of [A-Za-z0-9_.-], a port 1..65535 and a rest
//      that starts with '/' and holds printable ASCII only.
//   1 (mod 16): .envpin/push.json, which any job can write (workflow::parse_push_record): a record
//      whose digest and tree are sha256:HEX, whose reference and image are printable, written back
//      the same; or one printable, located error.
//   7: what resume-check reads from a job (issue 49): envpin_compare.py's output
//      (parse_semantics, parse_steps), the checkpoint journal, and names and log lines the job
//      chose, judged (resume_check::judge): every verdict line printable and at most 1,000 bytes.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/json_input.hpp"
#include "jobs/project.hpp"
#include "jobs/slurm_rest.hpp"
#include "lock/lock.hpp"
#include "pin/sha256.hpp"
#include "report/diff.hpp"
#include "report/smoke.hpp"
#include "resume_check/verdict.hpp"
#include "workflow/dev.hpp"
#include "workflow/mirror.hpp"
#include "workflow/push.hpp"

namespace {

// An invariant broken: the line it is on, then abort (libFuzzer keeps the input).
void check(bool ok, int line = __builtin_LINE()) {
  if (ok) return;
  std::fprintf(stderr, "state_fuzz.cpp:%d: an invariant does not hold\n", line);
  std::abort();
}

bool printable_lines(const std::string& s) {
  for (std::size_t start = 0; start <= s.size();) {
    const std::size_t end = std::min(s.find('\n', start), s.size());
    if (envpin::diag::control_at(std::string_view(s).substr(start, end - start)) != std::string_view::npos)
      return false;
    start = end + 1;
  }
  return true;
}

bool lower_eq(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool hex64(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

void fuzz_lock(const std::string& text) {
  using namespace envpin;
  try {
    const lock::Lock l = lock::parse(text, "envpin.lock");
    for (const auto& a : l.apt) {
      check(a.size >= 1 && a.size <= (std::int64_t{1} << 40));
      check(diag::control_at(a.name) == std::string_view::npos &&
            diag::control_at(a.filename) == std::string_view::npos);
    }
    for (const auto& p : l.python)
      for (const auto& f : p.files) check(f.size >= 0 && f.size <= (std::int64_t{1} << 40));
    // What envpin writes back it reads back unchanged.
    const std::string again = lock::to_toml(l);
    check(lock::to_toml(lock::parse(again, "envpin.lock")) == again);
  } catch (const diag::Error& e) {
    check(printable_lines(diag::format(e)));
  }
}

void fuzz_stanza(const std::string& control) {
  using namespace envpin;
  lock::AptPackage p;
  p.name = "envpin-hello";
  p.version = "1.0-1";
  p.size = 1234;
  p.sha256 = std::string(64, 'a');
  std::string stanza;
  try {
    stanza = workflow::packages_stanza(control, p, "envpin-hello_1.0-1_all.deb");
  } catch (const diag::Error& e) {
    check(printable_lines(diag::format(e)));
    return;
  }
  check(stanza.ends_with("\n\n") && stanza.find("\n\n") == stanza.size() - 2);  // one paragraph
  std::set<std::string> fields;
  std::size_t own = 0;
  for (std::size_t start = 0; start + 1 < stanza.size();) {
    const std::size_t end = stanza.find('\n', start);
    const std::string line = stanza.substr(start, end - start);
    start = end + 1;
    // apt reads the stanza, not a terminal: any UTF-8 (a maintainer's name), but no byte that
    // would end or break a line of deb822.
    check(!line.empty() &&
          std::none_of(line.begin(), line.end(), [](unsigned char c) { return c < 0x20 && c != '\t'; }));
    if (line[0] == ' ' || line[0] == '\t') continue;
    std::string field = line.substr(0, line.find(':'));
    std::transform(field.begin(), field.end(), field.begin(), [](unsigned char c) { return std::tolower(c); });
    check(fields.insert(field).second);  // no field twice, in any case
    for (const char* f : {"filename", "size", "sha256"})
      if (lower_eq(field, f)) ++own;
  }
  check(own == 3 &&
        stanza.ends_with("Filename: ./envpin-hello_1.0-1_all.deb\nSize: 1234\nSHA256: " + p.sha256 + "\n\n"));
}

// The input: envpin_compare.py's JSON, a line "--", then one name or log line per line, each
// made a compared output, a checkpoint version of both runs (the same or other bytes, with or
// without a step) and a journal entry, as the bits of its length pick.
void fuzz_resume(const std::string& text) {
  using namespace envpin::resume_check;
  const std::size_t cut = text.find("\n--\n");
  const std::string json = text.substr(0, cut);
  Semantics semantics;
  try {
    semantics = parse_semantics(json);
  } catch (const envpin::diag::Error& e) {
    check(printable_lines(envpin::diag::format(e)));
  }
  for (const auto& [id, step] : parse_steps(json)) check(step >= 0);
  check(envpin::diag::control_at(torch_version(json)) == std::string_view::npos);
  RunRecord ref, killed;
  ref.job = "fz-ref";
  killed.job = "fz-kill";
  std::string journal;
  std::size_t i = 0;
  for (std::size_t start = cut == std::string::npos ? text.size() : cut + 4; start < text.size() && i < 24; ++i) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const std::string sha = envpin::pin::sha256_hex(line);
    const std::string other = line.size() % 2 ? envpin::pin::sha256_hex(line + "x") : sha;
    ref.outputs[line] = sha;
    killed.outputs[line] = other;
    ref.outputs["line:" + line] = line;
    killed.outputs["line:" + line] = line.size() % 3 ? line : line + "!";
    const std::optional<long long> step =
        line.size() % 5 ? std::optional<long long>(static_cast<long long>(i)) : std::nullopt;
    ref.checkpoints.push_back({line, sha, step, {}});
    killed.checkpoints.push_back({line, other, line.size() % 7 ? step : std::nullopt, {}});
    journal += (i % 2 ? "loaded " : "saved ") + std::to_string(i) + " " + other + "\n" + line + "\n";
  }
  killed.journal = parse_journal(journal);
  for (const auto& [sha, step] : killed.journal.saved_step) check(hex64(sha) && step >= 0);
  std::vector<KillPoint> kills;
  if (!killed.checkpoints.empty()) kills.push_back({1.5, killed.checkpoints.front().name, 1});
  // The fuzzed results given to the pairs the verdict asks for, in order.
  std::vector<Semantic> given;
  for (auto& [id, m] : semantics) given.push_back(m);
  Semantics assigned;
  std::size_t k = 0;
  for (const Pair& pair : pairs_to_compare(ref, killed, "", kills))
    if (k < given.size()) assigned[pair.id] = given[k++];
  const std::optional<RunRecord> ref2 = text.size() % 2 ? std::optional<RunRecord>(ref) : std::nullopt;
  const Verdict v = judge(ref, killed, kills, ref2, assigned);
  check(v.exit_code == 0 || v.exit_code == 1);
  for (const std::string& line : v.lines) {
    check(line.size() <= 1000);
    check(envpin::diag::control_at(line) == std::string_view::npos);
    check(envpin::diag::invalid_utf8_at(line) == std::string_view::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    if (const auto r = envpin::jobs::parse_ch_record(text)) {
      check(r->pid > 1 && !r->start.empty() && r->start.find_first_not_of("0123456789") == std::string::npos);
      check(!r->host.empty() && r->host.size() <= 255 && envpin::diag::only_ascii(r->host, "._-"));
      check(!r->exit || (*r->exit >= 0 && *r->exit < 1000));
    }
    try {
      const envpin::jobs::Status s = envpin::jobs::parse_status(text, "logs/fz.status");
      for (const auto& [key, value] : s) {
        check(envpin::diag::control_at(key) == std::string_view::npos);
        check(envpin::diag::control_at(value) == std::string_view::npos);
        check(envpin::diag::invalid_utf8_at(value) == std::string_view::npos);
      }
    } catch (const envpin::diag::Error& e) {
      check(e.where().has_value());
      check(printable_lines(envpin::diag::format(e)));
    }
    return 0;
  }
  if (data[0] % 8 == 5) {
    if (data[0] % 16 == 13)
      fuzz_stanza(text);
    else
      fuzz_lock(text);
    return 0;
  }
  if (data[0] % 8 == 7) {
    fuzz_resume(text);
    return 0;
  }
  if (data[0] % 16 == 1) {
    try {
      const auto r = envpin::workflow::parse_push_record(text, ".envpin/push.json");
      const auto hex_digest = [](const std::string& d) {
        return d.size() == 71 && d.starts_with("sha256:") &&
               d.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
      };
      check(hex_digest(r.digest) && hex_digest(r.tree));
      for (const std::string* v : {&r.reference, &r.image}) {
        check(!v->empty() && envpin::diag::control_at(*v) == std::string_view::npos);
        check(envpin::diag::invalid_utf8_at(*v) == std::string_view::npos);
      }
      const auto again = envpin::workflow::parse_push_record(envpin::workflow::push_record_json(r), "again");
      check(again.reference == r.reference && again.digest == r.digest && again.image == r.image &&
            again.tree == r.tree);
    } catch (const envpin::diag::Error& e) {
      check(e.where().has_value());
      check(printable_lines(envpin::diag::format(e)));
    }
    return 0;
  }
  if (data[0] % 16 == 9) {
    for (std::size_t start = 0; start <= text.size();) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      if (const auto u = envpin::workflow::parse_dev_url(std::string_view(text).substr(start, end - start))) {
        check(!u->name.empty() && envpin::diag::only_ascii(u->name, "._-"));
        check(u->port >= 1 && u->port <= 65535);
        check(u->rest.starts_with('/') &&
              std::all_of(u->rest.begin(), u->rest.end(), [](char c) { return c > ' ' && c < 0x7f; }));
      }
      start = end + 1;
    }
    return 0;
  }
  const nlohmann::json j = envpin::io::parse_bounded_json(text);
  if (data[0] % 4 == 3) {
    try {
      const int api = envpin::jobs::choose_api(j, "http://fz");
      check(api >= envpin::jobs::kOldestApi && api <= envpin::jobs::kNewestApi);
    } catch (const envpin::diag::Error& e) {
      check(printable_lines(envpin::diag::format(e)));
    }
    if (!j.is_object() || !j.contains("jobs") || !j["jobs"].is_array()) return 0;
    for (const auto& entry : j["jobs"]) {
      const auto r = envpin::jobs::rest_job(entry, "demo");
      if (!r) continue;
      for (const std::string* word : {&r->job, &r->state, &r->reason, &r->nodes, &r->exit}) {
        check(envpin::diag::control_at(*word) == std::string_view::npos);
        check(envpin::diag::invalid_utf8_at(*word) == std::string_view::npos);
        check(word->size() <= 1024);
      }
      check(r->exit == "-" || r->exit.find_first_not_of("0123456789") == std::string::npos ||
            r->exit.starts_with("signal "));
    }
    return 0;
  }
  if (j.is_discarded() || !j.is_object()) return 0;
  try {
    const auto d = envpin::report::diff(j, j, "a", "b");
    check(printable_lines(envpin::report::format_diff(d)));
    if (j.contains("smoke")) check(printable_lines(envpin::report::format_smoke(j["smoke"])));
  } catch (const envpin::diag::Error&) {
  }
  return 0;
}

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
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/json_input.hpp"
#include "jobs/project.hpp"
#include "jobs/slurm_rest.hpp"
#include "report/diff.hpp"
#include "report/smoke.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
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

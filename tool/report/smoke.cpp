// SPDX-License-Identifier: Apache-2.0
#include "report/smoke.hpp"

#include <cstdlib>
#include <sstream>

#include "diag/text.hpp"
#include "io/json_input.hpp"
#include "io/process.hpp"

namespace envpin::report {
namespace {

using nlohmann::json;

// The last line of `out` that parses as a JSON object, or null.
json last_json_line(const std::string& out) {
  std::istringstream lines(out);
  json found;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') continue;
    json j = io::parse_bounded_json(line);
    if (j.is_object()) found = std::move(j);
  }
  return found;
}

// The "smoke: RESULT: summary" line a program printed, without its prefix.
std::string summary_line(const std::string& text) {
  std::istringstream lines(text);
  std::string found;
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("smoke: ")) {
      const std::size_t colon = line.find(": ", 7);
      found = colon == std::string::npos ? line.substr(7) : line.substr(colon + 2);
    }
  return found;
}

// What a program printed reaches terminals and reports: every string made one printable line
// (an escape sequence or a stray byte in a device name or an error cannot rewrite the screen).
void make_printable(json& j) {
  if (j.is_string()) {
    j = diag::printable(j.get<std::string>());
  } else if (j.is_structured()) {
    for (auto& v : j) make_printable(v);
  }
}

json unavailable(const std::string& message) { return {{"result", "unavailable"}, {"message", message}}; }

json run_part(const std::vector<std::string>& argv, bool summary_on_stderr) {
  const io::ProcessResult r = io::run_process(argv);
  json part = last_json_line(r.out);
  if (!part.is_object()) {
    std::string first = r.err.substr(0, r.err.find('\n'));
    if (first.empty()) first = r.out.substr(0, r.out.find('\n'));
    part = {{"result", "fail"},
            {"message",
             argv[0] +
                 (r.exit_code < 0 ? " could not run" : " exited " + std::to_string(r.exit_code) + " without a result") +
                 (first.empty() ? "" : ": " + first)}};
  }
  part["exit"] = r.exit_code;
  if (!part.contains("summary")) part["summary"] = summary_line(summary_on_stderr ? r.err : r.out);
  make_printable(part);
  return part;
}

}  // namespace

json run_smoke(const SmokeOptions& o) {
  json s = {{"schema", kSmokeSchema}, {"device", o.device}};
  if (o.run_kernel) {
    const std::string kernel = o.kernel.empty() ? io::find_on_path("envpin-smoke") : o.kernel;
    if (o.device == "cpu")
      s["kernel"] = {{"result", "skip"}, {"message", "--device cpu: the CUDA kernel runs only on a GPU"}};
    else if (kernel.empty())
      s["kernel"] = unavailable(
          "no envpin-smoke on PATH: the image has it at /usr/local/bin/envpin-smoke; on a host, "
          "'cmake --build . --target smoke' builds it (pass it with --kernel)");
    else
      s["kernel"] = o.device == "cuda" ? run_part({kernel, "--require-gpu"}, false) : run_part({kernel}, false);
    // A pass is the GPU's integer digest equal to the CPU's; envpin checks that itself rather
    // than take the program's word (another build of it, or a program that only says "pass").
    json& k = s["kernel"];
    const std::string gpu = k.value("gpu_sha256", ""), cpu = k.value("cpu_sha256", "");
    if (k.value("result", "") == "pass" && (gpu.empty() || gpu != cpu)) {
      k["result"] = "fail";
      k["summary"] = "the program reported a pass, but its GPU digest '" + gpu.substr(0, 12) +
                     "' is not the CPU reference '" + cpu.substr(0, 12) + "'";
    }
  }
  if (!o.framework.empty()) {
    std::string python = o.python;
    if (python.empty()) {
      const char* e = std::getenv("ENVPIN_PYTHON");
      python = e && *e ? e : "python3";
    }
    // The kernel just ran on a GPU here: torch must compute there too, not quietly on the CPU.
    const bool gpu_here = s.contains("kernel") && s["kernel"].value("result", "") == "pass";
    std::vector<std::string> argv = {python, o.framework, "--device",
                                     o.device == "auto" && gpu_here ? "cuda" : o.device};
    if (o.seed) argv.insert(argv.end(), {"--seed", std::to_string(*o.seed)});
    s["framework"] = run_part(argv, true);
    // Asked for the GPU (or the kernel ran on one) and torch has none: a failure, whatever the
    // script calls it.
    if ((o.device == "cuda" || gpu_here) && s["framework"].value("result", "") == "skip")
      s["framework"]["result"] = "fail";
  }
  return s;
}

std::string format_smoke(const json& smoke) {
  std::string out;
  for (const char* part : {"kernel", "framework"}) {
    if (!smoke.contains(part)) continue;
    const json& p = smoke[part];
    const std::string result = p.value("result", "fail");
    std::string word = result == "pass" ? "PASS" : result == "skip" ? "SKIP" : result == "unavailable" ? "n/a" : "FAIL";
    std::string text = p.value("summary", "");
    if (text.empty()) text = p.value("message", "");
    // The skip of a kernel still proves the CPU side: its reference digest is comparable.
    if (result == "skip" && !p.value("cpu_sha256", "").empty())
      text += "; CPU reference sha256 " + p.value("cpu_sha256", "").substr(0, 12);
    out += std::string(part) + std::string(11 - std::string(part).size(), ' ') + word +
           std::string(6 - word.size(), ' ') + text + "\n";
  }
  return out;
}

bool smoke_failed(const json& smoke) {
  for (const char* part : {"kernel", "framework"})
    if (smoke.contains(part) && smoke[part].value("result", "fail") == "fail") return true;
  return false;
}

}  // namespace envpin::report

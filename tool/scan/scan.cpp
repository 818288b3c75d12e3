// SPDX-License-Identifier: Apache-2.0
#include "scan/scan.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "scan/ignore.hpp"

namespace envpin::scan {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxFileBytes = 4u << 20;  // larger files are reported as skipped

// A user's home directory written into a file: macOS, Linux, Windows.
const std::regex& host_path() {
  static const std::regex re(R"((/Users/[A-Za-z0-9._-]+/|/home/[A-Za-z0-9._-]+/|[A-Za-z]:\\+Users\\+[A-Za-z0-9._ -]+\\))");
  return re;
}

bool is_binary(const std::string& head) { return head.find('\0') != std::string::npos; }

std::string rel_path(const fs::path& p, const fs::path& root) { return p.lexically_relative(root).generic_string(); }

// Credential formats with a fixed shape (documented prefixes of AWS, GitHub, OpenAI-style,
// Hugging Face, Slack and private-key blocks).
const std::regex& secret_value() {
  static const std::regex re(
      R"((AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|-----BEGIN [A-Z ]*PRIVATE KEY-----))");
  return re;
}

const std::regex& secret_name() {
  static const std::regex re(R"((TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)$)",
                             std::regex::icase);
  return re;
}

}  // namespace

std::vector<std::string> secret_files_in_context(const fs::path& context, const std::string& dockerignore) {
  IgnoreRules rules;
  std::istringstream lines(dockerignore);
  std::string line;
  while (std::getline(lines, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && !line.starts_with("#")) rules.add(line);
  }
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(context, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string rel = rel_path(it->path(), context);
    if (rel == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (is_secret_path(rel) && !rules.excluded(rel) && !it->is_directory()) out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Report scan_tree(const fs::path& root, const std::string& shown, const manifest::Manifest* m) {
  Report report;
  const IgnoreRules gitignore = IgnoreRules::from_file(root / ".gitignore");
  const auto shown_path = [&](const std::string& rel) { return shown == "." ? rel : shown + "/" + rel; };

  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      report.skipped.push_back(it->path().generic_string() + ": " + ec.message());
      ec.clear();
      continue;
    }
    const std::string rel = rel_path(it->path(), root);
    if (rel == ".git" || gitignore.excluded(rel)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && !it->is_symlink()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());

  for (const fs::path& file : files) {
    const std::string rel = rel_path(file, root);
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec || size > kMaxFileBytes) {
      report.skipped.push_back(shown_path(rel) + ": " + (ec ? ec.message() : std::to_string(size) + " bytes, too large to scan"));
      ec.clear();
      continue;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      report.skipped.push_back(shown_path(rel) + ": cannot be read");
      continue;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (is_binary(text.substr(0, 8000))) continue;
    ++report.files;
    std::istringstream lines(text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      for (std::sregex_iterator it(line.begin(), line.end(), host_path()), end; it != end; ++it)
        report.findings.push_back({"host-path", shown_path(rel), number, static_cast<int>(it->position()) + 1,
                                   "hard-coded host path '" + it->str() + "' (exists only on one machine)",
                                   "read it from the environment (e.g. a DATA_DIR named in the manifest's env "
                                   "and paths) or make it relative to the project"});
      std::smatch secret;
      if (std::regex_search(line, secret, secret_value()))
        report.findings.push_back({"secret-value", shown_path(rel), number, static_cast<int>(secret.position()) + 1,
                                   "a credential is written in this file ('" + secret.str().substr(0, 8) + "...')",
                                   "remove it, rotate it, and pass it at run time (manifest secrets)"});
    }
  }

  if (m) {
    // The build context docker would send: the manifest's directory through its .dockerignore.
    const auto dockerignore = [&]() -> std::string {
      std::ifstream in(m->project_dir / m->outputs.dockerignore.value);
      return in ? std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) : "";
    }();
    const std::string ctx_shown = m->project_dir == "." ? "" : m->project_dir.generic_string() + "/";
    for (const std::string& rel : secret_files_in_context(m->project_dir, dockerignore))
      report.findings.push_back({"secret-file", ctx_shown + rel, 0, 0,
                                 "secret file in the docker build context (not excluded by " +
                                     m->outputs.dockerignore.value + ")",
                                 "run 'envpin generate', whose .dockerignore excludes it, or add it to .dockerignore"});
    for (const auto& e : m->env) {
      const bool by_name = std::regex_search(e.name.value, secret_name());
      const bool by_value = std::regex_search(e.value.value, secret_value());
      if (!by_name && !by_value) continue;
      report.findings.push_back({"secret-env", e.value.where.file, e.value.where.line, e.value.where.column,
                                 "env." + e.name.value + (by_value ? " holds what looks like a credential"
                                                                   : " looks like a secret baked into the image"),
                                 "move " + e.name.value + " to secrets: [" + e.name.value + "] and pass it at run time"});
    }
  }
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
  });
  return report;
}

}  // namespace envpin::scan

// SPDX-License-Identifier: Apache-2.0
#include "scan/scan.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "scan/ignore.hpp"
#include "secrets/rules.hpp"

namespace envpin::scan {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxFileBytes = 4u << 20;  // larger files are reported as skipped

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'; }

// A user's home directory written into a file: /Users/<name>/ (macOS), /home/<name>/ (Linux),
// C:\Users\<name>\ (Windows, any drive, doubled backslashes too). Returns the offset and
// sets `length`, or npos.
std::size_t find_host_path(std::string_view line, std::size_t& length) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const std::string_view rest = line.substr(i);
    for (std::string_view home : {std::string_view("/Users/"), std::string_view("/home/")}) {
      if (!rest.starts_with(home)) continue;
      std::size_t n = home.size();
      while (n < rest.size() && name_char(rest[n])) ++n;
      if (n > home.size() && n < rest.size() && rest[n] == '/') {
        length = n + 1;
        return i;
      }
    }
    if (rest.size() > 3 && std::isalpha(static_cast<unsigned char>(rest[0])) && rest[1] == ':' && rest[2] == '\\') {
      std::size_t n = 2;
      const auto slashes = [&] {
        const std::size_t start = n;
        while (n < rest.size() && rest[n] == '\\') ++n;
        return n > start;
      };
      slashes();
      if (rest.substr(n).starts_with("Users")) {
        n += 5;
        if (slashes()) {
          const std::size_t name = n;
          while (n < rest.size() && (name_char(rest[n]) || rest[n] == ' ')) ++n;
          if (n > name && slashes()) {
            length = n;
            return i;
          }
        }
      }
    }
  }
  return std::string_view::npos;
}

// An absolute path of this machine, as one word: each place `needle` starts in `line` and is
// not followed by more of a name (so /home/me does not match /home/meg).
std::vector<std::size_t> find_this_machine(std::string_view line, std::string_view needle) {
  std::vector<std::size_t> out;
  if (needle.size() < 2) return out;
  for (std::size_t at = line.find(needle); at != std::string_view::npos; at = line.find(needle, at + 1)) {
    const std::size_t end = at + needle.size();
    if (end < line.size() && name_char(line[end])) continue;
    if (at > 0 && (name_char(line[at - 1]) || line[at - 1] == '/')) continue;
    out.push_back(at);
  }
  return out;
}

// The absolute paths only this machine has, which no committed file should hold: the project
// directory as this machine names it, and the user's home directory (a cluster's /nfs/home/alice
// too, which find_host_path does not know) unless it is /root, the same path in every container.
std::vector<std::string> this_machine_paths(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path project = fs::canonical(root, ec);
  if (!ec && project.generic_string() != "/") out.push_back(project.generic_string());
  if (const char* home = std::getenv("HOME"); home && home[0] == '/') {
    std::string h = fs::path(home).lexically_normal().generic_string();
    while (h.size() > 1 && h.back() == '/') h.pop_back();
    if (h != "/" && h != "/root" && std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  }
  return out;
}

// The editor modeline "# yaml-language-server: $schema=PATH" with an absolute PATH: the
// column of PATH, or npos.
std::size_t find_absolute_schema(std::string_view line) {
  const std::size_t modeline = line.find("yaml-language-server:");
  if (modeline == std::string_view::npos) return std::string_view::npos;
  const std::size_t at = line.find("$schema=", modeline);
  if (at == std::string_view::npos) return std::string_view::npos;
  const std::string_view path = line.substr(at + 8);
  const bool absolute = path.starts_with("/") || path.starts_with("file:/") ||
                        (path.size() > 2 && std::isalpha(static_cast<unsigned char>(path[0])) && path[1] == ':');
  return absolute ? at + 8 : std::string_view::npos;
}

bool is_binary(const std::string& head) { return head.find('\0') != std::string::npos; }

std::string rel_path(const fs::path& p, const fs::path& root) { return p.lexically_relative(root).generic_string(); }

// An env name that says it holds a secret: ...TOKEN, ...SECRET, ...PASSWORD, ...API_KEY.
bool secret_name(std::string_view name) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view end : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "API_KEY", "ACCESSKEY", "ACCESS_KEY",
                               "PRIVATEKEY", "PRIVATE_KEY", "CREDENTIAL", "CREDENTIALS"})
    if (std::string_view(upper).ends_with(end)) return true;
  return false;
}

// True for a configuration file under `root` that is secret by what it holds (pip.conf with a
// password in a URL, a .git/config with a token): read without following a link, bounded.
bool credentials_in(const fs::path& root, const std::string& rel) {
  if (!secrets::is_secret_by_content(rel)) return false;
  std::string text;
  const io::ReadStatus read = io::read_regular(root / rel, secrets::kContentMax, text);
  return read == io::ReadStatus::too_large || (read == io::ReadStatus::ok && secrets::is_secret_content(rel, text));
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
  // docker matches .dockerignore by name: a hard link to a secret under another name is sent.
  std::set<std::pair<dev_t, ino_t>> secret_inodes;
  std::vector<std::pair<std::string, std::pair<dev_t, ino_t>>> linked;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(context, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string rel = rel_path(it->path(), context);
    if (rel == ".git") {
      // The project's own repository: only its config can hold a credential (a token in a
      // remote's URL), and only when the context sends it.
      it.disable_recursion_pending();
      if (!rules.excluded(rel) && credentials_in(context, ".git/config")) out.push_back(".git/config");
      continue;
    }
    struct stat st {};
    const bool regular = ::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode);
    if (secrets::is_secret_path(rel)) {
      if (regular) secret_inodes.emplace(st.st_dev, st.st_ino);
      if (!rules.excluded(rel) && !it->is_directory()) out.push_back(rel);
    } else if (regular && !rules.excluded(rel) && credentials_in(context, rel)) {
      secret_inodes.emplace(st.st_dev, st.st_ino);
      out.push_back(rel);
    } else if (regular && st.st_nlink > 1 && !rules.excluded(rel)) {
      linked.push_back({rel, {st.st_dev, st.st_ino}});
    }
  }
  for (const auto& [rel, inode] : linked)
    if (secret_inodes.count(inode)) out.push_back(rel);
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
  const std::vector<std::string> machine_paths = this_machine_paths(root);

  for (const fs::path& file : files) {
    const std::string rel = rel_path(file, root);
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec || size > kMaxFileBytes) {
      report.skipped.push_back(shown_path(rel) + ": " +
                               (ec ? ec.message() : std::to_string(size) + " bytes, too large to scan"));
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
    // A Dockerfile's paths are the image's (a home directory there is the container user's), and
    // its COPY sources are relative to the context: none names a host.
    const std::string name = file.filename().string();
    const bool image_paths = name == "Dockerfile" || name == "Containerfile" || name.starts_with("Dockerfile.") ||
                             name.ends_with(".Dockerfile") || name.ends_with(".dockerfile");
    std::istringstream lines(text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      std::size_t length = 0;
      std::set<std::size_t> flagged;
      for (std::size_t from = 0, at;
           !image_paths && (at = find_host_path(std::string_view(line).substr(from), length)) != std::string_view::npos;
           from += at + length) {
        flagged.insert(from + at);
        report.findings.push_back(
            {"host-path", shown_path(rel), number, static_cast<int>(from + at) + 1,
             "hard-coded host path " + diag::quote(line.substr(from + at, length)) + " (exists only on one machine)",
             "read it from the environment (e.g. a DATA_DIR named in the manifest's env "
             "and paths) or make it relative to the project"});
      }
      if (const std::size_t at = find_absolute_schema(line); at != std::string_view::npos) {
        flagged.insert(at);
        report.findings.push_back(
            {"host-path", shown_path(rel), number, static_cast<int>(at) + 1,
             "the editor's schema is named by an absolute path (another machine has another, or none)",
             "name it relative to the file: $schema=.envpin/envpin.schema.json ('envpin generate' writes it)"});
      }
      for (const std::string& path : machine_paths) {
        if (image_paths) break;
        for (const std::size_t at : find_this_machine(line, path)) {
          if (!flagged.insert(at).second) continue;
          report.findings.push_back(
              {"host-path", shown_path(rel), number, static_cast<int>(at) + 1,
               "this machine's own path " + diag::quote(path) +
                   " is written in this file (another machine has another)",
               "make it relative to the project, or read it from the environment (the manifest's env and paths)"});
        }
      }
      if (const std::size_t at = secrets::find_token(line, length); at != std::string_view::npos)
        report.findings.push_back(
            {"secret-value", shown_path(rel), number, static_cast<int>(at) + 1,
             "a credential is written in this file ('" + diag::printable(line.substr(at, 8)) + "...')",
             "remove it, rotate it, and pass it at run time (manifest secrets)"});
    }
  }

  // The build context docker would send, and what rsync would copy: the manifest's directory
  // through the .dockerignore it generates, or, with no manifest, the scanned directory through
  // its own .dockerignore (a .gitignore stops neither).
  const fs::path context = m ? m->project_dir : root;
  const std::string ignore_file = m ? m->outputs.dockerignore.value : ".dockerignore";
  const auto dockerignore = [&]() -> std::string {
    std::ifstream in(context / ignore_file);
    return in ? std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) : "";
  }();
  const std::string ctx_shown =
      m ? (m->project_dir == "." ? "" : m->project_dir.generic_string() + "/") : (shown == "." ? "" : shown + "/");
  for (const std::string& rel : secret_files_in_context(context, dockerignore)) {
    // A configuration file secret by what it holds: no name rule of .dockerignore leaves it out.
    if (!secrets::is_secret_path(rel) && secrets::is_secret_by_content(rel)) {
      report.findings.push_back(
          {"secret-file", ctx_shown + rel, 0, 0,
           "credentials in a configuration file of the docker build context (not excluded by " + ignore_file +
               "; envpin push and sync leave it out)",
           "take them out (pip and git read them from a keyring, a credential helper or the environment), "
           "rotate them, or add the file to " +
               (m ? "context.exclude" : std::string(".dockerignore"))});
      continue;
    }
    report.findings.push_back(
        {"secret-file", ctx_shown + rel, 0, 0,
         "secret file in the docker build context (not excluded by " + ignore_file + ")",
         m ? "run 'envpin generate', whose .dockerignore excludes it, or add it to .dockerignore"
           : "add it to .dockerignore (the one 'envpin generate' writes leaves out every secret file)"});
  }

  if (m) {
    for (const auto& e : m->env) {
      std::size_t length = 0;
      const bool by_name = secret_name(e.name.value);
      const bool by_value = secrets::find_token(e.value.value, length) != std::string_view::npos;
      if (!by_name && !by_value) continue;
      report.findings.push_back(
          {"secret-env", e.value.where.file, e.value.where.line, e.value.where.column,
           "env." + e.name.value +
               (by_value ? " holds what looks like a credential" : " looks like a secret baked into the image"),
           "move " + e.name.value + " to secrets: [" + e.name.value + "] and pass it at run time"});
    }
  }
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
  });
  return report;
}

}  // namespace envpin::scan

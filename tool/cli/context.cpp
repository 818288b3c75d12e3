// SPDX-License-Identifier: Apache-2.0
// `envpin context`: the docker build context as a deterministic tar (libarchive): entries
// sorted, mtime/uid/gid zero, .dockerignore applied, secrets never included. Prints its digest.
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <regex>
#include <sstream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

// Never in a context, whatever .dockerignore says (the same list generate writes).
constexpr const char* kSecretPatterns[] = {"**/.env", "**/.env.*", "**/*.pem", "**/*.key", "**/id_rsa*",
                                           "**/id_ed25519*", "**/id_ecdsa*", "**/.netrc", "**/.aws", "**/.ssh",
                                           "**/.docker/config.json"};

struct Rule {
  std::regex re;
  bool negate;
};

// A .dockerignore pattern (Go filepath.Match plus "**") as a regex over '/'-separated paths.
std::regex pattern_regex(std::string p) {
  while (p.starts_with("/")) p.erase(0, 1);
  while (p.starts_with("./")) p.erase(0, 2);
  while (p.size() > 1 && p.ends_with("/")) p.pop_back();
  std::string re;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '*' && i + 1 < p.size() && p[i + 1] == '*') {
      const bool slash = i + 2 < p.size() && p[i + 2] == '/';
      re += slash ? "(.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c == '*') {
      re += "[^/]*";
    } else if (c == '?') {
      re += "[^/]";
    } else if (c == '[') {
      const auto close = p.find(']', i);
      if (close == std::string::npos) {
        re += "\\[";
      } else {
        std::string set = p.substr(i + 1, close - i - 1);
        if (!set.empty() && set[0] == '!') set[0] = '^';
        re += "[" + set + "]";
        i = close;
      }
    } else if (c == '\\' && i + 1 < p.size()) {
      re += "\\";
      re += p[++i];
    } else if (std::string(".+()^$|{}").find(c) != std::string::npos) {
      re += "\\";
      re += c;
    } else {
      re += c;
    }
  }
  return std::regex(re);
}

std::vector<Rule> read_rules(const fs::path& dockerignore) {
  std::vector<Rule> rules;
  const auto text = io::read_file(dockerignore);
  if (!text) return rules;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line.starts_with("#")) continue;
    const bool negate = line.starts_with("!");
    rules.push_back({pattern_regex(negate ? line.substr(1) : line), negate});
  }
  return rules;
}

// Docker's rule: the last matching pattern wins; a pattern that matches a parent directory
// matches everything below it.
bool matches(const std::regex& re, const std::string& path) {
  for (std::size_t end = path.size();; end = path.rfind('/', end - 1)) {
    if (std::regex_match(path.substr(0, end), re)) return true;
    if (end == 0 || path.rfind('/', end - 1) == std::string::npos) return false;
  }
}

bool excluded(const std::vector<Rule>& rules, const std::string& path) {
  bool out = false;
  for (const Rule& r : rules)
    if (matches(r.re, path)) out = !r.negate;
  return out;
}

struct Options {
  std::string manifest = "envpin.yaml";
  std::string output = "envpin-context.tar";
};

int context(const Options& o, Streams& io) {
  const manifest::Manifest m = manifest::load(o.manifest);
  const fs::path root = m.project_dir;
  const std::vector<Rule> rules = read_rules(root / m.outputs.dockerignore.value);
  std::vector<std::regex> secrets;
  for (const char* p : kSecretPatterns) secrets.push_back(pattern_regex(p));
  const fs::path output = fs::absolute(o.output).lexically_normal();

  std::vector<std::string> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::none, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw diag::Error("cannot read " + it->path().string() + ": " + ec.message());
    const std::string rel = it->path().lexically_relative(root).generic_string();
    const bool secret = std::any_of(secrets.begin(), secrets.end(), [&](const std::regex& re) { return matches(re, rel); });
    // Excluded directories are still walked: a later "!" pattern may bring a file back, as
    // docker does (the generated .dockerignore re-includes .envpin/check_env.sh).
    if (secret || excluded(rules, rel) || fs::absolute(it->path()).lexically_normal() == output) continue;
    paths.push_back(rel);
  }
  std::sort(paths.begin(), paths.end());

  std::string tar;
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  const auto write_cb = [](archive*, void* user, const void* buffer, size_t length) -> la_ssize_t {
    static_cast<std::string*>(user)->append(static_cast<const char*>(buffer), length);
    return static_cast<la_ssize_t>(length);
  };
  if (archive_write_open(a.get(), &tar, nullptr, write_cb, nullptr) != ARCHIVE_OK)
    throw diag::Error(std::string("cannot start the tar: ") + archive_error_string(a.get()));
  std::size_t files = 0;
  for (const std::string& rel : paths) {
    const fs::path full = root / rel;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) throw diag::Error("cannot stat " + full.string());
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), rel.c_str());
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), 0, 0);
    bool regular = false;
    if (S_ISLNK(st.st_mode)) {
      archive_entry_set_filetype(e.get(), AE_IFLNK);
      archive_entry_set_perm(e.get(), 0777);
      archive_entry_set_symlink(e.get(), fs::read_symlink(full).generic_string().c_str());
    } else if (S_ISDIR(st.st_mode)) {
      archive_entry_set_filetype(e.get(), AE_IFDIR);
      archive_entry_set_perm(e.get(), 0755);
    } else if (S_ISREG(st.st_mode)) {
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_perm(e.get(), (st.st_mode & 0111) ? 0755 : 0644);  // only the exec bit matters
      archive_entry_set_size(e.get(), static_cast<la_int64_t>(st.st_size));
      regular = true;
      ++files;
    } else {
      continue;  // sockets, fifos, devices have no place in a build context
    }
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK)
      throw diag::Error("cannot add " + rel + " to the tar: " + archive_error_string(a.get()));
    if (regular) {  // streamed, 1 MiB at a time
      std::ifstream in(full, std::ios::binary);
      std::vector<char> buffer(1 << 20);
      while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        if (in.gcount() > 0) archive_write_data(a.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
      }
    }
  }
  archive_write_close(a.get());
  io::write_atomic(output, tar, false);
  io.out << "sha256:" << pin::sha256_hex(tar) << "  " << o.output << " (" << files << " files, " << tar.size()
         << " bytes)\n";
  return kOk;
}

}  // namespace

Command context_command() {
  return {"context", "write the docker build context as a deterministic tar and print its sha256",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<Options>();
            app.add_option("-f,--manifest", o->manifest, "the manifest of the project")->capture_default_str();
            app.add_option("-o,--output", o->output, "the tar to write")->capture_default_str();
            return [o](Streams& io) { return context(*o, io); };
          }};
}

}  // namespace envpin::cli

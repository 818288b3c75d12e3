// SPDX-License-Identifier: Apache-2.0
#include "jobs/checkpoints.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string_view>
#include <system_error>

#include "diag/error.hpp"
#include "pin/sha256.hpp"

namespace envpin::jobs {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSidecar = ".sha256";

bool temporary(std::string_view base) {
  return base.empty() || base.front() == '.' || base.back() == '~' || base.ends_with(".tmp") ||
         base.ends_with(".partial");
}

// The hex digest a sidecar names, or empty when it is not one. A sidecar is sha256sum's line:
// 64 lowercase hex digits, then the end, or whitespace and a name; only its first 65 bytes are
// read, whatever the file holds.
std::string read_sidecar(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char head[65] = {};
  in.read(head, sizeof head);
  const std::string_view text(head, static_cast<std::size_t>(in.gcount()));
  const std::string_view hex = text.substr(0, 64);
  const bool ok =
      hex.size() == 64 &&
      std::all_of(hex.begin(), hex.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }) &&
      (text.size() == 64 || text[64] == ' ' || text[64] == '\n' || text[64] == '\t');
  return ok ? std::string(hex) : std::string();
}

// Newest first: modification time, then name.
bool newer(const CheckpointFile& a, const CheckpointFile& b) {
  return a.mtime != b.mtime ? a.mtime > b.mtime : a.name > b.name;
}

}  // namespace

bool is_checkpoint_name(const std::string& name, const Patterns& patterns) {
  const std::string base = name.substr(name.rfind('/') + 1);
  if (temporary(base) || base.ends_with(kSidecar)) return false;
  if (!patterns.empty())
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& p) { return ::fnmatch(p.c_str(), name.c_str(), FNM_PATHNAME) == 0; });
  std::string lower = base;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("tfevents") != std::string::npos) return false;  // TensorBoard's events.out.tfevents.*
  return std::none_of(kNotCheckpointSuffixes.begin(), kNotCheckpointSuffixes.end(),
                      [&](std::string_view ext) { return lower.ends_with(ext); });
}

std::vector<CheckpointFile> list_checkpoints(const fs::path& dir, const Patterns& patterns) {
  std::vector<CheckpointFile> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code fe;
    if (!it->is_regular_file(fe) || it->is_symlink(fe)) continue;
    CheckpointFile f;
    f.name = it->path().lexically_relative(dir).generic_string();
    if (!is_checkpoint_name(f.name, patterns)) continue;
    f.size = it->file_size(fe);
    f.mtime = it->last_write_time(fe);
    if (fe) continue;  // vanished while listed (a keep-N prune, a rename)
    const fs::path sidecar = it->path().string() + std::string(kSidecar);
    if (fs::is_regular_file(sidecar, fe)) {
      f.has_sidecar = true;
      f.sidecar_sha256 = read_sidecar(sidecar);
    }
    out.push_back(std::move(f));
  }
  // Once the program writes sidecars, a file without one is not (yet) a checkpoint.
  if (std::any_of(out.begin(), out.end(), [](const auto& f) { return f.has_sidecar; }))
    std::erase_if(out, [](const auto& f) { return !f.has_sidecar; });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

bool sidecar_matches(const fs::path& dir, const CheckpointFile& file, std::string* digest) {
  if (!file.has_sidecar) return true;
  if (file.sidecar_sha256.empty()) return false;
  try {
    const std::string hex = pin::sha256_file(dir / file.name);
    if (digest) *digest = hex;
    return hex == file.sidecar_sha256;
  } catch (const diag::Error&) {
    return false;  // gone or unreadable: not a checkpoint to resume from
  }
}

std::optional<CheckpointFile> last_complete(const fs::path& dir, std::vector<std::string>* skipped,
                                            const Patterns& patterns) {
  std::vector<CheckpointFile> files = list_checkpoints(dir, patterns);
  std::sort(files.begin(), files.end(), newer);
  for (const CheckpointFile& f : files) {
    if (sidecar_matches(dir, f)) return f;
    if (skipped) skipped->push_back(f.name);
  }
  return std::nullopt;
}

}  // namespace envpin::jobs

// SPDX-License-Identifier: Apache-2.0
#include "io/ownership.hpp"

#include <nlohmann/json.hpp>

#include <map>

#include "diag/error.hpp"
#include "io/atomic_file.hpp"
#include "io/json_input.hpp"
#include "pin/sha256.hpp"

namespace envpin::io {
namespace {

namespace fs = std::filesystem;

// True when `bytes` say in their first three lines that `envpin generate` wrote them.
bool has_marker(const std::string& bytes) {
  std::size_t end = 0;
  for (int line = 0; line < 3 && end != std::string::npos; ++line) end = bytes.find('\n', end + 1);
  return bytes.substr(0, end).find(kGeneratedMarker) != std::string::npos;
}

// The recorded sha256 of each file; empty when there is no record or it is not envpin's.
std::map<std::string, std::string> read_record(const fs::path& file) {
  std::map<std::string, std::string> out;
  std::optional<std::string> text;
  try {
    text = read_file(file);
  } catch (const diag::Error&) {
    return out;
  }
  if (!text) return out;
  const nlohmann::json j = parse_bounded_json(*text);
  if (!j.is_object() || !j.contains("files") || !j["files"].is_object()) return out;
  for (const auto& [path, sum] : j["files"].items())
    if (sum.is_string()) out[path] = sum.get<std::string>();
  return out;
}

}  // namespace

std::vector<std::string> foreign_files(const fs::path& root, const std::vector<std::string>& paths,
                                       const fs::path& record, bool force) {
  const std::map<std::string, std::string> written = read_record(record);
  std::vector<std::string> out;
  for (const std::string& rel : paths) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(root / rel, ec);
    if (!fs::exists(st)) continue;
    if (!fs::is_regular_file(st)) {
      out.push_back(rel);
      continue;
    }
    if (force) continue;
    const std::string current = *read_file(root / rel);
    const auto it = written.find(rel);
    if (!(it != written.end() ? it->second == "sha256:" + pin::sha256_hex(current) : has_marker(current)))
      out.push_back(rel);
  }
  return out;
}

}  // namespace envpin::io

// SPDX-License-Identifier: Apache-2.0
// Internal to manifest/: typed, located reads of yaml-cpp nodes. Every failure is a
// diag::Error naming the file, line and column of the offending node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "diag/error.hpp"
#include "diag/suggest.hpp"
#include "diag/text.hpp"
#include "manifest/model.hpp"

namespace envpin::manifest::detail {

namespace fs = std::filesystem;
using diag::Error;

// yaml-cpp's parser message `msg`, reworded for users (yaml-cpp's own text never reaches them).
std::string describe_yaml_error(const std::string& msg);

// Throws diag::Error at the first tab used for indentation in `source`
// (YAML forbids it and yaml-cpp's reaction to it is confusing).
void reject_tabs(const std::string& source, const std::string& file);

// Limits on hostile input: a value longer than this is refused (no real manifest value is
// near it), as is a list or mapping with more entries; the whole manifest is bounded too.
inline constexpr std::size_t kMaxValueBytes = 4096;
inline constexpr std::size_t kMaxEntries = 10000;
inline constexpr std::size_t kMaxManifestBytes = 1 << 20;

// Throws diag::Error at the first byte of `source` that is not UTF-8 or that YAML cannot
// carry (a NUL), naming its line and column.
void check_encoding(const std::string& source, const std::string& file);

// True when every character of `s` is an ASCII letter or digit or one of `extra`.
inline bool only(std::string_view s, std::string_view extra) { return diag::only_ascii(s, extra); }

class Reader {
 public:
  Reader(std::string file, fs::path project_dir) : file_(std::move(file)), project_dir_(std::move(project_dir)) {}

  Location at(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    if (m.is_null()) return Location{file_, 0, 0};
    return Location{file_, m.line + 1, m.column + 1};
  }

  [[noreturn]] void fail(const YAML::Node& node, std::string message, std::string hint = {}) const {
    throw Error(std::move(message), at(node), std::move(hint));
  }

  static std::string kind(const YAML::Node& n) {
    switch (n.Type()) {
      case YAML::NodeType::Map:
        return "a mapping";
      case YAML::NodeType::Sequence:
        return "a list";
      case YAML::NodeType::Null:
        return "nothing";
      default:
        return diag::quote(n.Scalar());
    }
  }

  // Checks that `map` is a mapping with no duplicate or unknown keys, and returns its
  // entries keyed by name, each with the key node (for locations) and value node.
  std::vector<std::tuple<std::string, YAML::Node, YAML::Node>> entries(const YAML::Node& map, std::string_view section,
                                                                       std::span<const std::string_view> known) const {
    if (!map.IsMap()) fail(map, std::string(section) + " must be a mapping, found " + kind(map));
    std::vector<std::tuple<std::string, YAML::Node, YAML::Node>> out;
    if (map.size() > kMaxEntries)
      fail(map, std::string(section) + " has " + std::to_string(map.size()) + " entries, more than " +
                    std::to_string(kMaxEntries));
    std::map<std::string, Location> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(kv.first, "keys in " + std::string(section) + " must be plain names");
      const std::string key = kv.first.Scalar();
      check_text(kv.first, key, "a key in " + std::string(section));
      if (auto it = seen.find(key); it != seen.end())
        fail(kv.first, "duplicate key '" + key + "' (first set at line " + std::to_string(it->second.line) + ")",
             "remove one of the two '" + key + "' entries");
      seen.emplace(key, at(kv.first));
      if (!known.empty() && std::find(known.begin(), known.end(), key) == known.end()) {
        std::string where = section == "the manifest" ? std::string{} : " in " + std::string(section);
        fail(kv.first, "unknown key '" + key + "'" + where + diag::did_you_mean(key, known),
             "valid keys" + where + ": " + join(known));
      }
      out.emplace_back(key, kv.first, kv.second);
    }
    return out;
  }

  static std::string join(std::span<const std::string_view> items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::string(items[i]);
    return out;
  }

  Located<std::string> string(const YAML::Node& n, std::string_view key) const {
    if (!n.IsScalar()) fail(n, "'" + std::string(key) + "' must be a string, found " + kind(n));
    if (n.Scalar().empty()) fail(n, "'" + std::string(key) + "' must not be empty");
    check_text(n, n.Scalar(), key);
    return {n.Scalar(), at(n)};
  }

  // Refuses text that a single-line value cannot hold: more than kMaxValueBytes, or a
  // control character (a newline would start a new line in a generated file).
  void check_text(const YAML::Node& n, std::string_view text, std::string_view key) const {
    if (text.size() > kMaxValueBytes)
      fail(n,
           "'" + std::string(key) + "' is " + std::to_string(text.size()) + " bytes long, more than " +
               std::to_string(kMaxValueBytes),
           "shorten it; no manifest value needs that much");
    // yaml-cpp turns some escapes into bytes that are not UTF-8 ("\N" gives a bare 0x85).
    if (const std::size_t at = diag::invalid_utf8_at(text); at != std::string_view::npos)
      fail(n,
           "'" + std::string(key) + "' holds " + diag::describe_char_at(text, at) + " at byte " +
               std::to_string(at + 1) + ", which is not UTF-8",
           "write the character itself, or remove the escape that makes it");
    if (const std::size_t at = diag::control_at(text); at != std::string_view::npos)
      fail(
          n,
          "'" + std::string(key) + "' holds " + diag::describe_char_at(text, at) + " at byte " + std::to_string(at + 1),
          "manifest values are single lines of printable text; remove it");
  }

  Located<bool> boolean(const YAML::Node& n, std::string_view key) const {
    static const std::set<std::string> yes{"true", "True", "TRUE", "yes", "Yes", "on"};
    static const std::set<std::string> no{"false", "False", "FALSE", "no", "No", "off"};
    if (n.IsScalar()) {
      if (yes.count(n.Scalar())) return {true, at(n)};
      if (no.count(n.Scalar())) return {false, at(n)};
    }
    fail(n, "'" + std::string(key) + "' must be true or false, found " + kind(n));
  }

  Located<int> integer(const YAML::Node& n, std::string_view key, long lo, long hi) const {
    if (!n.IsScalar() || n.Scalar().empty() || n.Scalar().size() > 9 ||
        !std::all_of(n.Scalar().begin(), n.Scalar().end(), [](char c) { return c >= '0' && c <= '9'; }))
      fail(n, "'" + std::string(key) + "' must be a whole number, found " + kind(n));
    const long v = std::stol(n.Scalar());
    if (v < lo || v > hi)
      fail(n, "'" + std::string(key) + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                  ", found " + n.Scalar());
    return {static_cast<int>(v), at(n)};
  }

  // A string from a fixed set.
  Located<std::string> choice(const YAML::Node& n, std::string_view key,
                              std::span<const std::string_view> allowed) const {
    Located<std::string> s = string(n, key);
    if (std::find(allowed.begin(), allowed.end(), s.value) == allowed.end())
      fail(n, diag::quote(s.value) + " is not a valid " + std::string(key) + diag::did_you_mean(s.value, allowed),
           "use one of: " + join(allowed));
    return s;
  }

  std::vector<YAML::Node> list(const YAML::Node& n, std::string_view key) const {
    if (n.IsNull()) return {};
    if (!n.IsSequence()) fail(n, "'" + std::string(key) + "' must be a list, found " + kind(n));
    if (n.size() > kMaxEntries)
      fail(n, "'" + std::string(key) + "' has " + std::to_string(n.size()) + " items, more than " +
                  std::to_string(kMaxEntries));
    std::vector<YAML::Node> out;
    for (const auto& item : n) out.push_back(item);
    return out;
  }

  // A set written as a list: an item listed twice is refused with both lines.
  std::vector<Located<std::string>> string_list(const YAML::Node& n, std::string_view key) const {
    return strings(n, key, true);
  }
  // A command or its arguments: words in order, the same word as often as it is written
  // ("--epochs 10 --batch-size 10").
  std::vector<Located<std::string>> word_list(const YAML::Node& n, std::string_view key) const {
    return strings(n, key, false);
  }

  // A relative path that stays inside the project directory.
  Located<std::string> project_path(const YAML::Node& n, std::string_view key) const {
    Located<std::string> s = string(n, key);
    const fs::path p(s.value);
    if (p.is_absolute())
      fail(n, "'" + std::string(key) + "' must be relative to the project, found absolute path '" + s.value + "'",
           "write it relative to the directory holding the manifest");
    const fs::path norm = p.lexically_normal();
    if (norm.empty() || norm == "." || *norm.begin() == "..")
      fail(n, "'" + std::string(key) + "' points outside the project: '" + s.value + "'",
           "write a path inside the directory holding the manifest");
    s.value = norm.generic_string();
    return s;
  }

  const std::string& file() const { return file_; }
  const fs::path& project_dir() const { return project_dir_; }

 private:
  std::vector<Located<std::string>> strings(const YAML::Node& n, std::string_view key, bool unique) const {
    std::vector<Located<std::string>> out;
    std::map<std::string, int> seen;
    for (const YAML::Node& item : list(n, key)) {
      Located<std::string> s = string(item, std::string(key) + " item");
      if (auto it = seen.find(s.value); unique && it != seen.end())
        fail(item, diag::quote(s.value) + " is listed twice in '" + std::string(key) + "' (first at line " +
                       std::to_string(it->second) + ")");
      seen.emplace(s.value, s.where.line);
      out.push_back(std::move(s));
    }
    return out;
  }

  std::string file_;
  fs::path project_dir_;
};

}  // namespace envpin::manifest::detail

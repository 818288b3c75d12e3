// SPDX-License-Identifier: Apache-2.0
#include "sync/data.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "sync/remote.hpp"

namespace envpin::sync {

namespace fs = std::filesystem;

namespace {

std::uintmax_t bytes_under(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return S_ISREG(st.st_mode) ? static_cast<std::uintmax_t>(st.st_size) : 0;
  std::uintmax_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += static_cast<std::uintmax_t>(st.st_size);
  return total;
}

}  // namespace

std::vector<LeftData> data_left_out(const fs::path& root, const std::vector<manifest::Located<std::string>>& data,
                                    const scan::IgnoreRules& rules) {
  std::vector<LeftData> out;
  for (const auto& d : data) {
    struct stat st {};
    if (::lstat((root / d.value).c_str(), &st) != 0 || !rules.excluded(d.value)) continue;
    out.push_back({d.value, d.where, S_ISDIR(st.st_mode), bytes_under(root / d.value)});
  }
  std::sort(out.begin(), out.end(), [](const LeftData& a, const LeftData& b) { return a.path < b.path; });
  return out;
}

std::string data_warning(const LeftData& d, const std::string& target) {
  return diag::format_warning(
      std::string(d.directory ? "data directory " : "data file ") + d.path + " (" + diag::human_bytes(d.bytes) +
          ") is ignored (.gitignore, .dockerignore) and not sent, but the job needs it: " + "'envpin sync --data " +
          target + "' sends it, or put it on the server another way",
      d.where.line > 0 ? std::optional<diag::Location>(d.where) : std::nullopt);
}

scan::IgnoreRules with_data(scan::IgnoreRules rules, const std::vector<LeftData>& data) {
  for (const LeftData& d : data) rules.add("!" + d.path);
  return rules;
}

std::string data_check_script(const std::vector<std::string>& paths) {
  // "./" before each path: none is read as an option.
  std::string list;
  for (const std::string& p : paths) list += " " + sh_quote("./" + p);
  return "for p in" + list +
         "; do if [ ! -e \"$p\" ]; then printf 'missing %s\\n' \"${p#./}\"; "
         "elif [ -d \"$p\" ]; then [ -n \"$(ls -A \"$p\")\" ] || printf 'empty %s\\n' \"${p#./}\"; "
         "elif [ ! -s \"$p\" ]; then printf 'empty %s\\n' \"${p#./}\"; fi; done";
}

std::vector<std::pair<std::string, std::string>> data_check_result(const std::string& out,
                                                                   const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, std::string>> result;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    for (const char* what : {"missing", "empty"}) {
      const std::string prefix = std::string(what) + " ";
      if (line.starts_with(prefix) && std::find(paths.begin(), paths.end(), line.substr(prefix.size())) != paths.end())
        result.emplace_back(line.substr(prefix.size()), what);
    }
  return result;
}

}  // namespace envpin::sync

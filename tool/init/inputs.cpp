// SPDX-License-Identifier: Apache-2.0
// envpin init's inputs as files: where a name leads (links followed), whether that stays inside
// the project and away from secret files, and reading it without blocking, within the bounds.
#include <algorithm>
#include <string_view>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/parts.hpp"
#include "io/atomic_file.hpp"
#include "secrets/rules.hpp"

namespace envpin::init::detail {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;

// The offset of the first Unicode bidirectional control in UTF-8 `s` (U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069: "Trojan Source", CVE-2021-42574), or npos.
std::size_t bidi_at(std::string_view s) {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    const auto b0 = static_cast<unsigned char>(s[i]), b1 = static_cast<unsigned char>(s[i + 1]);
    if (b0 == 0xD8 && b1 == 0x9C) return i;
    if (b0 != 0xE2 || i + 2 >= s.size()) continue;
    const auto b2 = static_cast<unsigned char>(s[i + 2]);
    if (b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE))) return i;
    if (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9) return i;
  }
  return std::string_view::npos;
}

// Whether `path` is `root` or under it (both canonical).
bool inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p)
    if (p == path.end() || *p != *r) return false;
  return true;
}

fs::path project_root(const fs::path& file, const Draft& d) {
  if (!d.root.empty()) return d.root;
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(file, ec).parent_path(), ec);
}

fs::path resolve_input(const fs::path& file, const fs::path& root, const std::optional<Location>& at,
                       const std::string& named, const std::string& verb, bool must_exist) {
  const std::string shown = file.generic_string();
  // The line that names it, or the input itself.
  const Location where = at ? *at : Location{shown, 0, 0};
  const std::string subject = at ? "the line " + verb + " " + quote_input(named) + ", which" : "it";
  std::error_code ec;
  const fs::path lexical = fs::absolute(file, ec).lexically_normal();
  const fs::path resolved = fs::weakly_canonical(lexical, ec);
  if (ec || !inside(resolved, root))
    throw Error(subject + (inside(lexical, root) ? " leads (through a link) outside the project's directory"
                                                 : " is outside the project's directory"),
                where,
                at ? "envpin init reads the project's own files only: copy it into the project"
                   : "run envpin init in the project's directory (or -o into it) and name files inside it");
  // Secret by the name it was given, or by where it leads.
  const fs::path as_named = inside(lexical, root) ? lexical.lexically_relative(root) : file.filename();
  const std::string as_resolved = resolved.lexically_relative(root).generic_string();
  if (secrets::is_secret_path(as_named.generic_string())) {
    if (at)
      throw Error(subject + " is a secret file" + (verb == "includes" ? ", as a requirements file" : ""), where,
                  "remove the line; envpin init reads requirements files only");
    throw Error(quote_input(file.filename().generic_string()) + " is a secret file; envpin init does not read it",
                where, "name the project's dependency file");
  }
  if (secrets::is_secret_path(as_resolved)) {
    if (at)
      throw Error(subject + " leads to the secret file " + quote_input(as_resolved), where,
                  "remove the line; envpin init reads requirements files only");
    throw Error(diag::printable(file.filename().generic_string()) + " leads to the secret file " +
                    quote_input(as_resolved) + "; envpin init does not read it",
                where, "name the project's dependency file, not a link to a secret");
  }
  if (!must_exist) return resolved;
  const fs::file_status st = fs::status(resolved, ec);
  if (!fs::exists(st))
    throw Error(at ? subject + " does not exist" : "cannot read " + quote_input(shown) + ": it does not exist", where,
                at ? "a path in an -r line is relative to the file that holds it" : "name an existing file");
  if (!fs::is_regular_file(st))
    throw Error(at ? subject + " is not a regular file" : "cannot read " + quote_input(shown) + ": not a regular file",
                where,
                at ? "an -r line names a requirements file"
                   : "name a requirements.txt, environment.yml, pyproject.toml or Dockerfile");
  return resolved;
}

std::string read_input(const fs::path& resolved, const fs::path& file) {
  const std::string shown = file.generic_string();
  std::string text;
  switch (io::read_regular(resolved, kMaxInput, text)) {
    case io::ReadStatus::ok:
      break;
    case io::ReadStatus::too_large:
      throw Error(diag::printable(shown) + " is larger than 1 MiB", Location{shown, 0, 0},
                  "name the project's dependency file, not a data file");
    case io::ReadStatus::missing:
    case io::ReadStatus::not_regular:
      throw Error("cannot read " + quote_input(shown) + ": not a regular file", Location{shown, 0, 0},
                  "name a requirements.txt, environment.yml, pyproject.toml or Dockerfile");
    case io::ReadStatus::unreadable:
      throw Error("cannot read " + quote_input(shown), Location{shown, 0, 0}, "check its permissions");
  }
  if (text.find('\0') != std::string::npos)
    throw Error(diag::printable(shown) + " holds a NUL byte: it is not a text file", Location{shown, 0, 0},
                "name the project's dependency file");
  if (const std::size_t at = bidi_at(text); at != std::string::npos) {
    const std::size_t line_start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
    throw Error(
        "the line holds " + diag::describe_char_at(text, at) + ": the line would read differently from what it holds",
        Location{shown,
                 static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1,
                 static_cast<int>(at - line_start) + 1},
        "remove it");
  }
  return text;
}

std::string read_counted(const fs::path& resolved, const fs::path& file, Draft& d, const std::optional<Location>& at) {
  const Location where = at ? *at : Location{file.generic_string(), 0, 0};
  if (d.reading.read.size() > kMaxInputFiles)
    throw Error(quote_input(file.generic_string()) + " would be input file " + std::to_string(kMaxInputFiles + 1) +
                    "; envpin init reads at most " + std::to_string(kMaxInputFiles),
                where, "name the project's dependency files, not every file");
  std::string text = read_input(resolved, file);
  d.reading.bytes += text.size();
  if (d.reading.bytes > kMaxInputBytes)
    throw Error(quote_input(file.generic_string()) + " takes the inputs past " + std::to_string(kMaxInputBytes >> 20) +
                    " MiB together",
                where, "name the project's dependency files, not data files");
  return text;
}

std::optional<std::string> open_input(const fs::path& file, Draft& d, Includes& inc) {
  inc.root = project_root(file, d);
  const fs::path resolved = resolve_input(file, inc.root, std::nullopt, file.generic_string(), "");
  if (!d.reading.read.insert(resolved.generic_string()).second) return std::nullopt;
  inc.chain = {resolved};
  return read_counted(resolved, file, d, std::nullopt);
}

}  // namespace envpin::init::detail

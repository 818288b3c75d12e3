// SPDX-License-Identifier: Apache-2.0
// What envpin init's readers share (tool/init/init.cpp: requirements files and the draft;
// environment.cpp: a working environment; inputs.cpp: the inputs as files; conda.cpp,
// pyproject.cpp, dockerfile.cpp: the other inputs; system.cpp: --source system). Internal to
// tool/init.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/error.hpp"
#include "init/init.hpp"

namespace envpin::init::detail {

// Two inputs that ask for one distribution differently (add_package); the Dockerfile reader turns
// it into a note, as the other inputs win over a Dockerfile.
class Conflict : public diag::Error {
 public:
  using diag::Error::Error;
};

// The files being read for one input: the project directory they must stay in and the chain of
// -r includes (resolved paths), for cycles and the depth cap.
struct Includes {
  std::filesystem::path root;
  std::vector<std::filesystem::path> chain;
};

// The most an input file may hold.
inline constexpr std::size_t kMaxInput = 1 << 20;

// The offset of the first Unicode bidirectional control in UTF-8 `s` (U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069: "Trojan Source", CVE-2021-42574), or npos.
std::size_t bidi_at(std::string_view s);

// Whether `path` is `root` or under it (both canonical).
bool inside(const std::filesystem::path& path, const std::filesystem::path& root);

// The project directory an input must stay in: d.root, or the input's own directory.
std::filesystem::path project_root(const std::filesystem::path& file, const Draft& d);

// `file` with its links followed, checked before a byte of it is read: inside `root`, not a
// secret file by the name it was given (`named`) or by where it leads. `at` is the line that
// names it (an -r or -c line; nullopt for an input itself), `verb` what that line does with it
// ("includes"). With `must_exist`, also an existing regular file. Throws diag::Error at `at`.
std::filesystem::path resolve_input(const std::filesystem::path& file, const std::filesystem::path& root,
                                    const std::optional<diag::Location>& at, const std::string& named,
                                    const std::string& verb, bool must_exist = true);
// The text of a resolved input (shown as `file`): a regular file of at most 1 MiB without NUL,
// opened without following links or blocking. Throws diag::Error.
std::string read_input(const std::filesystem::path& resolved, const std::filesystem::path& file);
// read_input, counted against kMaxInputBytes of all of `d`'s inputs together (refused at `at`, the
// line that names the file, or at the file).
std::string read_counted(const std::filesystem::path& resolved, const std::filesystem::path& file, Draft& d,
                         const std::optional<diag::Location>& at);
// An input named by the caller, resolved, checked and read (`inc` gets its root and chain);
// nullopt when it was read already. Throws diag::Error.
std::optional<std::string> open_input(const std::filesystem::path& file, Draft& d, Includes& inc);

// "requirements.txt:12": where a value came from.
std::string where(const std::filesystem::path& file, int line);
std::string trim(std::string s);
// diag::quote of input text, its credentials replaced by "<credential>" first (a cut never
// leaves half of one).
std::string quote_input(std::string_view text);
// An index URL without its credentials (userinfo, a ?token= parameter), which are a note, never
// a value.
std::string index_url(const std::string& url, const std::string& from, Draft& d);
// Adds a note once, any credential in it replaced by "<credential>"; past kMaxNotes, counts it.
void note(Draft& d, const std::string& text);
// The lowest CPython 3 minor (3.8 on) a PEP 440 specifier set allows ("3.10" for ">=3.10,<3.13");
// "" when none does or it is not one.
std::string lowest_python(const std::string& spec);
// python.version taken as the lowest a range allows (`from` says which input): a note when that
// Python is past its end of life, so the draft does not pin a dead interpreter without saying so.
void note_python_floor(Draft& d, const std::string& minor, const std::string& from);
// Sets a single value, refusing a second, different one with both origins named.
void set_once(std::optional<Value>& slot, Value v, const std::string& what);
// One logical line of a requirements file (or of a conda environment's pip: list); `inc` holds
// the project directory and the files being read, for -r cycles and depth.
void requirement_line(const std::string& raw, const std::filesystem::path& file, int line, Draft& d, Includes& inc,
                      const std::string& from_suffix = {});

// "11.3": digits, one dot, digits (what a conda CUDA package's version must be to name a line).
bool is_cuda_minor(std::string_view v);
// Dotted numbers only: "11", "11.7", "11.7.0".
bool is_dotted_release(std::string_view v);

// The readers' bodies; init.hpp's read_* call them and redact what they throw.
void read_requirements_unredacted(const std::filesystem::path& file, Draft& d);
void read_conda_unredacted(const std::filesystem::path& file, Draft& d);
void read_dockerfile_unredacted(const std::filesystem::path& file, Draft& d);
void read_pyproject_unredacted(const std::filesystem::path& file, Draft& d, const std::vector<std::string>& extras);

// The torch index of CUDA `cuda`'s variant for a pinned torch in `d` (from `cuda_from`); an error
// when that torch release never had wheels for that CUDA version.
void torch_variant_index(Draft& d, const std::string& cuda, const std::string& cuda_from);

}  // namespace envpin::init::detail

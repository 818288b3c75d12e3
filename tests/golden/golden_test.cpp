// SPDX-License-Identifier: Apache-2.0
// Golden tests: tests/golden/cases/<case>/ holds envpin.yaml (and any file it names, and an
// envpin.lock for a locked case, a push.json for envpin push's record); its expected/ folder holds the exact artifacts
// (and for a lock with wheels, requirements.lock), a script's library (templates/lib/) named by one line in place of
// its text. ENVPIN_UPDATE_GOLDEN=1 rewrites expected/.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "io/atomic_file.hpp"
#include "lock/lock.hpp"
#include "manifest/keys.hpp"
#include "manifest/load.hpp"
#include "render/render.hpp"
#include "resolve/environment.hpp"
#include "workflow/push.hpp"

namespace envpin {
namespace {

namespace fs = std::filesystem;

const fs::path kCases = fs::path(ENVPIN_SOURCE_DIR) / "tests" / "golden" / "cases";

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kCases))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::map<std::string, std::string> files_under(const fs::path& root) {
  std::map<std::string, std::string> files;
  if (!fs::exists(root)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[e.path().lexically_relative(root).generic_string()] = *io::read_file(e.path());
  return files;
}

std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "same lines, different line endings";
    if (la != lb || ha != hb)
      return "line " + std::to_string(line) + ":\n  expected: " + (ha ? la : "<end of file>") +
             "\n  actual:   " + (hb ? lb : "<end of file>");
  }
}

// The environment of a case: resolved from the manifest, with the case's lock when it has one
// (which must belong to the manifest and be intact, as generate requires).
resolve::Environment environment(const fs::path& dir, const manifest::Manifest& m) {
  resolve::Environment env = resolve::resolve(m);
  if (const auto text = io::read_file(dir / "envpin.lock")) {
    env.lock = lock::parse(*text, "envpin.lock");
    EXPECT_EQ(env.lock->inputs_digest, lock::inputs_digest(m)) << "the case's lock is stale";
    EXPECT_EQ(env.lock->lock_digest, lock::compute_lock_digest(*env.lock)) << "the case's lock was edited";
    resolve::check_locked_python(m, *env.lock);
  }
  // envpin push's record, as generate reads it from .envpin/push.json (judged current).
  if (const auto text = io::read_file(dir / "push.json")) {
    const workflow::PushRecord r = workflow::parse_push_record(*text, "push.json");
    env.pushed = resolve::PushedImage{r.reference, workflow::push_repository(r.reference), r.digest, ""};
  }
  return env;
}

// A generated script holds its libraries (templates/lib/NAME) one after another, each after its
// start marker, the last one closed by the end marker, byte for byte. The cases keep the values and
// the calls around them; each library itself is checked here against its source, so a change to a
// library changes no case.
constexpr std::string_view kLibraryStart = "# --- envpin ";
constexpr std::string_view kLibraryFrom = " library: templates/lib/";
constexpr std::string_view kLibraryEnd = "# --- end of the library ---\n";

std::string without_library(const std::string& path, const std::string& text) {
  std::string out;
  std::size_t at = 0;
  for (;;) {
    const auto start = text.find(kLibraryStart, at);
    if (start == std::string::npos) break;
    const auto from = text.find(kLibraryFrom, start);
    const auto eol = text.find('\n', start);
    if (from == std::string::npos || eol == std::string::npos || from > eol) break;
    const std::string name = text.substr(from + kLibraryFrom.size(), text.find(',', from) - from - kLibraryFrom.size());
    const auto next = text.find(kLibraryStart, eol);
    const auto end = std::min(next, text.find(kLibraryEnd, eol));
    if (end == std::string::npos) {
      ADD_FAILURE() << path << ": the library " << name << " has no end marker";
      return text;
    }
    // In a YAML block scalar (kubernetes.yaml's entry script) every line but an empty one is
    // indented as the marker is.
    const auto line_start = text.rfind('\n', start);
    const std::string indent = text.substr(line_start == std::string::npos ? 0 : line_start + 1,
                                           start - (line_start == std::string::npos ? 0 : line_start + 1));
    std::string body;
    std::istringstream lines(text.substr(eol + 1, end - eol - 1 - indent.size()));
    for (std::string line; std::getline(lines, line);)
      body += (line.starts_with(indent) ? line.substr(indent.size()) : line) + "\n";
    const auto source = io::read_file(fs::path(ENVPIN_SOURCE_DIR) / "templates" / "lib" / name);
    EXPECT_TRUE(source) << name;
    EXPECT_TRUE(source && body == *source)
        << path << ": the library between the markers is not templates/lib/" << name << " byte for byte";
    out += text.substr(at, eol + 1 - at) + indent + "# (templates/lib/" + name + ")\n";
    at = end - indent.size();
  }
  return out + text.substr(at);
}

// What `generate` writes, plus requirements.lock for a lock with wheels (what pip installs).
std::vector<render::Artifact> outputs(const manifest::Manifest& m, const resolve::Environment& env) {
  std::vector<render::Artifact> out = render::render_all(m, env);
  if (env.lock && !env.lock->python.empty())
    out.push_back({"requirements.lock", lock::requirements_lock(*env.lock), false});
  return out;
}

class Golden : public testing::TestWithParam<std::string> {};

TEST_P(Golden, ArtifactsMatchByteForByte) {
  const fs::path dir = kCases / GetParam();
  const manifest::Manifest m = manifest::load((dir / "envpin.yaml").string());
  const std::vector<render::Artifact> artifacts = outputs(m, environment(dir, m));
  const fs::path expected_dir = dir / "expected";

  // The smoke program is written verbatim from cmake/smoke/ (the CMake target's source): each
  // case expects those bytes instead of keeping a copy.
  std::map<std::string, std::string> smoke_sources;
  if (m.cuda)
    smoke_sources = {{m.outputs.smoke_source.value, "cmake/smoke/envpin_smoke.cu"},
                     {m.outputs.smoke_header.value, "cmake/smoke/envpin_smoke_sha256.h"}};

  // envpin.yaml's JSON Schema is the same for every manifest (e2e.artifacts validates the
  // examples against it): each case expects it at its path instead of keeping a copy.
  const std::string schema_path = m.outputs.schema.value;

  if (const char* update = std::getenv("ENVPIN_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    fs::remove_all(expected_dir);
    for (const auto& a : artifacts)
      if (!smoke_sources.contains(a.path) && a.path != schema_path)
        io::write_atomic(expected_dir / a.path, without_library(a.path, a.bytes), a.executable);
    GTEST_SKIP() << "rewrote " << expected_dir;
  }

  std::map<std::string, std::string> expected = files_under(expected_dir);
  for (const auto& [path, source] : smoke_sources) {
    const auto bytes = io::read_file(fs::path(ENVPIN_SOURCE_DIR) / source);
    ASSERT_TRUE(bytes && !bytes->empty()) << source;
    expected[path] = *bytes;
  }
  expected[schema_path] = manifest::json_schema();
  std::map<std::string, std::string> actual;
  for (const auto& a : artifacts) actual[a.path] = without_library(a.path, a.bytes);
  std::vector<std::string> want_paths, got_paths;
  for (const auto& [p, _] : expected) want_paths.push_back(p);
  for (const auto& [p, _] : actual) got_paths.push_back(p);
  ASSERT_EQ(got_paths, want_paths) << "the set of generated paths differs";
  for (const auto& [path, bytes] : expected)
    EXPECT_EQ(actual[path], bytes) << path << ": " << first_difference(bytes, actual[path])
                                   << "\n(run with ENVPIN_UPDATE_GOLDEN=1 to accept)";
}

TEST_P(Golden, RenderingIsDeterministic) {
  const fs::path dir = kCases / GetParam();
  const manifest::Manifest m = manifest::load((dir / "envpin.yaml").string());
  const auto first = outputs(m, environment(dir, m));
  const manifest::Manifest again = manifest::load((dir / "envpin.yaml").string());
  const auto second = outputs(again, environment(dir, again));
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].bytes, second[i].bytes);
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, testing::ValuesIn(case_names()), [](const auto& info) {
  std::string n = info.param;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
});

}  // namespace
}  // namespace envpin

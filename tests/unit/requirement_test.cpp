// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "manifest/requirement.hpp"

namespace envpin::manifest {
namespace {

Requirement parse_ok(std::string_view text) {
  std::string error;
  std::size_t column = 0;
  auto r = parse_requirement(text, error, column);
  EXPECT_TRUE(r) << text << ": " << error;
  return r.value_or(Requirement{});
}

std::string parse_error(std::string_view text) {
  std::string error;
  std::size_t column = 0;
  auto r = parse_requirement(text, error, column);
  EXPECT_FALSE(r) << text;
  return error + " @" + std::to_string(column);
}

TEST(Requirement, ParsesPep508Subset) {
  Requirement r = parse_ok("Typing_Extensions [Foo, bar] >= 4.0 , < 5 ; python_version < '3.12'");
  EXPECT_EQ(r.name, "Typing_Extensions");
  EXPECT_EQ(r.normalized, "typing-extensions");
  EXPECT_EQ(r.text(), "typing-extensions[bar,foo]>=4.0,<5; python_version < '3.12'");
  EXPECT_FALSE(r.pinned());
  EXPECT_EQ(parse_ok("torch==2.4.1+cu124").pinned(), "2.4.1+cu124");
  EXPECT_FALSE(parse_ok("numpy==1.26.*").pinned());
  EXPECT_EQ(parse_ok("requests (>=2.31)").text(), "requests>=2.31");
  EXPECT_EQ(parse_ok("pkg~=1.4.2").text(), "pkg~=1.4.2");
}

TEST(Requirement, Errors) {
  EXPECT_EQ(parse_error("numpy=1.26"), "'=' is not a version operator; use '==' @5");
  EXPECT_EQ(parse_error("numpy==one"), "invalid version 'one' for 'numpy' @7");
  EXPECT_EQ(parse_error("numpy>=1.*"), "invalid version '1.*' for 'numpy' @7");
  EXPECT_EQ(parse_error("pkg~=1"), "'~=1' needs at least two version parts, e.g. '~=1.0' @5");
  EXPECT_EQ(parse_error("-e ."), "an option, not a package requirement @0");
  EXPECT_EQ(parse_error("pkg @ https://x/y.whl"),
            "direct URL requirements are not supported; pin a version with '==' @4");
  EXPECT_EQ(parse_error("pkg[a"), "expected ',' or ']' in extras @5");
  EXPECT_EQ(parse_error("_pkg"), "package name '_pkg' must start and end with a letter or digit @0");
  EXPECT_EQ(parse_error("pkg ; "), "expected an environment marker after ';' @6");
}

// Markers by PEP 508's grammar (marker_or, marker_and, marker_expr; the spec's variables, quoted
// strings, version comparisons, in and not in, parentheses).
TEST(Requirement, MarkersFollowPep508Grammar) {
  for (const char* m : {"python_version < '3.12'", "python_version>=\"3.8\"and os_name=='posix'",
                        "(sys_platform == 'linux' or sys_platform == 'darwin') and platform_machine != 'arm64'",
                        "'linux' in sys_platform", "platform_machine not in 'arm64 aarch64'", "extra == \"gpu\"",
                        "implementation_name === 'cpython'", "python_full_version ~= '3.8.1'",
                        "platform_release >= '5' or platform_version == '#1 SMP'",
                        "python_implementation == 'CPython' and os.name == 'posix'", "'3.8' < python_version",
                        "((python_version < '3.9'))"})
    EXPECT_EQ(parse_ok("pkg; " + std::string(m)).marker, m) << m;
  EXPECT_EQ(parse_error("numpy; rm -rf /"), "unknown marker variable 'rm' @7");
  EXPECT_EQ(parse_error("numpy; python_version == 3.8"), "expected a marker variable or a quoted string @25");
  EXPECT_EQ(parse_error("numpy; python_version <> '3'"), "expected a marker variable or a quoted string @23");
  EXPECT_EQ(parse_error("numpy; python_version"),
            "expected a marker operator (<, <=, ==, !=, >=, >, ~=, ===, in, not in) @21");
  EXPECT_EQ(parse_error("numpy; python_version < '3.8' and"), "expected a marker variable or a quoted string @33");
  EXPECT_EQ(parse_error("numpy; (python_version < '3.8'"), "expected ')' @30");
  EXPECT_EQ(parse_error("numpy; python_version < '3.8')"), "unexpected ')' in marker @29");
  EXPECT_EQ(parse_error("numpy; python_version < '3.8"), "a quoted string is not closed @24");
  EXPECT_EQ(parse_error("numpy; python_version < '3\\8'"), "'\\' is not allowed in a marker string @26");
  EXPECT_EQ(parse_error("numpy; os_name == 'posix' or $(id)"), "expected a marker variable or a quoted string @29");
  EXPECT_EQ(parse_error("numpy; " + std::string(40, '(') + "python_version < '3'" + std::string(40, ')')),
            "markers nest more than 32 parentheses deep @39");
}

TEST(Requirement, Versions) {
  for (const char* v : {"1", "1.26", "2.4.1", "1.0rc1", "1.0.post2", "1.0.dev3", "1!2.0", "2.4.1+cu124", "v1.0"})
    EXPECT_TRUE(is_pep440_version(v)) << v;
  for (const char* v : {"", "x", "1.", "1..2", "1.0-beta-x", "latest"}) EXPECT_FALSE(is_pep440_version(v)) << v;
  EXPECT_TRUE(is_pep440_version("1.2.*", true));
  EXPECT_FALSE(is_pep440_version("1.2.*", false));
  for (const char* v : {"3.8", "3.11", "3.12.7", "3.13.0"}) EXPECT_TRUE(is_python_version(v)) << v;
  for (const char* v : {"3", "2.7", "3.x", "3.11.9.1", "03.11"}) EXPECT_FALSE(is_python_version(v)) << v;
  for (const char* v : {"535", "535.104", "535.104.05", "580.65.06"}) EXPECT_TRUE(is_driver_version(v)) << v;
  for (const char* v : {"latest", "53", "535.", "535.104.05.1"}) EXPECT_FALSE(is_driver_version(v)) << v;
  EXPECT_TRUE(is_deb_name("libgl1"));
  EXPECT_TRUE(is_deb_name("g++"));
  EXPECT_FALSE(is_deb_name("Git"));
  EXPECT_TRUE(is_deb_version("1:2.39.5-0+deb12u2"));
  EXPECT_FALSE(is_deb_version("latest"));
}

}  // namespace
}  // namespace envpin::manifest

// SPDX-License-Identifier: Apache-2.0
// PEP 508 markers as envpin init evaluates them for the image (CPython on linux/amd64), and the
// choice between a requirement's alternatives that rests on them.
#include <gtest/gtest.h>

#include "init/init.hpp"
#include "init/marker.hpp"

namespace envpin::init {
namespace {

TEST(InitMarker, PythonVersionComparisons) {
  EXPECT_EQ(marker_holds("python_version < '3.10'", "3.9"), true);
  EXPECT_EQ(marker_holds("python_version < '3.10'", "3.10"), false);
  EXPECT_EQ(marker_holds("python_version<\"3.10\"", "3.11"), false);
  // Compared as versions, not strings: "3.9" < "3.10".
  EXPECT_EQ(marker_holds("python_version > '3.9'", "3.10"), true);
  EXPECT_EQ(marker_holds("python_version >= '3.8'", "3.12"), true);
  EXPECT_EQ(marker_holds("python_version == '3.11'", "3.11.4"), true);
  EXPECT_EQ(marker_holds("python_version == '3.1'", "3.10"), false);
  EXPECT_EQ(marker_holds("python_version != '3.11'", "3.11"), false);
  EXPECT_EQ(marker_holds("python_version == '3.*'", "3.12"), true);
  EXPECT_EQ(marker_holds("python_version ~= '3.8'", "3.12"), true);
  // The literal on the left.
  EXPECT_EQ(marker_holds("'3.10' <= python_version", "3.10"), true);
  // The patch release is the base image's unless the manifest names one.
  EXPECT_EQ(marker_holds("python_full_version >= '3.8.1'", "3.8"), std::nullopt);
  EXPECT_EQ(marker_holds("python_full_version >= '3.8.1'", "3.8.10"), true);
}

TEST(InitMarker, PlatformIsLinuxAmd64) {
  EXPECT_EQ(marker_holds("sys_platform == 'linux'", "3.11"), true);
  EXPECT_EQ(marker_holds("sys_platform == \"darwin\"", "3.11"), false);
  EXPECT_EQ(marker_holds("platform_system != 'Windows'", "3.11"), true);
  EXPECT_EQ(marker_holds("platform_machine == 'aarch64'", "3.11"), false);
  EXPECT_EQ(marker_holds("os_name == 'nt'", "3.11"), false);
  EXPECT_EQ(marker_holds("'linux' in sys_platform", "3.11"), true);
  EXPECT_EQ(marker_holds("'win' not in sys_platform", "3.11"), true);
  EXPECT_EQ(marker_holds("os.name == 'posix'", "3.11"), true);  // the legacy spelling
  EXPECT_EQ(marker_holds("implementation_name == 'pypy'", "3.11"), false);
}

TEST(InitMarker, BooleanLogicIsThreeValued) {
  EXPECT_EQ(marker_holds("python_version >= '3.9' and sys_platform == 'linux'", "3.10"), true);
  EXPECT_EQ(marker_holds("python_version < '3.9' or sys_platform == 'darwin'", "3.10"), false);
  EXPECT_EQ(marker_holds("(python_version < '3.9' or sys_platform == 'linux') and os_name == 'posix'", "3.10"), true);
  // An extra cannot be told: unknown, unless the other side decides.
  EXPECT_EQ(marker_holds("extra == 'gpu'", "3.10"), std::nullopt);
  EXPECT_EQ(marker_holds("extra == 'gpu' and sys_platform == 'win32'", "3.10"), false);
  EXPECT_EQ(marker_holds("extra == 'gpu' or sys_platform == 'linux'", "3.10"), true);
  EXPECT_EQ(marker_holds("platform_release >= '5'", "3.10"), std::nullopt);
}

TEST(InitMarker, MalformedIsUnknown) {
  for (const char* bad :
       {"", "python_version", "python_version <", "python_version < '3.10", "(python_version < '3.10'",
        "python_version < '3.10')", "python_version <> '3'", "and", "python_version < '3.1' and"})
    EXPECT_EQ(marker_holds(bad, "3.10"), std::nullopt) << bad;
  EXPECT_EQ(marker_holds(std::string(100000, '('), "3.10"), std::nullopt);
}

std::vector<std::string> values(const Draft& d) {
  std::vector<std::string> out;
  for (const Value& v : d.packages) out.push_back(v.value);
  return out;
}

// A marker is PEP 508's grammar or no marker: "numpy; rm -rf /" is not a requirement, and is left
// out with a note as any line init cannot read.
TEST(InitMarker, OnlyPep508MarkersMakeARequirement) {
  Draft d;
  add_package(d, "numpy; rm -rf /", "requirements.txt:1");
  add_package(d, "scipy; python_version >= '3.8' and (sys_platform == \"linux\" or os_name != 'nt')",
              "requirements.txt:2");
  add_package(d, "torch; python_version == 3.8", "requirements.txt:3");
  add_package(d, "attrs; $(touch x) == 'x'", "requirements.txt:4");
  add_package(d, "rich; shell == 'bash'", "requirements.txt:5");
  EXPECT_EQ(values(d), std::vector<std::string>{
                           "scipy; python_version >= '3.8' and (sys_platform == \"linux\" or os_name != 'nt')"});
  ASSERT_EQ(d.notes.size(), 4u);
  EXPECT_EQ(d.notes[0],
            "requirements.txt:1: 'numpy; rm -rf /' is not a requirement envpin reads (unknown marker variable 'rm'): "
            "left out");
  EXPECT_EQ(d.notes[3],
            "requirements.txt:5: 'rich; shell == 'bash'' is not a requirement envpin reads (unknown marker variable "
            "'shell'): left out");
}

TEST(InitSettle, KeepsTheAlternativeForTheImagesPython) {
  Draft d;
  d.python = Value{"3.11", "environment.yml:3"};
  add_package(d, "numpy", "requirements.txt:1");
  add_package(d, "jsonargparse>=4.31,<=4.32.1; python_version<'3.10'", "pyproject.toml:6");
  add_package(d, "jsonargparse>=4.37; python_version>'3.9'", "pyproject.toml:7");
  add_package(d, "pywin32; sys_platform == 'win32'", "requirements.txt:2");
  ASSERT_EQ(d.packages.size(), 4u);
  settle(d);
  EXPECT_EQ(values(d), (std::vector<std::string>{"numpy", "jsonargparse>=4.37; python_version>'3.9'",
                                                 "pywin32; sys_platform == 'win32'"}));
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("pyproject.toml:6: 'jsonargparse>=4.31,<=4.32.1; python_version<'3.10'' left out"),
            std::string::npos)
      << d.notes[0];
  EXPECT_NE(d.notes[0].find("holds for Python 3.11 on linux/amd64"), std::string::npos) << d.notes[0];

  // The same inputs for Python 3.9 keep the other one.
  Draft older;
  older.python = Value{"3.9", "environment.yml:3"};
  add_package(older, "jsonargparse>=4.31,<=4.32.1; python_version<'3.10'", "pyproject.toml:6");
  add_package(older, "jsonargparse>=4.37; python_version>'3.9'", "pyproject.toml:7");
  settle(older);
  EXPECT_EQ(values(older), (std::vector<std::string>{"jsonargparse>=4.31,<=4.32.1; python_version<'3.10'"}));
}

TEST(InitSettle, UndecidableKeepsTheFirstAndNoneHoldingLeavesAllOut) {
  Draft d;
  add_package(d, "x==1; extra == 'a'", "requirements.txt:1");
  add_package(d, "x==2; extra == 'b'", "requirements.txt:2");
  add_package(d, "y==1; sys_platform == 'darwin'", "requirements.txt:3");
  add_package(d, "y==2; sys_platform == 'win32'", "requirements.txt:4");
  settle(d);
  EXPECT_EQ(values(d), (std::vector<std::string>{"x==1; extra == 'a'"}));
  ASSERT_EQ(d.notes.size(), 3u);
  EXPECT_NE(d.notes[0].find("the first, 'x==1; extra == 'a'' (requirements.txt:1), is kept"), std::string::npos)
      << d.notes[0];
  EXPECT_NE(d.notes[1].find("y==1; sys_platform == 'darwin'' left out: its marker does not hold"), std::string::npos)
      << d.notes[1];
  EXPECT_NE(d.notes[2].find("y==2; sys_platform == 'win32'' left out: its marker does not hold"), std::string::npos)
      << d.notes[2];
}

}  // namespace
}  // namespace envpin::init

// SPDX-License-Identifier: Apache-2.0
// Which torch minors a specifier allows (PEP 440 on release versions), and the pin that fixes the
// one the CUDA policy chose.
#include "resolve/torch_range.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/process.hpp"

namespace envpin::resolve {
namespace {

TEST(TorchRange, MinorsASpecifierAllows) {
  EXPECT_TRUE(minor_satisfies("2.9", ""));
  EXPECT_TRUE(minor_satisfies("2.7", ">=2.7"));
  EXPECT_FALSE(minor_satisfies("2.6", ">=2.7"));
  EXPECT_TRUE(minor_satisfies("2.7", ">=2.7.1"));  // 2.7.1 and later patches
  EXPECT_FALSE(minor_satisfies("2.8", "<2.8"));
  EXPECT_TRUE(minor_satisfies("2.7", "<2.8"));
  EXPECT_TRUE(minor_satisfies("2.7", "<=2.7.0"));
  EXPECT_FALSE(minor_satisfies("2.7", ">=2.8"));
  EXPECT_FALSE(minor_satisfies("2.7", ">2.7.1,<2.7.2"));
  EXPECT_TRUE(minor_satisfies("2.4", "~=2.4.1"));  // >=2.4.1, ==2.4.*
  EXPECT_FALSE(minor_satisfies("2.5", "~=2.4.1"));
  EXPECT_TRUE(minor_satisfies("2.9", "~=2.4"));  // >=2.4, ==2.*
  EXPECT_FALSE(minor_satisfies("2.8", "!=2.8.*"));
  EXPECT_TRUE(minor_satisfies("2.8", "!=2.8.0"));  // 2.8.1 is allowed
  EXPECT_TRUE(minor_satisfies("2.4", "==2.4.*"));
  EXPECT_FALSE(minor_satisfies("2.4", "==2.5.*"));
  EXPECT_TRUE(minor_satisfies("2.10", ">=2.9, <2.11"));
  EXPECT_FALSE(minor_satisfies("2.10", ">2.9,<2.10"));
}

TEST(TorchRange, PinAddsTheChosenMinor) {
  std::string error;
  std::size_t column = 0;
  const auto r = manifest::parse_requirement("torch[opt]>=2.7; platform_machine == 'x86_64'", error, column);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(pin_torch_range(*r, "2.9").text(), "torch[opt]>=2.7,==2.9.*; platform_machine == 'x86_64'");
  EXPECT_EQ(pin_torch_range(*r, "").text(), r->text());
  const auto bare = manifest::parse_requirement("torch", error, column);
  EXPECT_EQ(pin_torch_range(*bare, "2.14").text(), "torch==2.14.*");
  const auto other = manifest::parse_requirement("numpy>=1.26", error, column);
  EXPECT_EQ(pin_torch_range(*other, "2.9").text(), "numpy>=1.26");
}

}  // namespace
}  // namespace envpin::resolve

namespace envpin::resolve {
namespace {

// One file of PEP 440 cases that both implementations must pass (issue 35): this one on release
// versions, and check_env.sh's awk on every row, run by the system's awk as the script runs it.
TEST(Pep440, BothImplementationsAgreeWithTheSharedCases) {
  const std::filesystem::path root(ENVPIN_SOURCE_DIR);
  const std::string cases = *io::read_file(root / "tests/data/pep440_cases.tsv");
  const std::string tmpl = *io::read_file(root / "templates/lib/check_env.sh");
  const auto begin = tmpl.find("pep440_awk='");
  ASSERT_NE(begin, std::string::npos);
  const auto end = tmpl.find('\'', begin + 12);
  ASSERT_NE(end, std::string::npos);
  const std::string program = tmpl.substr(begin + 12, end - begin - 12) + " BEGIN { exit !satisfies(version, spec) }";
  std::istringstream in(cases);
  int rows = 0, cpp_rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream fields(line);
    std::string version, spec, expected;
    ASSERT_TRUE(std::getline(fields, version, '\t') && std::getline(fields, spec, '\t') &&
                std::getline(fields, expected, '\t'))
        << line;
    ++rows;
    const bool want = expected == "1";
    // Debian's awk (mawk) and busybox's, the two the script meets in images.
    for (const std::vector<std::string>& awk_cmd :
         {std::vector<std::string>{"awk"}, std::vector<std::string>{"busybox", "awk"}}) {
      if (awk_cmd.front() == "busybox" && !std::filesystem::exists("/usr/bin/busybox") &&
          !std::filesystem::exists("/bin/busybox"))
        continue;
      std::vector<std::string> argv = awk_cmd;
      argv.insert(argv.end(), {"-v", "version=" + version, "-v", "spec=" + spec, program});
      const io::ProcessResult awk = io::run_process(argv);
      EXPECT_EQ(awk.exit_code == 0, want) << awk_cmd.front() << ": " << version << " " << spec << ": " << awk.err;
    }
    // The C++ side compares release versions: rows with only digits and dots on both sides.
    const auto release = [](const std::string& s) {
      return s.find_first_not_of("0123456789.=<>!~,*") == std::string::npos && s.find("===") == std::string::npos;
    };
    if (release(version) && release(spec)) {
      ++cpp_rows;
      EXPECT_EQ(version_satisfies(version, spec), want) << "C++: " << version << " " << spec;
    }
  }
  EXPECT_GE(rows, 25);
  EXPECT_GE(cpp_rows, 15);
}

// The manifest fuzzer's find (CI's seed, 60 s): a version part of 100 digits overflowed the
// parse (undefined behaviour, which UBSan aborts on). Too large now reads as the largest.
TEST(TorchRange, AHugeVersionPartIsTheLargest) {
  const std::string huge(100, '1');
  EXPECT_TRUE(version_satisfies(huge + ".0.1", ">=2.7"));
  EXPECT_FALSE(version_satisfies(huge + ".0.1", "<=" + huge.substr(0, 30)));
  EXPECT_TRUE(version_satisfies("2.7.1", "<=" + huge));
  EXPECT_FALSE(minor_satisfies("2.7", ">=" + huge));
}

}  // namespace
}  // namespace envpin::resolve

// SPDX-License-Identifier: Apache-2.0
// .gitignore patterns translated for a .dockerignore at the project's root (gitignore(5) on one
// side, docker's pattern matcher on the other).
#include "manifest/gitignore.hpp"

#include <gtest/gtest.h>

#include "diag/error.hpp"

namespace envpin::manifest {
namespace {

using Patterns = std::vector<std::string>;

Patterns own(const std::string& text, const std::string& prefix = "") {
  return dockerignore_patterns({prefix + ".gitignore", prefix, "", text}, prefix + ".gitignore");
}

TEST(Gitignore, AnchoringAsGitDoes) {
  // No slash: any depth. A slash at the start or in the middle: relative to the file's directory.
  EXPECT_EQ(own("*.bin\n/data\ndocs/build\n"), (Patterns{"**/*.bin", "data", "docs/build"}));
  // The same file in a subdirectory is relative to that subdirectory.
  EXPECT_EQ(own("*.bin\n/data\ndocs/build\n", "src/"), (Patterns{"src/**/*.bin", "src/data", "src/docs/build"}));
}

TEST(Gitignore, DirectoriesOnlyBecomeTheirContents) {
  // docker has no "directories only": "build/" must not drop a file named build.
  EXPECT_EQ(own("build/\n/out//\nlogs/*/\n"), (Patterns{"**/build/**", "out/**", "logs/*/**"}));
}

TEST(Gitignore, NegationCommentsBlanksAndSpaces) {
  EXPECT_EQ(own("# weights\n\n*.pt\n!keep.pt\n  indented\ntrailing   \nescaped\\ \n\\#hash\n\r\n"),
            (Patterns{"**/*.pt", "!**/keep.pt", "**/trailing", "**/\\#hash"}));
  EXPECT_EQ(own("a\r\nb\r\n"), (Patterns{"**/a", "**/b"}));
}

TEST(Gitignore, AncestorFilesApplyInsideTheProjectOnly) {
  const io::GitIgnoreFile parent{"../../.gitignore", "", "examples/demo",
                                 "*.bin\n/examples/demo/data/\n/examples/other/\n**/cache\n/build\n"};
  EXPECT_EQ(dockerignore_patterns(parent, "../../.gitignore"), (Patterns{"**/*.bin", "data/**", "**/cache"}));
}

TEST(Gitignore, ControlCharactersAreALocatedError) {
  try {
    own("ok\nbad\x1b[31m\n");
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.where()->line, 2);
    EXPECT_EQ(e.where()->column, 4);
    EXPECT_NE(e.message().find("the .gitignore line holds"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace envpin::manifest

// SPDX-License-Identifier: Apache-2.0
// A Dockerfile read as Docker and the shell read it, for envpin init (init/dockerfile.cpp): its
// instructions (comment and continuation rules), and a RUN line's commands and words (quotes,
// backslashes, redirections). Nothing is run or expanded.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace envpin::init::detail {

// One instruction: its keyword (upper case), its arguments, and the line it starts on.
struct Instruction {
  std::string keyword;
  std::string args;
  int line = 0;
};

// One shell command of a RUN line: its words, and the words an unquoted '<' or '>' cut short
// ("Pillow>=9.1.0" is "Pillow" with its output sent to the file "=9.1.0").
struct Command {
  std::vector<std::string> words;
  std::vector<std::string> redirected;
};

// Docker's line rules: '#' comment lines (also inside a continuation), '\' continues a line.
// Throws diag::Error (located in `file`) for a file it cannot read as one.
std::vector<Instruction> instructions(const std::string& text, const std::filesystem::path& file);

// A RUN line split into commands at && || ; | (outside quotes), quotes and backslashes removed as
// the shell would. Expansions are kept as written ('$'), for callers to leave out.
std::vector<Command> commands(const std::string& s);

}  // namespace envpin::init::detail

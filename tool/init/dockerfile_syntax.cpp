// SPDX-License-Identifier: Apache-2.0
#include "init/dockerfile_syntax.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/parts.hpp"

namespace envpin::init::detail {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;

std::vector<Instruction> instructions(const std::string& text, const fs::path& file) {
  std::vector<Instruction> out;
  std::istringstream in(text);
  std::string line, logical;
  int number = 0, start = 0;
  const auto flush = [&] {
    const std::string t = trim(logical);
    logical.clear();
    if (t.empty()) return;
    const auto sp = t.find_first_of(" \t");
    std::string keyword = t.substr(0, sp);
    std::transform(keyword.begin(), keyword.end(), keyword.begin(), [](unsigned char c) { return std::toupper(c); });
    out.push_back({keyword, sp == std::string::npos ? "" : trim(t.substr(sp)), start});
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::replace(line.begin(), line.end(), '\t', ' ');  // tabs are whitespace to docker and the shell
    if (const std::size_t bad = diag::control_at(line); bad != std::string::npos)
      throw Error("the line holds " + diag::describe_char_at(line, bad),
                  Location{file.generic_string(), number, static_cast<int>(bad) + 1}, "remove it");
    const std::string t = trim(line);
    if (t.starts_with("#")) continue;
    if (logical.empty()) start = number;
    if (!t.empty() && t.back() == '\\') {
      logical += t.substr(0, t.size() - 1) + " ";
      continue;
    }
    logical += t;
    flush();
  }
  flush();
  return out;
}

std::vector<Command> commands(const std::string& s) {
  std::vector<Command> out(1);
  std::string word;
  bool in_word = false;
  const auto end_word = [&] {
    if (in_word) out.back().words.push_back(word);
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    // An unquoted '#' that starts a word starts the shell's comment: "pip install cmake  # from
    // apt-get is too old" (detectron2's docker/Dockerfile) installs cmake alone. Docker joins a
    // RUN's continued lines into one, so the comment runs to the end of the instruction.
    if (c == '#' && !in_word) break;
    if (c == '\'') {
      const std::size_t e = s.find('\'', i + 1);
      word += s.substr(i + 1, (e == std::string::npos ? s.size() : e) - i - 1);
      in_word = true;
      i = e == std::string::npos ? s.size() : e;
    } else if (c == '"') {
      std::size_t e = i + 1;
      for (; e < s.size() && s[e] != '"'; ++e) {
        if (s[e] == '\\' && e + 1 < s.size()) ++e;
        word += s[e];
      }
      in_word = true;
      i = e;
    } else if (c == '\\' && i + 1 < s.size()) {
      word += s[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '<' || c == '>') {
      // A redirection: "2>" names a descriptor; "x>=1" loses its tail to a file name.
      const std::size_t token_end = std::min(s.find_first_of(" \t", i), s.size());
      if (in_word && !std::all_of(word.begin(), word.end(), [](unsigned char ch) { return std::isdigit(ch); })) {
        out.back().redirected.push_back(word + s.substr(i, token_end - i));
        end_word();
      }
      word.clear();
      in_word = false;
      std::size_t e = i;
      while (e < s.size() && (s[e] == '<' || s[e] == '>' || s[e] == '&' || s[e] == '|')) ++e;
      if (e < s.size() && s[e] != ' ' && s[e] != '\t') {
        i = token_end - 1;  // the target glued on
      } else {
        while (e < s.size() && (s[e] == ' ' || s[e] == '\t')) ++e;
        i = std::min(s.find_first_of(" \t", e), s.size()) - 1;  // the next word is the target
      }
    } else if (c == '&' || c == '|' || c == ';') {
      end_word();
      if (i + 1 < s.size() && s[i + 1] == c) ++i;
      if (!out.back().words.empty()) out.emplace_back();
    } else {
      word += c;
      in_word = true;
    }
  }
  end_word();
  if (out.back().words.empty()) out.pop_back();
  return out;
}

}  // namespace envpin::init::detail

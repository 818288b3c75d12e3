// SPDX-License-Identifier: Apache-2.0
#include "manifest/yaml_reader.hpp"

namespace envpin::manifest::detail {

std::string describe_yaml_error(const std::string& msg) {
  static const std::pair<std::string_view, std::string_view> table[] = {
      {"end of map not found", "a mapping is not closed: check the indentation of this line"},
      {"end of map flow not found", "'{' is not closed by '}'"},
      {"end of sequence not found", "a list is not closed: check the indentation of this line"},
      {"end of sequence flow not found", "'[' is not closed by ']'"},
      {"illegal map value", "a ':' where no value may start (quote the value if it contains ': ')"},
      {"illegal map key", "a key where none may start"},
      {"illegal block entry", "a '- ' list item where a mapping value was expected"},
      {"illegal flow end", "a ']' or '}' that closes nothing"},
      {"illegal EOF in scalar", "a quoted string is not closed before the end of the file"},
      {"illegal character in scalar", "a character that cannot appear in an unquoted value"},
      {"illegal document indicator in scalar", "'---' or '...' inside a value"},
      {"unknown token", "a character YAML does not allow here"},
      {"unknown escape character: ", "an unknown '\\' escape in a double-quoted string"},
      {"alias not found after *", "'*' must be followed by an anchor name"},
      {"anchor not found after &", "'&' must be followed by an anchor name"},
      {"the referenced anchor is not defined", "an alias refers to an anchor that is not defined"},
      {"unexpected character in block scalar", "a character that breaks the block scalar"},
      {"cannot assign multiple tags to the same node", "a value with two tags"},
      {"cannot assign multiple anchors to the same node", "a value with two anchors"},
  };
  for (const auto& [yaml, ours] : table)
    if (msg.starts_with(yaml)) return "invalid YAML: " + std::string(ours);
  return "invalid YAML syntax";
}

void check_encoding(const std::string& source, const std::string& file) {
  std::size_t at = diag::invalid_utf8_at(source);
  const std::size_t nul = source.find('\0');
  if (nul < at) at = nul;
  if (at == std::string::npos) return;
  int line = 1, column = 1;
  for (std::size_t i = 0; i < at; ++i) {
    if (source[i] == '\n')
      ++line, column = 1;
    else if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80)
      ++column;
  }
  throw Error(source[at] == '\0' ? "a NUL byte in the manifest"
                                 : "the manifest is not valid UTF-8 (" + diag::describe_char_at(source, at) + ")",
              Location{file, line, column}, "save the manifest as UTF-8 text");
}

void reject_tabs(const std::string& source, const std::string& file) {
  int line = 1;
  std::size_t col = 0;
  bool leading = true;
  for (char c : source) {
    if (c == '\n') {
      ++line;
      col = 0;
      leading = true;
      continue;
    }
    ++col;
    if (!leading) continue;
    if (c == '\t')
      throw Error("tab character in indentation", Location{file, line, static_cast<int>(col)},
                  "indent with spaces; YAML does not allow tabs");
    if (c != ' ' && c != '-') leading = false;
  }
}

}  // namespace envpin::manifest::detail

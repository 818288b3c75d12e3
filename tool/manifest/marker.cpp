// SPDX-License-Identifier: Apache-2.0
#include "manifest/marker.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "diag/text.hpp"

namespace envpin::manifest {
namespace {

// The specification's environment markers (extras and dependency_groups since its 2025
// revision), and the legacy spellings pip's packaging library still reads.
constexpr std::string_view kVariables[] = {"python_version",
                                           "python_full_version",
                                           "os_name",
                                           "sys_platform",
                                           "platform_release",
                                           "platform_system",
                                           "platform_version",
                                           "platform_machine",
                                           "platform_python_implementation",
                                           "implementation_name",
                                           "implementation_version",
                                           "extra",
                                           "extras",
                                           "dependency_groups"};
constexpr std::pair<std::string_view, std::string_view> kLegacy[] = {
    {"os.name", "os_name"},
    {"sys.platform", "sys_platform"},
    {"platform.version", "platform_version"},
    {"platform.machine", "platform_machine"},
    {"platform.python_implementation", "platform_python_implementation"},
    {"python_implementation", "platform_python_implementation"}};

bool is_wsp(char c) { return c == ' ' || c == '\t'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_char(char c) { return is_letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.'; }

// python_str_c: whitespace, letters, digits and this punctuation (no backslash, no quotes; a
// string may hold the other kind of quote).
bool is_string_char(char c) {
  return is_wsp(c) || is_letter(c) || (c >= '0' && c <= '9') ||
         std::string_view("().{}-_*#:;,/?[]!~`@$%^&=+|<>").find(c) != std::string_view::npos;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::optional<Marker> parse(std::string& error, std::size_t& column) {
    Marker m = disjunction(0);
    if (ok_) {
      skip_space();
      if (i_ < s_.size()) fail("unexpected " + diag::quote(s_.substr(i_, 1)) + " in marker", i_);
    }
    if (!ok_) {
      error = error_;
      column = column_;
      return std::nullopt;
    }
    return m;
  }

 private:
  // marker_or: marker_and ('or' marker_and)*
  Marker disjunction(int depth) {
    Marker first = conjunction(depth);
    if (!ok_ || !keyword("or")) return first;
    Marker any;
    any.kind = Marker::Kind::any;
    any.children.push_back(std::move(first));
    do any.children.push_back(conjunction(depth));
    while (ok_ && keyword("or"));
    return any;
  }

  // marker_and: marker_expr ('and' marker_expr)*
  Marker conjunction(int depth) {
    Marker first = expression(depth);
    if (!ok_ || !keyword("and")) return first;
    Marker all;
    all.kind = Marker::Kind::all;
    all.children.push_back(std::move(first));
    do all.children.push_back(expression(depth));
    while (ok_ && keyword("and"));
    return all;
  }

  // marker_expr: marker_var marker_op marker_var | '(' marker ')'
  Marker expression(int depth) {
    skip_space();
    Marker m;
    if (i_ < s_.size() && s_[i_] == '(') {
      if (depth >= kMaxMarkerDepth) {
        fail("markers nest more than " + std::to_string(kMaxMarkerDepth) + " parentheses deep", i_);
        return m;
      }
      ++i_;
      m = disjunction(depth + 1);
      if (!ok_) return m;
      skip_space();
      if (i_ >= s_.size() || s_[i_] != ')') {
        fail("expected ')'", i_);
        return m;
      }
      ++i_;
      return m;
    }
    if (!operand(m.left_is_variable, m.left) || !oper(m.op)) return m;
    operand(m.right_is_variable, m.right);
    return m;
  }

  // marker_var: an environment variable or a quoted string.
  bool operand(bool& variable, std::string& out) {
    skip_space();
    if (i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"')) {
      const char quote = s_[i_];
      for (std::size_t k = i_ + 1; k < s_.size(); ++k) {
        if (s_[k] == quote) {
          out = std::string(s_.substr(i_ + 1, k - i_ - 1));
          i_ = k + 1;
          return true;
        }
        if (s_[k] == '\\') return fail("'\\' is not allowed in a marker string", k);
        if (s_[k] != '\'' && s_[k] != '"' && !is_string_char(s_[k]))
          return fail("a marker string holds " + diag::describe_char_at(s_, k), k);
      }
      return fail("a quoted string is not closed", i_);
    }
    const std::size_t start = i_;
    if (i_ >= s_.size() || !(is_letter(s_[i_]) || s_[i_] == '_'))
      return fail("expected a marker variable or a quoted string", i_);
    while (i_ < s_.size() && is_name_char(s_[i_])) ++i_;
    const std::string_view name = s_.substr(start, i_ - start);
    variable = true;
    if (std::find(std::begin(kVariables), std::end(kVariables), name) != std::end(kVariables)) {
      out = std::string(name);
      return true;
    }
    for (const auto& [legacy, canonical] : kLegacy)
      if (name == legacy) {
        out = std::string(canonical);
        return true;
      }
    return fail("unknown marker variable " + diag::quote(name), start);
  }

  // marker_op: a version comparison, 'in' or 'not in'.
  bool oper(std::string& out) {
    skip_space();
    for (std::string_view op : {"===", "<=", ">=", "==", "!=", "~=", "<", ">"})
      if (s_.substr(i_).starts_with(op)) {
        i_ += op.size();
        out = std::string(op);
        return true;
      }
    const std::size_t at = i_;
    if (keyword("in")) {
      out = "in";
      return true;
    }
    if (keyword("not") && keyword("in")) {
      out = "not in";
      return true;
    }
    return fail("expected a marker operator (<, <=, ==, !=, >=, >, ~=, ===, in, not in)", at);
  }

  // `word` as a whole word after optional whitespace; the position is kept when it is not there.
  bool keyword(std::string_view word) {
    const std::size_t save = i_;
    skip_space();
    if (s_.substr(i_).starts_with(word) && (i_ + word.size() == s_.size() || !is_name_char(s_[i_ + word.size()]))) {
      i_ += word.size();
      return true;
    }
    i_ = save;
    return false;
  }

  void skip_space() {
    while (i_ < s_.size() && is_wsp(s_[i_])) ++i_;
  }

  bool fail(std::string what, std::size_t at) {
    if (ok_) {
      ok_ = false;
      error_ = std::move(what);
      column_ = at;
    }
    return false;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  bool ok_ = true;
  std::string error_;
  std::size_t column_ = 0;
};

}  // namespace

std::optional<Marker> parse_marker(std::string_view text, std::string& error, std::size_t& column) {
  return Parser(text).parse(error, column);
}

}  // namespace envpin::manifest

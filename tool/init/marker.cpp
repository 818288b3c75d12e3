// SPDX-License-Identifier: Apache-2.0
#include "init/marker.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "resolve/policy_parts.hpp"

namespace envpin::init {
namespace {

// A version's release numbers ("3.10.4" -> 3, 10, 4); what follows them is ignored.
std::vector<int> release_of(std::string_view v) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    out.push_back(resolve::detail::bounded_int(v.substr(i)));
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
    if (i + 1 < v.size() && v[i] == '.' && std::isdigit(static_cast<unsigned char>(v[i + 1])))
      ++i;
    else
      break;
  }
  return out;
}

int compare_versions(std::string_view a, std::string_view b) {
  std::vector<int> x = release_of(a), y = release_of(b);
  const std::size_t n = std::max(x.size(), y.size());
  x.resize(n, 0);
  y.resize(n, 0);
  return x < y ? -1 : x > y ? 1 : 0;
}

bool is_version_variable(std::string_view name) {
  return name == "python_version" || name == "python_full_version" || name == "implementation_version";
}

// The image's value of a marker variable; nullopt for the ones envpin cannot know.
std::optional<std::string> variable(std::string_view name, const std::string& python) {
  if (name == "python_version") return python.substr(0, python.find('.', python.find('.') + 1));
  if (name == "python_full_version" || name == "implementation_version") {
    if (std::count(python.begin(), python.end(), '.') >= 2) return python;
    return std::nullopt;  // the patch release is the base image's
  }
  if (name == "os_name") return "posix";
  if (name == "sys_platform") return "linux";
  if (name == "platform_system") return "Linux";
  if (name == "platform_machine") return "x86_64";
  if (name == "implementation_name") return "cpython";
  if (name == "platform_python_implementation") return "CPython";
  return std::nullopt;  // extra, platform_release, platform_version
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& python) : s_(text), python_(python) {}

  // nullopt in `ok_ == false` means a syntax error: the whole marker is unknown.
  std::optional<bool> parse() {
    const auto v = disjunction();
    skip_space();
    if (i_ != s_.size()) ok_ = false;
    return ok_ ? v : std::nullopt;
  }

 private:
  std::optional<bool> disjunction() {
    std::optional<bool> v = conjunction();
    while (ok_ && keyword("or")) {
      const std::optional<bool> w = conjunction();
      v = (v == true || w == true) ? std::optional<bool>(true) : (v && w) ? std::optional<bool>(false) : std::nullopt;
    }
    return v;
  }

  std::optional<bool> conjunction() {
    std::optional<bool> v = atom();
    while (ok_ && keyword("and")) {
      const std::optional<bool> w = atom();
      v = (v == false || w == false) ? std::optional<bool>(false) : (v && w) ? std::optional<bool>(true) : std::nullopt;
    }
    return v;
  }

  std::optional<bool> atom() {
    skip_space();
    if (i_ < s_.size() && s_[i_] == '(') {
      ++i_;
      const auto v = disjunction();
      skip_space();
      if (i_ >= s_.size() || s_[i_] != ')')
        ok_ = false;
      else
        ++i_;
      return v;
    }
    bool left_is_var = false, right_is_var = false;
    std::string left_name, right_name;
    const auto left = value(left_is_var, left_name);
    const std::string op = oper();
    const auto right = value(right_is_var, right_name);
    if (!ok_ || op.empty() || !left || !right) return std::nullopt;
    const bool versions =
        (left_is_var && is_version_variable(left_name)) || (right_is_var && is_version_variable(right_name));
    return compare(*left, op, *right, versions);
  }

  static std::optional<bool> compare(const std::string& a, const std::string& op, const std::string& b, bool versions) {
    if (op == "in") return b.find(a) != std::string::npos;
    if (op == "not in") return b.find(a) == std::string::npos;
    if (op == "===") return a == b;
    if (!versions) {
      if (op == "==") return a == b;
      if (op == "!=") return a != b;
      return std::nullopt;  // ordering strings: PEP 508 leaves it to the implementation
    }
    if (b.ends_with(".*") && (op == "==" || op == "!=")) {
      const std::vector<int> have = release_of(a), prefix = release_of(b.substr(0, b.size() - 2));
      const bool match = have.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), have.begin());
      return op == "==" ? match : !match;
    }
    const int c = compare_versions(a, b);
    if (op == "==") return c == 0;
    if (op == "!=") return c != 0;
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    if (op == ">=") return c >= 0;
    if (op == "~=") {
      std::vector<int> prefix = release_of(b);
      if (prefix.size() < 2) return std::nullopt;
      prefix.pop_back();
      const std::vector<int> have = release_of(a);
      return c >= 0 && have.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), have.begin());
    }
    return std::nullopt;
  }

  // A quoted string or a variable; nullopt for a variable whose value envpin cannot know.
  std::optional<std::string> value(bool& is_var, std::string& name) {
    skip_space();
    if (i_ >= s_.size()) {
      ok_ = false;
      return std::nullopt;
    }
    const char q = s_[i_];
    if (q == '\'' || q == '"') {
      const std::size_t end = s_.find(q, i_ + 1);
      if (end == std::string_view::npos) {
        ok_ = false;
        return std::nullopt;
      }
      std::string v(s_.substr(i_ + 1, end - i_ - 1));
      i_ = end + 1;
      return v;
    }
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.')) ++i_;
    if (i_ == start) {
      ok_ = false;
      return std::nullopt;
    }
    is_var = true;
    name = std::string(s_.substr(start, i_ - start));
    std::replace(name.begin(), name.end(), '.', '_');  // the legacy os.name, sys.platform spellings
    return variable(name, python_);
  }

  std::string oper() {
    skip_space();
    for (std::string_view op : {"===", "<=", ">=", "==", "!=", "~=", "<", ">"})
      if (s_.substr(i_).starts_with(op)) {
        i_ += op.size();
        return std::string(op);
      }
    if (keyword("in")) return "in";
    const std::size_t save = i_;
    if (keyword("not") && keyword("in")) return "not in";
    i_ = save;
    ok_ = false;
    return "";
  }

  bool keyword(std::string_view word) {
    skip_space();
    if (!s_.substr(i_).starts_with(word)) return false;
    const std::size_t end = i_ + word.size();
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
    i_ = end;
    return true;
  }

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }

  std::string_view s_;
  const std::string& python_;
  std::size_t i_ = 0;
  bool ok_ = true;
};

}  // namespace

std::optional<bool> marker_holds(std::string_view marker, const std::string& python) {
  if (marker.size() > 4096) return std::nullopt;
  return Parser(marker, python).parse();
}

}  // namespace envpin::init

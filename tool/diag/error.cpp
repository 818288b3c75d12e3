// SPDX-License-Identifier: Apache-2.0
#include "diag/error.hpp"

#include <cctype>
#include <utility>

#include "diag/text.hpp"

namespace envpin::diag {
namespace {

std::string prefix(const std::optional<Location>& where) {
  if (!where) return {};
  std::string out = where->file;
  if (where->line > 0) {
    out += ':' + std::to_string(where->line);
    if (where->column > 0) out += ':' + std::to_string(where->column);
  }
  return out + ": ";
}

// Every line envpin prints passes here: values inside a message may come from a hostile
// manifest, so the line is made printable (no newline can forge a second line, no escape
// sequence reaches the terminal), each '...' span is cut to 120 bytes and the whole line
// to 600.
std::string one_line(std::string_view text) {
  constexpr std::size_t kSpan = 120, kLine = 600;
  const std::string p = printable(text);
  // A quote opens after a non-word character and closes before one: the apostrophe of "the
  // fleet's driver" is neither, and must not pair with the next quote into one long span.
  const auto word = [&](std::size_t at) { return at < p.size() && std::isalnum(static_cast<unsigned char>(p[at])); };
  const auto next_quote = [&](std::size_t from, bool opening) {
    for (std::size_t at = p.find('\'', from); at != std::string::npos; at = p.find('\'', at + 1))
      if (opening ? !(at > 0 && word(at - 1)) : !word(at + 1)) return at;
    return std::string::npos;
  };
  std::string out;
  for (std::size_t i = 0; i < p.size();) {
    const std::size_t open = next_quote(i, true);
    if (open == std::string::npos) {
      out.append(p, i, std::string::npos);
      break;
    }
    out.append(p, i, open + 1 - i);
    std::size_t close = next_quote(open + 1, false);
    if (close == std::string::npos) close = p.size();
    const std::size_t len = close - open - 1;
    if (len > kSpan) {
      std::size_t cut = kSpan - 3;
      while (cut > 0 && (static_cast<unsigned char>(p[open + 1 + cut]) & 0xC0) == 0x80) --cut;
      out.append(p, open + 1, cut);
      out += "...";
    } else {
      out.append(p, open + 1, len);
    }
    if (close < p.size()) out += '\'';
    i = close + 1;
  }
  if (out.size() > kLine) {
    std::size_t cut = kLine - 3;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "...";
  }
  return out;
}

}  // namespace

Error::Error(std::string message, std::optional<Location> where, std::string hint)
    : std::runtime_error(message), message_(std::move(message)), where_(std::move(where)), hint_(std::move(hint)) {}

std::string format(const Error& e) {
  std::string out = "envpin: error: " + one_line(prefix(e.where()) + e.message()) + "\n";
  if (!e.hint().empty()) out += "envpin: hint: " + one_line(e.hint()) + "\n";
  return out;
}

std::string format_warning(const std::string& message, const std::optional<Location>& where) {
  return "envpin: warning: " + one_line(prefix(where) + message) + "\n";
}

}  // namespace envpin::diag

// SPDX-License-Identifier: Apache-2.0
#include "diag/text.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace envpin::diag {
namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 (RFC 3629 §4: no overlongs,
// no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c == 0xE0)
    n = 3, lo = 0xA0;
  else if (c == 0xED)
    n = 3, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF)
    n = 3;
  else if (c == 0xF0)
    n = 4, lo = 0x90;
  else if (c == 0xF4)
    n = 4, hi = 0x8F;
  else if (c >= 0xF1 && c <= 0xF3)
    n = 4;
  else
    return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

// The code point of the valid sequence of length n at s[i].
unsigned code_point(std::string_view s, std::size_t i, std::size_t n) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(s[k])); };
  if (n == 1) return b(i);
  unsigned cp = b(i) & (0xFFu >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (b(i + k) & 0x3Fu);
  return cp;
}

// The bidirectional formatting characters (Unicode's Bidi_Control property: U+061C, U+200E,
// U+200F, U+202A..U+202E, U+2066..U+2069). Invisible, they reorder what a reader sees around them
// ("Trojan Source", CVE-2021-42574), so they are treated as controls everywhere.
bool is_bidi_control(unsigned cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

bool is_control(unsigned cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || is_bidi_control(cp);
}

std::string hex(const char* format, unsigned v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

bool only_ascii(std::string_view s, std::string_view extra) {
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          extra.find(c) != std::string_view::npos))
      return false;
  return true;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

std::size_t invalid_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::size_t control_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {
      ++i;
      continue;
    }
    if (is_control(code_point(s, i, n))) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string describe_char_at(std::string_view s, std::size_t at) {
  const std::size_t n = utf8_length(s, at);
  if (n == 0) return hex("the byte 0x%02x", static_cast<unsigned char>(s[at]));
  const unsigned cp = code_point(s, at, n);
  switch (cp) {
    case '\n':
      return "a newline";
    case '\r':
      return "a carriage return";
    case '\t':
      return "a tab";
    case 0:
      return "a NUL byte";
    case 0x1B:
      return "an escape character";
    default:
      if (is_bidi_control(cp)) return hex("the bidirectional control U+%04X", cp);
      return hex(cp < 0x100 ? "the control character 0x%02x" : "the character U+%04X", cp);
  }
}

namespace {
// `s` printable (see printable()), while the result stays within `max` bytes: an escape or a
// character is never cut. `used` receives how many bytes of `s` it holds.
std::string printable_within(std::string_view s, std::size_t max, std::size_t& used) {
  std::string out;
  out.reserve(std::min(s.size(), max));
  std::size_t i = 0;
  char escape[16];
  while (i < s.size()) {
    const std::size_t n = utf8_length(s, i);
    std::string_view piece = n == 0 ? std::string_view() : s.substr(i, n);
    if (n == 0) {
      std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned char>(s[i]));
      piece = escape;
    } else if (const unsigned cp = code_point(s, i, n); is_control(cp)) {
      if (cp == '\n' || cp == '\r' || cp == '\t')
        std::snprintf(escape, sizeof escape, "\\%c", cp == '\n' ? 'n' : cp == '\r' ? 'r' : 't');
      else
        std::snprintf(escape, sizeof escape, cp < 0x100 ? "\\x%02x" : "\\u%04x", cp);
      piece = escape;
    }
    if (out.size() + piece.size() > max) break;
    out += piece;
    i += n == 0 ? 1 : n;
  }
  used = i;
  return out;
}
}  // namespace

std::string printable(std::string_view s) {
  std::size_t used = 0;
  return printable_within(s, std::string::npos, used);
}

std::string excerpt(std::string_view s, std::size_t max) {
  std::size_t used = 0;
  std::string out = printable_within(s, max, used);
  if (used < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string quote(std::string_view s, std::size_t max) {
  std::size_t used = 0;
  const std::string out = printable_within(s, max, used);
  if (used < s.size()) return "'" + out + "...' (" + std::to_string(s.size()) + " bytes)";
  return "'" + out + "'";
}

std::string human_bytes(std::uintmax_t n) {
  if (n < 1024) return std::to_string(n) + " B";
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  // Tenths of the unit, rounded, in integers: the same text on every machine.
  std::uintmax_t unit = 1024;
  std::size_t i = 0;
  while (i + 1 < std::size(kUnits) && n >= unit * 1024 - unit / 20) {
    unit *= 1024;
    ++i;
  }
  const std::uintmax_t tenths = (n / unit) * 10 + ((n % unit) * 10 + unit / 2) / unit;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " " + kUnits[i];
}

}  // namespace envpin::diag

// SPDX-License-Identifier: Apache-2.0
// Character-level rules for hostile text: what a single-line value may hold, and how any
// text is shown to a terminal without letting it forge lines or send escape sequences.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace envpin::diag {

// The byte offset of the first byte of `s` that does not start or continue a valid UTF-8
// sequence (overlong forms and surrogates included), or npos when `s` is valid UTF-8.
std::size_t invalid_utf8_at(std::string_view s);

// The byte offset of the first character that breaks a single line or drives a terminal:
// C0 controls (newline, NUL, ESC, tab ...), DEL, C1 controls (U+0080..U+009F), the Unicode
// line and paragraph separators (U+2028, U+2029) and the bidirectional controls (U+061C, U+200E,
// U+200F, U+202A..U+202E, U+2066..U+2069); npos when there is none. `s` must be UTF-8.
std::size_t control_at(std::string_view s);

// A name for the character at `s[at]` as control_at or invalid_utf8_at found it, e.g.
// "a newline", "a NUL byte", "the byte 0xff".
std::string describe_char_at(std::string_view s, std::size_t at);

// True when every byte of `s` is an ASCII letter or digit or one of `extra` (true for "").
// The one test behind every "letters, digits and ..." rule: manifest names and paths, lock
// values, and the words the renderers emit unquoted.
bool only_ascii(std::string_view s, std::string_view extra);

// True when `s` is one or more ASCII digits (pids, exit codes, node numbers read back from files).
bool all_digits(std::string_view s);

// `s` with every control character, bidirectional control (U+061C, U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069) and invalid byte written as \n, \t, \xNN or \uNNNN, so the
// result is one printable line that reads as it holds, whatever `s` holds.
std::string printable(std::string_view s);

// Untrusted text (a job's output, a name it chose) as it appears in a line envpin prints: printable,
// cut to `max` bytes (then "... (N bytes)"), never inside a UTF-8 sequence.
std::string excerpt(std::string_view s, std::size_t max = 200);

// `s` as it appears in a message: printable, cut to `max` bytes (then "..." and the
// full size), between single quotes.
std::string quote(std::string_view s, std::size_t max = 120);

// A size for people: "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB" (binary units, one decimal).
std::string human_bytes(std::uintmax_t n);

}  // namespace envpin::diag

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace envpin::diag {

// A 1-based position in a user's file.
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};

// The one error type of envpin: a message for the user, where it was found,
// and at most one remedy. Thrown where found, caught only at the CLI top.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, std::optional<Location> where = std::nullopt, std::string hint = {});

  const std::optional<Location>& where() const { return where_; }
  const std::string& hint() const { return hint_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  std::optional<Location> where_;
  std::string hint_;
};

// Formats `e` as the lines envpin prints on stderr:
//   envpin: error: file:line:col: message
//   envpin: hint: remedy            (only when there is one)
std::string format(const Error& e);

// Formats a warning line: `envpin: warning: file:line:col: message`.
std::string format_warning(const std::string& message, const std::optional<Location>& where);

}  // namespace envpin::diag

// SPDX-License-Identifier: Apache-2.0
#include "diag/error.hpp"

#include <utility>

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

}  // namespace

Error::Error(std::string message, std::optional<Location> where, std::string hint)
    : std::runtime_error(message),
      message_(std::move(message)),
      where_(std::move(where)),
      hint_(std::move(hint)) {}

std::string format(const Error& e) {
  std::string out = "envpin: error: " + prefix(e.where()) + e.message() + "\n";
  if (!e.hint().empty()) out += "envpin: hint: " + e.hint() + "\n";
  return out;
}

std::string format_warning(const std::string& message, const std::optional<Location>& where) {
  return "envpin: warning: " + prefix(where) + message + "\n";
}

}  // namespace envpin::diag

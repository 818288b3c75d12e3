// SPDX-License-Identifier: Apache-2.0
// JSON that came from outside envpin's own process: a program's output (the smoke programs,
// Python's answers, a server's `envpin report`), a report or smoke-result file anyone may have
// written. Parsed with a nesting limit: a value 70,000 levels deep (140 KB) would exhaust the
// stack of whatever walks it (printing, comparing, copying).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace envpin::io {

inline constexpr int kMaxJsonDepth = 64;

// `text` as JSON, or a discarded value (is_discarded()) when it is not JSON or nests deeper than
// kMaxJsonDepth; `too_deep` (when given) says which.
inline nlohmann::json parse_bounded_json(std::string_view text, bool* too_deep = nullptr) {
  bool deep = false;
  const nlohmann::json::parser_callback_t limit = [&deep](int depth, nlohmann::json::parse_event_t event,
                                                          nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      deep = true;
    return !deep;  // nothing more is kept once too deep: parsing goes on without building
  };
  nlohmann::json j = nlohmann::json::parse(text, limit, false);
  if (too_deep) *too_deep = deep;
  return deep ? nlohmann::json(nlohmann::json::value_t::discarded) : j;
}

}  // namespace envpin::io

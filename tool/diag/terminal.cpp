// SPDX-License-Identifier: Apache-2.0
#include "diag/terminal.hpp"

#include <unistd.h>

#include <cstdlib>
#include <ostream>

namespace envpin::diag {

Terminal terminal_for(int fd) {
  Terminal t;
  const char* term = std::getenv("TERM");
  t.tty = ::isatty(fd) == 1 && !(term && std::string_view(term) == "dumb");
  const char* no_color = std::getenv("NO_COLOR");
  t.color = t.tty && !(no_color && *no_color);
  return t;
}

std::string paint(const Terminal& t, std::string_view text, Color c) {
  if (!t.color) return std::string(text);
  const char* code = c == Color::kRed ? "\033[1;31m" : c == Color::kYellow ? "\033[1;33m" : "\033[32m";
  return code + std::string(text) + "\033[0m";
}

std::string paint_diagnostic(const Terminal& t, const std::string& text) {
  if (!t.color) return text;
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(at, end - at);
    for (const auto& [word, color] :
         {std::pair{std::string("error"), Color::kRed}, std::pair{std::string("warning"), Color::kYellow}})
      if (line.starts_with("envpin: " + word + ":"))
        line = "envpin: " + paint(t, word, color) + line.substr(8 + word.size());
    out += line;
    at = end;
  }
  return out;
}

std::string paint_verdict(const Terminal& t, const std::string& word) {
  if (word == "ok") return paint(t, word, Color::kGreen);
  if (word == "MISMATCH" || word == "STALE") return paint(t, word, Color::kRed);
  return word;
}

Progress::Progress(std::ostream& err, Terminal t, bool quiet, std::chrono::milliseconds after)
    : err_(err), term_(t), quiet_(quiet), after_(after) {}

Progress::~Progress() { done(); }

void Progress::draw(const std::string& text) {
  err_ << "\r\033[K"
       << "envpin: " << text << std::flush;
  drawn_ = true;
  last_ = Clock::now();
}

void Progress::step(const std::string& text) {
  if (quiet_) return;
  const std::lock_guard<std::mutex> hold(mutex_);
  if (!term_.tty) {
    err_ << "envpin: " << text << "\n" << std::flush;
    return;
  }
  draw(text);  // a phase may be the long part itself: shown at once
}

void Progress::update(const std::string& text) {
  if (quiet_) return;
  const std::lock_guard<std::mutex> hold(mutex_);
  const Clock::time_point now = Clock::now();
  if (now - start_ < after_) return;
  if (!term_.tty) {
    if (last_ == Clock::time_point{} || now - last_ >= std::chrono::seconds(5)) {
      err_ << "envpin: " << text << "\n" << std::flush;
      last_ = now;
    }
    return;
  }
  if (!drawn_ || now - last_ >= std::chrono::milliseconds(100)) draw(text);
}

void Progress::done() {
  const std::lock_guard<std::mutex> hold(mutex_);
  if (drawn_) err_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace envpin::diag

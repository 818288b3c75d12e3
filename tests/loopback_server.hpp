// SPDX-License-Identifier: Apache-2.0
// A real HTTP server on loopback for the unit tests: one canned answer for every connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace envpin::test {

// Answers every connection with `answer(port)` and keeps what each request said. Bounded: it
// stops with the test (the destructor closes the socket and joins).
class Server {
 public:
  explicit Server(std::string answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 8);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~Server() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  void answer(std::string a) {
    std::lock_guard<std::mutex> l(mutex_);
    answer_ = std::move(a);
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mutex_);
    return requests_;
  }

 private:
  void serve() {
    for (int served = 0; served < 50; ++served) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      for (ssize_t n; (n = ::read(c, buf, sizeof buf)) > 0;) {
        in.append(buf, static_cast<std::size_t>(n));
        const auto end = in.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        const auto cl = in.find("Content-Length: ");
        const std::size_t body = cl == std::string::npos ? 0 : std::stoul(in.substr(cl + 16));
        if (in.size() >= end + 4 + body) break;
      }
      std::string out;
      {
        std::lock_guard<std::mutex> l(mutex_);
        requests_.push_back(in);
        out = answer_;
      }
      const bool sent = ::write(c, out.data(), out.size()) == static_cast<ssize_t>(out.size());
      ::close(c);
      if (!sent) continue;  // the client went away
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::string answer_;
  std::vector<std::string> requests_;
  std::mutex mutex_;
  std::thread thread_;
};

}  // namespace envpin::test

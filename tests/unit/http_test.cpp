// SPDX-License-Identifier: Apache-2.0
// net::fetch against two real HTTP servers on loopback (two ports: two origins): a redirect to
// another origin never carries credentials or the request's body.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "diag/error.hpp"
#include "net/http.hpp"

namespace envpin::net {
namespace {

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

std::string redirect(int code, const std::string& to) {
  return "HTTP/1.1 " + std::to_string(code) + " Moved\r\nLocation: " + to +
         "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
}
const std::string kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

TEST(Http, CredentialsAndBodiesNeverFollowARedirectToAnotherOrigin) {
  Server elsewhere(kOk);
  Server rest(redirect(307, elsewhere.url("/slurm/v0.0.38/job/submit")));
  Request post{"POST", rest.url("/slurm/v0.0.38/job/submit"), {"X-SLURM-USER-TOKEN: secret-jwt"}, "{\"job\":1}", false};
  try {
    fetch(post);
    FAIL() << "followed";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), rest.url("/slurm/v0.0.38/job/submit") + " redirected (HTTP 307) to '" +
                               elsewhere.url("/slurm/v0.0.38/job/submit") +
                               "', another origin: envpin does not send its credentials or the request there");
  }
  EXPECT_TRUE(elsewhere.requests().empty());
  // A GET with a bearer token, too (a 302 this time).
  rest.answer(redirect(302, elsewhere.url("/x")));
  EXPECT_THROW(fetch(Request{"GET", rest.url("/a"), {"Authorization: Bearer t0k3n"}, "", false}), diag::Error);
  EXPECT_TRUE(elsewhere.requests().empty());
  // A registry's blob on a CDN: followed, without the token.
  const Response r = fetch(Request{"GET", rest.url("/v2/x/blobs/sha256:1"), {"Authorization: Bearer t0k3n"}, "", true});
  EXPECT_EQ(r.status, 200);
  ASSERT_EQ(elsewhere.requests().size(), 1u);
  EXPECT_EQ(elsewhere.requests()[0].find("t0k3n"), std::string::npos) << elsewhere.requests()[0];
  EXPECT_EQ(elsewhere.requests()[0].rfind("GET /x ", 0), 0u) << elsewhere.requests()[0];
  // Without credentials or a body, another origin is followed (a package index's file host).
  EXPECT_EQ(fetch(Request{"GET", rest.url("/simple/x"), {}, "", false}).body, "ok");
}

TEST(Http, SameOriginRedirectsKeepTheRequestAndAreBounded) {
  Server s(kOk);
  Server loop("");
  loop.answer(redirect(308, loop.url("/again")));
  try {
    fetch(Request{"GET", loop.url("/start"), {}, "", false});
    FAIL() << "followed forever";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(),
              "more than 5 redirects from " + loop.url("/start") + " (the last to '" + loop.url("/again") + "')");
  }
  EXPECT_EQ(loop.requests().size(), 6u);
  // Relative Location, same origin: the token goes along.
  Server same("");
  same.answer(redirect(307, "/there"));
  EXPECT_THROW(fetch(Request{"GET", same.url("/here"), {"Authorization: Bearer keep"}, "", false}), diag::Error);
  EXPECT_EQ(same.requests().size(), 6u);  // /here, then /there five times: all the same origin
  EXPECT_NE(same.requests()[1].find("GET /there "), std::string::npos);
  EXPECT_NE(same.requests()[1].find("Authorization: Bearer keep"), std::string::npos);
}

}  // namespace
}  // namespace envpin::net

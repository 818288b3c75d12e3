// SPDX-License-Identifier: Apache-2.0
// A registry's JSON answer of the wrong shape (issue 49, class 7): every field is read by its type,
// and a wrong type is one line naming the answer's URL and the field, never the JSON library's
// type error ("internal error, please report").
#include <gtest/gtest.h>

#include <string>

#include "diag/error.hpp"
#include "loopback_server.hpp"
#include "net/registry.hpp"

namespace envpin::net {
namespace {

std::string json_answer(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.index.v1+json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

std::string error_of(const std::string& index) {
  test::Server s(json_answer(index));
  const std::string host = s.url("").substr(std::string("http://").size());
  try {
    resolve_image(host + "/envpin/x:1", {"linux/amd64"}, RegistryOptions{});
  } catch (const diag::Error& e) {
    return e.message();
  }
  return "";
}

TEST(Registry, AWrongTypeInAnIndexIsOneLineNamingTheField) {
  const std::string amd64 = R"({"os": "linux", "architecture": "amd64"})";
  struct Case {
    std::string index, message;
  } cases[] = {
      {R"({"manifests": [{"digest": 5, "platform": )" + amd64 + "}]}", "manifests[0].digest is number, not a string"},
      {R"({"manifests": [{"digest": "sha256:x", "platform": {"os": ["linux"], "architecture": "amd64"}}]})",
       "manifests[0].platform.os is array, not a string"},
      {R"({"manifests": [null]})", "manifests[0] is not an object"},
      {R"({"manifests": {"a": 1}})", "manifests is object, not an array"},
      {R"({"mediaType": 7, "manifests": []})", "the manifest.mediaType is number, not a string"},
      {R"({"manifests": [{"digest": "sha256:x", "platform": )" + amd64 + "}]}",
       "names 'sha256:x' for linux/amd64, not a sha256 digest"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.index);
    EXPECT_NE(message.find("the registry's answer at http://127.0.0.1:"), std::string::npos) << c.index << "\n"
                                                                                             << message;
    EXPECT_NE(message.find(c.message), std::string::npos) << c.index << "\n" << message;
  }
}

}  // namespace
}  // namespace envpin::net

// SPDX-License-Identifier: Apache-2.0
// envpin push's pure parts: the digest from the push's output, the record read as data, the
// reference grammar (generate's use of the record: tests/cli/push_cli_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "diag/error.hpp"
#include "manifest/load.hpp"
#include "workflow/push.hpp"

namespace envpin::workflow {
namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');
const std::string kOther = "sha256:" + std::string(64, 'b');

TEST(PushOutput, TheDigestOfThePushedTagWhereverItsLineIs) {
  // docker's output as a pipe gets it: one line a message; a deferred note may follow the digest.
  const std::string out =
      "The push refers to repository [reg.example.com/team/x]\n"
      "5f70bf18a086: Layer already exists\n"
      "other: digest: " +
      kOther + " size: 528\n" + "v1: digest: " + kDigest +
      " size: 1570\n"
      "Not all multiplatform-content is present and only the available single-platform image was "
      "pushed\n";
  EXPECT_EQ(digest_from_push_output(out, "v1"), kDigest);
  EXPECT_EQ(digest_from_push_output(out, "other"), kOther);
  EXPECT_EQ(digest_from_push_output(out, "v2"), "");
  EXPECT_EQ(digest_from_push_output("v1: digest: " + kDigest + "\r\n", "v1"), "");  // no size: not docker's line
  EXPECT_EQ(digest_from_push_output("v1: digest: sha256:abc size: 1\n", "v1"), "");
  EXPECT_EQ(digest_from_push_output("xv1: digest: " + kDigest + " size: 1\n", "v1"), "");
  EXPECT_EQ(digest_from_push_output("v1: digest: " + kDigest + " size: 1\r\n", "v1"), kDigest);
}

TEST(PushReference, RegistryRepositoryAndTagOnly) {
  for (const char* good : {"registry.example.com/team/train", "127.0.0.1:5000/x", "localhost/a/b/c:v1.2-rc_3",
                           "ghcr.io/acme/fine-tune__x:latest", "docker.io/library/debian"})
    EXPECT_TRUE(manifest::is_push_reference(good)) << good;
  for (const char* bad :
       {"", "team/train", "train", "registry.example.com/Team/x", "registry.example.com/x/", "registry.example.com//x",
        "registry.example.com/x@sha256:00", "registry.example.com/x:", "registry.example.com/x:-v",
        "registry.example.com/x;rm -rf /", "-H/x", "registry.example.com/x:$(id)", "registry.example.com/x y",
        "registry.example.com/x\n:v", "registry.example.com/.x", "registry.example.com/x..y"})
    EXPECT_FALSE(manifest::is_push_reference(bad)) << bad;
}

std::string record_text(const std::string& reference, const std::string& digest, const std::string& tree) {
  return "{\"reference\": \"" + reference + "\", \"digest\": \"" + digest +
         "\", \"image\": \"envpin/x:0123456789abcdef\", \"tree\": \"" + tree + "\"}";
}

TEST(PushRecord, ReadAsData) {
  const PushRecord r = parse_push_record(record_text("reg.example.com/x:v1", kDigest, kOther), "push.json");
  EXPECT_EQ(r.reference, "reg.example.com/x:v1");
  EXPECT_EQ(r.digest, kDigest);
  EXPECT_EQ(r.tree, kOther);
  EXPECT_EQ(parse_push_record(push_record_json(r), "push.json").digest, kDigest);
  const auto refused = [](const std::string& text) {
    try {
      parse_push_record(text, "push.json");
    } catch (const diag::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused("[]"), "");
  EXPECT_NE(refused(record_text("reg.example.com/x", kDigest, kOther)), "");  // no tag
  EXPECT_NE(refused(record_text("reg.example.com/x:v1", "sha256:abc", kOther)), "");
  EXPECT_NE(refused(record_text("reg.example.com/x:v1;id", kDigest, kOther)), "");
  EXPECT_NE(refused(record_text("reg.example.com/x:v1", kDigest, "\\u001b[2J")), "");
  std::string extra = record_text("reg.example.com/x:v1", kDigest, kOther);
  extra.insert(1, "\"password\": \"x\", ");
  EXPECT_NE(refused(extra), "");
  EXPECT_NE(refused(std::string(70000, ' ') + record_text("reg.example.com/x:v1", kDigest, kOther)), "");
  EXPECT_NE(refused(std::string(100, '[') + std::string(100, ']')), "");
  EXPECT_EQ(push_repository("reg.example.com:5000/x:v1"), "reg.example.com:5000/x");
  EXPECT_EQ(push_repository("reg.example.com:5000/x"), "reg.example.com:5000/x");
}

TEST(PushReadBack, DockersLoginAndTrustAsPathsOnly) {
  const std::string digest = "reg.example.com/team/x@" + kDigest;
  ::setenv("DOCKER_CONFIG", "/nonexistent-envpin-test", 1);
  std::vector<std::string> argv = manifest_read_argv("reg.example.com/team/x", digest, {});
  // No configuration file: no --authfile; a registry not on loopback and not named: TLS verified.
  EXPECT_EQ(argv, (std::vector<std::string>{"skopeo", "inspect", "--raw", "--retry-times", "2", "docker://" + digest}));
  argv = manifest_read_argv("reg.example.com/team/x", digest, {"reg.example.com"});
  EXPECT_EQ(argv[5], "--tls-verify=false");
  argv = manifest_read_argv("127.0.0.1:5000/x", "127.0.0.1:5000/x@" + kDigest, {});
  EXPECT_EQ(argv[5], "--tls-verify=false");
  // Docker's configuration by path: the file is skopeo's to read, never envpin's.
  const std::string dir = ::testing::TempDir() + "envpin-push-config-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/config.json") << "{}"; }
  ::setenv("DOCKER_CONFIG", dir.c_str(), 1);
  argv = manifest_read_argv("reg.example.com/team/x", digest, {});
  EXPECT_EQ(argv[5], "--authfile");
  EXPECT_EQ(argv[6], dir + "/config.json");
  ::unsetenv("DOCKER_CONFIG");
  std::filesystem::remove_all(dir);
}

// Issue 61: TLS verification was switched off for every registry whose name began with "127.",
// and skopeo then sent the login's Authorization header in clear to whatever the name resolved
// to. It is off only where every address the host resolves to is loopback (as docker decides,
// "localhost" included) or where --insecure-registry names the registry.
std::vector<std::string> resolves_elsewhere(const std::string&) { return {"203.0.113.7"}; }
std::vector<std::string> resolves_nowhere(const std::string&) { return {}; }
std::vector<std::string> resolves_to_both(const std::string&) { return {"127.0.0.1", "203.0.113.7"}; }
std::vector<std::string> resolves_to_loopback(const std::string&) { return {"127.0.1.1", "::1"}; }

TEST(PushReadBack, TlsOffOnlyForALoopbackRegistryByWhatItResolvesTo) {
  EXPECT_EQ(registry_host("127.example.com:5000"), "127.example.com");
  EXPECT_EQ(registry_host("localhost"), "localhost");
  EXPECT_EQ(registry_host("[::1]:5000"), "::1");
  for (const char* a : {"127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"}) EXPECT_TRUE(loopback_address(a)) << a;
  for (const char* a : {"128.0.0.1", "10.0.0.1", "::2", "::ffff:10.0.0.1", "127.example.com", "", "fe80::1"})
    EXPECT_FALSE(loopback_address(a)) << a;
  // The name's look decides nothing: 127.example.com resolving elsewhere, or not at all, keeps TLS.
  EXPECT_FALSE(registry_without_tls("127.example.com:5000", {}, resolves_elsewhere));
  EXPECT_FALSE(registry_without_tls("127.example.com:5000", {}, resolves_nowhere));
  EXPECT_FALSE(registry_without_tls("127.0.0.1.example.com", {}, resolves_to_both));
  EXPECT_TRUE(registry_without_tls("registry.internal:5000", {}, resolves_to_loopback));
  EXPECT_TRUE(registry_without_tls("127.example.com:5000", {"127.example.com:5000"}, resolves_elsewhere));
  EXPECT_FALSE(registry_without_tls("127.example.com:5000", {"127.example.com"}, resolves_elsewhere));
  // Resolved for real: numeric addresses and localhost (/etc/hosts) need no DNS.
  EXPECT_TRUE(registry_without_tls("127.0.0.1:5000", {}));
  EXPECT_TRUE(registry_without_tls("localhost:5000", {}));
  EXPECT_TRUE(registry_without_tls("[::1]:5000", {}));
  EXPECT_FALSE(registry_without_tls("192.0.2.10:5000", {}));
  EXPECT_FALSE(registry_without_tls("[2001:db8::1]:5000", {}));
  ::setenv("DOCKER_CONFIG", "/nonexistent-envpin-test", 1);
  EXPECT_EQ(manifest_read_argv("192.0.2.10:5000/x", "192.0.2.10:5000/x@" + kDigest, {}).back(),
            "docker://192.0.2.10:5000/x@" + kDigest);
  EXPECT_EQ(manifest_read_argv("192.0.2.10:5000/x", "192.0.2.10:5000/x@" + kDigest, {}).size(), 6u);
  ::unsetenv("DOCKER_CONFIG");
}

}  // namespace
}  // namespace envpin::workflow

// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "secrets/rules.hpp"

namespace envpin::secrets {
namespace {

TEST(Secrets, FileNamesInAnyCaseAndDepth) {
  for (const char* p : {".env",
                        ".ENV",
                        "a/b/.env.local",
                        ".envrc",
                        "prod.env",
                        "k/tls.KEY",
                        "x.p12",
                        "deploy/id_rsa",
                        ".ssh/config",
                        ".aws/credentials",
                        ".kube/config",
                        "kubeconfig",
                        ".docker/config.json",
                        "CREDENTIALS.JSON",
                        "gcp/credentials-prod.json",
                        "infra/prod.tfvars",
                        ".npmrc",
                        ".netrc",
                        ".config/gcloud/adc.json",
                        "Secrets.YAML"})
    EXPECT_TRUE(is_secret_path(p)) << p;
  for (const char* p : {".envpin/check_env.sh", "environment.yml", "src/env.py", "docker/config.json", "keys.txt",
                        "README.md", "src/settings.py"})
    EXPECT_FALSE(is_secret_path(p)) << p;
  EXPECT_EQ(any_case("**/.env"), "**/.[eE][nN][vV]");
}

TEST(Secrets, CredentialShapes) {
  std::size_t n = 0;
  const auto at = [&](std::string_view text) { return find_token(text, n); };
  EXPECT_EQ(at("key = 'AKIA"
               "ABCDEFGHIJKLMNOP'"),
            7u);
  EXPECT_EQ(n, 20u);
  EXPECT_EQ(at("xAKIA"
               "ABCDEFGHIJKLMNOP"),
            std::string_view::npos);  // not at a word start
  EXPECT_EQ(at("AKIA"
               "SHORT"),
            std::string_view::npos);
  EXPECT_EQ(at("t=ghp_" + std::string(36, 'a')), 2u);
  EXPECT_EQ(at("github_pat_" + std::string(22, 'B')), 0u);
  EXPECT_EQ(at("pypi-AgEIcHlwaS5vcmc" + std::string(50, 'x')), 0u);
  EXPECT_EQ(at("HF=hf_" + std::string(30, 'z')), 3u);
  EXPECT_EQ(at("sk-" + std::string(20, 'k')), 0u);
  EXPECT_EQ(at("xox"
               "b-1234567890-abc"),
            0u);
  EXPECT_EQ(at("x\n-----BEGIN OPENSSH "
               "PRIVATE KEY-----\n"),
            2u);
  EXPECT_EQ(at("-----BEGIN PUBLIC KEY-----"), std::string_view::npos);
  // The earliest of several shapes.
  EXPECT_EQ(at("hf_" + std::string(30, 'z') +
               " AKIA"
               "ABCDEFGHIJKLMNOP"),
            0u);
  EXPECT_EQ(at("right, high, ghost, sketch, xoxo"), std::string_view::npos);
}

}  // namespace
}  // namespace envpin::secrets

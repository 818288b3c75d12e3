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

// Issue 61: the credential files of cloud CLIs, Kaggle, PostgreSQL, Vault and rclone are secret at
// any depth (they went into a pushed image), as the older rules' are.
TEST(Secrets, WellKnownCredentialFilesAtAnyDepth) {
  for (const char* p : {".kaggle/kaggle.json",
                        "vendor/u/.kaggle/kaggle.json",
                        ".pgpass",
                        "db/.PGPASS",
                        "ops/pgpass.conf",
                        ".vault-token",
                        "a/b/.vault-token",
                        "rclone.conf",
                        "backup/.config/rclone/rclone.conf",
                        ".azure/accessTokens.json",
                        "u/.azure/msal_token_cache.json",
                        "x/.aws/credentials",
                        "x/.config/gcloud/application_default_credentials.json",
                        "x/.netrc",
                        "x/.npmrc",
                        "x/.pypirc",
                        "x/.docker/config.json",
                        "x/.ssh/id_ed25519",
                        "deploy/keys/id_rsa",
                        ".s3cfg"})
    EXPECT_TRUE(is_secret_path(p)) << p;
  for (const char* p : {"kaggle.json", "docs/pgpass.md", "vault-token.py", "rclone.conf.example.md", "azure/main.tf"})
    EXPECT_FALSE(is_secret_path(p)) << p;
}

// pip's, git's and docker's configuration files are secret by what they hold: a password or a
// token in a URL, git's Authorization extraheader, docker's "auths". The same names without a
// credential are not. (Credentials are assembled from parts, so this file holds none.)
TEST(Secrets, ConfigurationFilesSecretByWhatTheyHold) {
  for (const char* p : {"pip.conf", "PIP.INI", ".config/pip/pip.conf", ".gitconfig", ".git/config",
                        "third_party/lib/.git/config", ".git/modules/sub/config", "mirror.git/config", "config.json"})
    EXPECT_TRUE(is_secret_by_content(p)) << p;
  for (const char* p : {"config", "src/config.py", "git/config", "pip.conf.md", ".git/HEAD"})
    EXPECT_FALSE(is_secret_by_content(p)) << p;

  const std::string gh = "ghs_" + std::string(36, 'A');
  const std::pair<const char*, std::string> secret[] = {
      {"pip.conf", "[global]\nindex-url = https://alice:s3cret@pypi.example.com/simple\n"},
      {"pip.ini", "[global]\nextra-index-url = https://__token__:tok@pypi.example.com/simple\n"},
      {"pip.conf", "[global]\nindex-url = https://pypi.example.com/simple?private_token=abc\n"},
      {"vendor/x/.git/config", "[remote \"origin\"]\n\turl = https://x-access-token:" + gh + "@github.com/o/r.git\n"},
      {".git/config", "[remote \"origin\"]\n\turl = https://" + gh + "@github.com/o/r.git\n"},
      {".git/config",
       "[remote \"origin\"]\n\turl = https://glpat" + std::string("-abcdefghij1234567890") + "@gitlab.com/o/r.git\n"},
      {".git/config", "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M=\n"},
      {".gitconfig", "[url \"https://bot:pw@git.example.com/\"]\n\tinsteadOf = https://git.example.com/\n"},
      {"config.json", "{\"auths\": {\"reg.example.com\": {\"auth\": \"dTpw\"}}}"},
      {"pip.conf", std::string(kContentMax + 1, '#')},
  };
  for (const auto& [rel, text] : secret) EXPECT_TRUE(is_secret_content(rel, text)) << rel << ": " << text;
  const std::pair<const char*, std::string> plain[] = {
      {"pip.conf", "[global]\nindex-url = https://pypi.example.com/simple\ntimeout = 60\n"},
      {".git/config", "[remote \"origin\"]\n\turl = git@github.com:o/r.git\n"},
      {".git/config", "[remote \"origin\"]\n\turl = ssh://git@git.example.com/o/r.git\n"},
      {".git/config", "[remote \"origin\"]\n\turl = https://alice@github.com/o/r.git\n"},
      {".gitconfig", "[user]\n\tname = Alice\n[credential]\n\thelper = store\n"},
      {"config.json", "{\"hidden_size\": 768, \"auth\": \"none\"}"},
      {"config.json", "{\"auths\": {}, \"credsStore\": \"desktop\"}"},
  };
  for (const auto& [rel, text] : plain) EXPECT_FALSE(is_secret_content(rel, text)) << rel << ": " << text;
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

// What envpin init shows of a hostile input: every credential written "<credential>", the words
// around it kept, and nothing taken for one that is not.
TEST(Secrets, RedactReplacesEachCredential) {
  const std::pair<const char*, const char*> cases[] = {
      {"-e git+https://alice:tok@git.example.com/x.git#egg=x",
       "-e git+https://<credential>@git.example.com/x.git#egg=x"},
      {"'https://u:p@ss@host/x'", "'https://<credential>@host/x'"},
      {"https://h/simple?token=abc&region=eu", "https://h/simple?token=<credential>&region=eu"},
      {"https://h/s?Access-Token=a;X-Amz-Signature=b#f",
       "https://h/s?Access-Token=<credential>;X-Amz-Signature=<credential>#f"},
      {"https://h/s?my_api_key=a&keyboard=b", "https://h/s?my_api_key=<credential>&keyboard=b"},
      {"(https://conda.example.com/t/tk-12345678/chan::numpy)",
       "(https://conda.example.com/t/<credential>/chan::numpy)"},
      {"https://example.com/t/simple/", "https://example.com/t/simple/"},
      {"machine h login bob password hunter2", "machine h login <credential> password <credential>"},
      {"('--config-settings=build-key=v')", "('--config-settings=build-key=<credential>')"},
      {"x --config-settings k=v -C a=b", "x --config-settings k=<credential> -C a=<credential>"},
      {"the pip option '-C' is not carried", "the pip option '-C' is not carried"},
      {"'password' is not a requirement", "'password' is not a requirement"},
      {"flask-login==1.0", "flask-login==1.0"},
  };
  for (const auto& [text, want] : cases) {
    EXPECT_EQ(redact(text), want) << text;
    EXPECT_EQ(redact(redact(text)), redact(text)) << text;
  }
  EXPECT_EQ(redact("t=ghp_" + std::string(36, 'a') + " x"), "t=<credential> x");
  EXPECT_EQ(url_without_credentials("https://ci:s@h/simple?token=x&region=eu#f"), "https://h/simple?region=eu#f");
  EXPECT_EQ(url_without_credentials("https://h/simple/?sig=x"), "https://h/simple/");
  EXPECT_EQ(url_without_credentials("https://h/s?a=1;key=2;b=3"), "https://h/s?a=1;b=3");
  EXPECT_EQ(credential_parameter("https://h/s?a=1&Private-Token=2"), "Private-Token");
  EXPECT_EQ(credential_parameter("https://h/s?keyboard=1#token=2"), "");
}

}  // namespace
}  // namespace envpin::secrets

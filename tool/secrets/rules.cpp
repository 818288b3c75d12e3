// SPDX-License-Identifier: Apache-2.0
#include "secrets/rules.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace envpin::secrets {
namespace {

// What credential files are called by the tools that write them: dotenv files, private keys
// and certificate bundles, the credential files of pip/twine, npm, netrc-based clients (wandb,
// Hugging Face), git, AWS, GCP, Kubernetes, Docker, Terraform, SSH and GnuPG.
constexpr std::string_view kPatterns[] = {
    "**/.env",  // dotenv and its variants, but not .envpin (envpin's own directory)
    "**/.env.*",
    "**/.env-*",
    "**/.env_*",
    "**/.envrc",
    "**/*.env",
    "**/*.pem",
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    "**/*.jks",
    "**/*.keystore",
    "**/*.kdbx",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
    "**/.ssh",
    "**/.gnupg",
    "**/.netrc",
    "**/_netrc",
    "**/.pypirc",
    "**/.npmrc",
    "**/.yarnrc.yml",
    "**/.git-credentials",
    "**/.aws",
    "**/.kube",
    "**/kubeconfig",
    "**/.docker/config.json",
    "**/.config/gcloud",
    "**/credentials*.json",
    "**/client_secret*.json",
    "**/service-account*.json",
    "**/*.tfvars",
    "**/*.tfstate",
    "**/*.tfstate.backup",
    "**/.huggingface/token",
    "**/.cache/huggingface/token",
    "**/secrets.yaml",
    "**/secrets.yml",
    "**/.htpasswd",
};

std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (!part.empty() && part != ".") out.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool glob(std::string_view pattern, std::string_view name) {
  return fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), FNM_CASEFOLD) == 0;
}

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_upper_or_digit(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// The length of the run at `at` of characters for which `ok` holds.
template <class Pred>
std::size_t run(std::string_view text, std::size_t at, Pred ok) {
  std::size_t n = 0;
  while (at + n < text.size() && ok(text[at + n])) ++n;
  return n;
}

}  // namespace

std::span<const std::string_view> patterns() { return kPatterns; }

bool is_secret_path(std::string_view rel) {
  const std::vector<std::string_view> parts = split(rel);
  for (std::string_view p : kPatterns) {
    const std::vector<std::string_view> want = split(p.substr(3));  // without "**/"
    for (std::size_t start = 0; start + want.size() <= parts.size(); ++start) {
      bool all = true;
      for (std::size_t k = 0; k < want.size() && all; ++k) all = glob(want[k], parts[start + k]);
      if (all) return true;
    }
  }
  return false;
}

std::string any_case(std::string_view pattern) {
  std::string out;
  for (char c : pattern) {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      out += '[';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      out += ']';
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

bool word_char(char c) { return is_alnum(c) || c == '_'; }
bool word_dash(char c) { return is_alnum(c) || c == '_' || c == '-'; }

// The length of the credential shape that starts at text[i], or 0.
std::size_t shape_at(std::string_view text, std::size_t i) {
  const std::string_view rest = text.substr(i);
  // AWS access key ids: AKIA/ASIA and 16 upper-case letters or digits.
  if ((rest.starts_with("AKIA") || rest.starts_with("ASIA")) && run(text, i + 4, is_upper_or_digit) == 16) return 20;
  // GitHub: ghp_/gho_/ghu_/ghs_/ghr_ and 36 or more, github_pat_ and 22 or more.
  if (rest.size() > 4 && rest.starts_with("gh") && std::string_view("pousr").find(rest[2]) != rest.npos &&
      rest[3] == '_' && run(text, i + 4, is_alnum) >= 36)
    return 4 + run(text, i + 4, is_alnum);
  if (rest.starts_with("github_pat_") && run(text, i + 11, word_char) >= 22) return 11 + run(text, i + 11, word_char);
  // PyPI API tokens are macaroons that start with pypi-AgEIcHlwaS5vcmc (base64 of "pypi.org").
  if (rest.starts_with("pypi-AgEIcHlwaS5vcmc") && run(text, i + 5, word_dash) >= 50)
    return 5 + run(text, i + 5, word_dash);
  // Hugging Face user access tokens: hf_ and 30 or more letters.
  if (rest.starts_with("hf_") && run(text, i + 3, is_alnum) >= 30) return 3 + run(text, i + 3, is_alnum);
  // OpenAI-style secret keys: sk- and 20 or more.
  if (rest.starts_with("sk-") && run(text, i + 3, word_dash) >= 20) return 3 + run(text, i + 3, word_dash);
  // Slack tokens: xoxa-/xoxb-/xoxp-/xoxr-/xoxs-.
  if (rest.size() > 5 && rest.starts_with("xox") && std::string_view("abprs").find(rest[3]) != rest.npos &&
      rest[4] == '-' && run(text, i + 5, word_dash) >= 10)
    return 5 + run(text, i + 5, word_dash);
  // PEM private-key blocks: five dashes, BEGIN, an optional kind (RSA, EC, OPENSSH,
  // ENCRYPTED), PRIVATE KEY and five dashes.
  if (rest.starts_with("-----BEGIN ")) {
    const std::size_t end = rest.find("-----", 11);
    if (end != rest.npos && end < 60 && rest.substr(11, end - 11).ends_with("PRIVATE KEY")) return end + 5;
  }
  return 0;
}

}  // namespace

std::size_t find_token(std::string_view text, std::size_t& length) {
  // Each shape's fixed start is searched with find (memchr-fast), not tried at every byte: a
  // context of small source files is scanned whole before it is sent.
  static constexpr std::string_view kStarts[] = {"AKIA", "ASIA", "gh",  "github_pat_", "pypi-",
                                                 "hf_",  "sk-",  "xox", "-----BEGIN "};
  std::size_t best = std::string_view::npos;
  for (std::string_view start : kStarts) {
    for (std::size_t i = text.find(start); i < best; i = text.find(start, i + 1)) {
      // A token starts a word: "xAKIA..." is not an AWS key id.
      if (i > 0 && word_char(text[i - 1])) continue;
      if (const std::size_t n = shape_at(text, i); n > 0) {
        best = i;
        length = n;
        break;
      }
    }
  }
  return best;
}

}  // namespace envpin::secrets

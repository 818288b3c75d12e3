// SPDX-License-Identifier: Apache-2.0
#include "secrets/rules.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace envpin::secrets {
namespace {

// What credential files are called by the tools that write them: dotenv files, private keys
// and certificate bundles, the credential files of pip/twine, npm, netrc-based clients (wandb,
// Hugging Face), git, AWS, GCP, Azure, Kubernetes, Docker, Terraform, SSH, GnuPG, Kaggle,
// PostgreSQL, Vault, rclone and s3cmd.
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
    "**/.azure",
    "**/.kaggle/kaggle.json",  // the Kaggle API's username and key (~/.kaggle, or KAGGLE_CONFIG_DIR)
    "**/.pgpass",              // libpq's password file
    "**/pgpass.conf",          // its name on Windows
    "**/.vault-token",         // the Vault CLI's token helper file
    "**/rclone.conf",          // rclone's remotes, with their keys and tokens
    "**/.s3cfg",
    "**/.boto",
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

namespace {

// A span of text to replace: [begin, end).
struct Span {
  std::size_t begin;
  std::size_t end;
};

// Where a URL ends in the text that quotes it: whitespace, quotes, angle brackets, a control.
bool ends_url(char c) {
  return std::string_view(" \t'\"`<>").find(c) != std::string_view::npos || static_cast<unsigned char>(c) < 0x20 ||
         c == 0x7f;
}

// The query parameters of `query` (without its '?'): [begin, end) of each, relative to it.
std::vector<Span> parameters(std::string_view query) {
  std::vector<Span> out;
  for (std::size_t start = 0;;) {
    const std::size_t end = std::min(query.find_first_of("&;", start), query.size());
    out.push_back({start, end});
    if (end == query.size()) return out;
    start = end + 1;
  }
}

// anaconda.org and its mirrors put a token in a URL's path: /t/<token>/channel. A segment after
// "t" of at least 8 characters with a digit ("/t/simple/" is a path): its span in `path`, or empty.
Span path_token(std::string_view path) {
  for (std::size_t s = path.find("/t/"); s != std::string_view::npos; s = path.find("/t/", s + 1)) {
    const std::size_t token = s + 3, end = std::min(path.find('/', token), path.size());
    const std::string_view segment = path.substr(token, end - token);
    if (segment.size() >= 8 && segment.find_first_of("0123456789") != std::string_view::npos) return {token, end};
  }
  return {0, 0};
}

// Each URL in `text` after its "://", up to where the text quoting it ends it: `f(begin, url)` with
// its offset in `text`, until `f` returns true (then true).
template <typename F>
bool each_url(std::string_view text, F f) {
  for (std::size_t at = text.find("://"); at != std::string_view::npos; at = text.find("://", at + 3)) {
    const std::size_t begin = at + 3;
    std::size_t end = begin;
    while (end < text.size() && !ends_url(text[end])) ++end;
    if (f(begin, text.substr(begin, end - begin))) return true;
  }
  return false;
}

// The credentials of each URL in `text`: its userinfo, a conda token segment, credential parameters.
void url_spans(std::string_view text, std::vector<Span>& out) {
  each_url(text, [&](std::size_t begin, std::string_view url) {
    const std::size_t host_end = std::min(url.find_first_of("/?#"), url.size());
    if (const std::size_t userinfo = url.substr(0, host_end).rfind('@');
        userinfo != std::string_view::npos && userinfo > 0)
      out.push_back({begin, begin + userinfo});
    const std::size_t query = std::min(url.find('?', host_end), url.size());
    const std::size_t fragment = std::min(url.find('#', host_end), url.size());
    const std::string_view path = url.substr(host_end, std::min(query, fragment) - host_end);
    if (const Span t = path_token(path); t.end > t.begin)
      out.push_back({begin + host_end + t.begin, begin + host_end + t.end});
    if (query >= fragment) return false;
    const std::string_view q = url.substr(query + 1, fragment - query - 1);
    for (const Span& p : parameters(q)) {
      const std::string_view param = q.substr(p.begin, p.end - p.begin);
      const std::size_t eq = param.find('=');
      if (eq != std::string_view::npos && eq + 1 < param.size() && is_credential_parameter(param.substr(0, eq))) {
        const std::size_t value = begin + query + 1 + p.begin + eq + 1;
        out.push_back({value, begin + query + 1 + p.end});
      }
    }
    return false;
  });
}

bool ends_word(char c) { return std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '"' || c == '`'; }

bool same_word(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// netrc's `login NAME`, `password WORD`, `account WORD` and pip's `--config-settings KEY=VALUE`,
// `-C KEY=VALUE`: each keyword only where whitespace follows it ("'password' is" quotes a word).
void word_spans(std::string_view text, std::vector<Span>& out) {
  std::vector<Span> words;
  for (std::size_t i = 0; i < text.size();) {
    while (i < text.size() && ends_word(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !ends_word(text[i])) ++i;
    if (i > start) words.push_back({start, i});
  }
  for (std::size_t k = 0; k < words.size(); ++k) {
    const std::string_view w = text.substr(words[k].begin, words[k].end - words[k].begin);
    // The next word, when only spaces or tabs stand between the two.
    std::optional<Span> next;
    if (k + 1 < words.size()) {
      const std::string_view gap = text.substr(words[k].end, words[k + 1].begin - words[k].end);
      if (!gap.empty() && gap.find_first_not_of(" \t") == std::string_view::npos) next = words[k + 1];
    }
    const bool netrc =
        same_word(w, "login") || same_word(w, "password") || same_word(w, "passwd") || same_word(w, "account");
    if (netrc && next) out.push_back(*next);
    // --config-settings=KEY=VALUE, --config-settings KEY=VALUE, -C KEY=VALUE: the value.
    std::optional<Span> setting;
    for (std::string_view option : {"--config-settings=", "--config-setting="})
      if (w.starts_with(option) && w.size() > option.size())
        setting = Span{words[k].begin + option.size(), words[k].end};
    if ((w == "--config-settings" || w == "--config-setting") && next) setting = next;
    if (w == "-C" && next && text.substr(next->begin, next->end - next->begin).find('=') != std::string_view::npos)
      setting = next;
    if (setting) {
      // KEY=VALUE keeps a setting's name; anything else is hidden whole.
      const std::string_view value = text.substr(setting->begin, setting->end - setting->begin);
      const std::size_t eq = value.find('=');
      const bool named = eq != std::string_view::npos && eq > 0 &&
                         std::all_of(value.begin(), value.begin() + eq,
                                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
      out.push_back({named ? setting->begin + eq + 1 : setting->begin, setting->end});
    }
  }
}

}  // namespace

bool is_credential_parameter(std::string_view name) {
  std::string n;
  for (char c : name) n += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::string_view kNames[] = {"token",
                                                "access_token",
                                                "auth",
                                                "auth_token",
                                                "private_token",
                                                "api_key",
                                                "apikey",
                                                "key",
                                                "password",
                                                "passwd",
                                                "pwd",
                                                "secret",
                                                "client_secret",
                                                "sig",
                                                "signature",
                                                "credential",
                                                "x_amz_credential",
                                                "x_amz_signature",
                                                "x_amz_security_token",
                                                "x_goog_credential",
                                                "x_goog_signature"};
  if (std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames)) return true;
  for (std::string_view suffix : {"_token", "_key", "_secret", "_password", "_signature"})
    if (n.size() > suffix.size() && n.ends_with(suffix)) return true;
  return false;
}

std::string_view credential_parameter(std::string_view url) {
  const std::size_t query = url.find('?');
  if (query == std::string_view::npos) return {};
  const std::size_t fragment = std::min(url.find('#', query), url.size());
  const std::string_view q = url.substr(query + 1, fragment - query - 1);
  for (const Span& p : parameters(q)) {
    const std::string_view param = q.substr(p.begin, p.end - p.begin);
    const std::string_view name = param.substr(0, param.find('='));
    if (is_credential_parameter(name)) return name;
  }
  return {};
}

std::string url_without_credentials(std::string_view url) {
  std::string out;
  const std::size_t scheme = url.find("://");
  std::size_t rest = 0;
  if (scheme != std::string_view::npos) {
    const std::size_t begin = scheme + 3;
    const std::size_t host_end = std::min(url.find_first_of("/?#", begin), url.size());
    const std::size_t userinfo = url.substr(begin, host_end - begin).rfind('@');
    out = std::string(url.substr(0, begin));
    rest = userinfo == std::string_view::npos ? begin : begin + userinfo + 1;
  }
  const std::size_t query = url.find('?', rest);
  if (query == std::string_view::npos) return out + std::string(url.substr(rest));
  const std::size_t fragment = std::min(url.find('#', query), url.size());
  out += url.substr(rest, query - rest);
  const std::string_view q = url.substr(query + 1, fragment - query - 1);
  std::string kept;
  for (const Span& p : parameters(q)) {
    const std::string_view param = q.substr(p.begin, p.end - p.begin);
    if (is_credential_parameter(param.substr(0, param.find('=')))) continue;
    if (!kept.empty()) kept += p.begin > 0 ? q[p.begin - 1] : '&';  // the separator it had
    kept += param;
  }
  if (!kept.empty()) out += "?" + kept;
  return out + std::string(url.substr(fragment));
}

std::string redact(std::string_view text) {
  std::vector<Span> spans;
  std::size_t length = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t found = find_token(text.substr(at), length);
    if (found == std::string_view::npos) break;
    spans.push_back({at + found, at + found + length});
    at += found + length;
  }
  url_spans(text, spans);
  word_spans(text, spans);
  if (spans.empty()) return std::string(text);
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::string out;
  std::size_t done = 0;
  for (const Span& s : spans) {
    if (s.end <= done) continue;  // inside one replaced already
    if (s.begin >= done) {
      out += text.substr(done, s.begin - done);
      out += "<credential>";
    }
    done = s.end;
  }
  return out + std::string(text.substr(done));
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A URL in `text` that carries a credential: a password in its userinfo ("user:password@"), a
// token for its user name ("https://ghp_...@github.com", "https://glpat-...@gitlab.com"), or a
// credential query parameter. "ssh://git@host" and "https://alice@host" carry none.
bool url_with_credentials(std::string_view text) {
  return each_url(text, [](std::size_t, std::string_view url) {
    const std::size_t host_end = std::min(url.find_first_of("/?#"), url.size());
    if (const std::size_t at_sign = url.substr(0, host_end).rfind('@');
        at_sign != std::string_view::npos && at_sign > 0) {
      const std::string_view userinfo = url.substr(0, at_sign);
      const std::size_t colon = userinfo.find(':');
      if (colon != std::string_view::npos && colon + 1 < userinfo.size()) return true;
      const std::string_view user = userinfo.substr(0, colon);
      std::size_t length = 0;
      if (find_token(user, length) != std::string_view::npos) return true;
      const bool digit = user.find_first_of("0123456789") != std::string_view::npos;
      const bool letter =
          std::any_of(user.begin(), user.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
      if (user.size() >= 16 && digit && letter) return true;
    }
    return !credential_parameter(url).empty();
  });
}

}  // namespace

bool is_secret_by_content(std::string_view rel) {
  const std::vector<std::string_view> parts = split(rel);
  if (parts.empty()) return false;
  const std::string name = lower(parts.back());
  if (name == "pip.conf" || name == "pip.ini" || name == ".gitconfig" || name == "config.json") return true;
  // A repository's config: .git/config, a submodule's .git/modules/NAME/config, a bare NAME.git/config.
  return name == "config" &&
         std::any_of(parts.begin(), parts.end() - 1, [](std::string_view p) { return lower(p).ends_with(".git"); });
}

bool is_secret_content(std::string_view rel, std::string_view text) {
  if (text.size() > kContentMax) return true;
  const std::vector<std::string_view> parts = split(rel);
  if (!parts.empty() && lower(parts.back()) == "config.json") {
    // docker's configuration: {"auths": {"REGISTRY": {"auth": "BASE64(user:password)"}}}, or an
    // identity token; a model's config.json has no "auths".
    const std::string t = lower(text);
    const std::size_t auths = t.find("\"auths\"");
    return auths != std::string::npos &&
           (t.find("\"auth\"", auths) != std::string::npos || t.find("\"identitytoken\"", auths) != std::string::npos ||
            t.find("\"registrytoken\"", auths) != std::string::npos);
  }
  if (url_with_credentials(text)) return true;
  // git's http.<url>.extraheader holding an Authorization header (actions/checkout writes one
  // into .git/config: "AUTHORIZATION: basic BASE64").
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = lower(text.substr(start, end - start));
    if (line.find("extraheader") != std::string::npos && line.find("authorization") != std::string::npos) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace envpin::secrets

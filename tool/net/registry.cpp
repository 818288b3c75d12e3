// SPDX-License-Identifier: Apache-2.0
#include "net/registry.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "diag/cursor.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "pin/sha256.hpp"

namespace envpin::net {
namespace {

using diag::Error;
using nlohmann::json;

bool is_loopback(const std::string& registry) {
  const std::string host = registry.substr(
      0, registry.rfind(':') == std::string::npos || registry.front() == '[' ? registry.size() : registry.rfind(':'));
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host.starts_with("127.");
}

// Parses `Bearer realm="...",service="...",scope="..."`.
std::map<std::string, std::string> challenge_params(const std::string& header) {
  std::map<std::string, std::string> out;
  // Each `key="value"`: a run of letters, '=', a quoted value without '"'.
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  for (std::size_t eq = header.find("=\""); eq != std::string::npos; eq = header.find("=\"", eq + 1)) {
    std::size_t key = eq;
    while (key > 0 && letter(header[key - 1])) --key;
    const std::size_t close = header.find('"', eq + 2);
    if (close == std::string::npos) break;
    if (key == eq) continue;
    out[header.substr(key, eq - key)] = header.substr(eq + 2, close - eq - 2);
    eq = close;
  }
  return out;
}

std::string url_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' || c == ':') {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789ABCDEF";
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string registry_error_text(const Response& r) {
  try {
    const json body = json::parse(r.body);
    if (body.contains("errors") && body["errors"].is_array() && !body["errors"].empty()) {
      const json& e = body["errors"][0];
      return e.value("code", "") + (e.contains("message") ? ": " + e.value("message", "") : "");
    }
  } catch (const json::exception&) {
  }
  return "";
}

class Client {
 public:
  Client(const ImageReference& ref, const RegistryOptions& o) : ref_(ref), options_(o) {
    const bool http =
        is_loopback(ref.registry) || std::find(o.insecure.begin(), o.insecure.end(), ref.registry) != o.insecure.end();
    base_ = (http ? "http://" : "https://") + ref.registry + "/v2/" + ref.repository;
  }

  // GET or HEAD of /manifests/<ref> or /blobs/<digest>, with a bearer token when challenged.
  Response get(const std::string& method, const std::string& path, bool manifest) {
    // Registries serve blobs from a CDN by redirect: the bearer token stays with the registry.
    Request request{method, base_ + path, {}, {}, true};
    if (manifest) request.headers.push_back(kManifestAccept);
    if (!token_.empty()) request.headers.push_back("Authorization: Bearer " + token_);
    Response r = fetch(request, answer_options());
    if (r.status == 401 && token_.empty()) {
      const std::string challenge = r.header("www-authenticate");
      if (challenge.rfind("Bearer ", 0) == 0) {
        authenticate(challenge);
        request.headers.push_back("Authorization: Bearer " + token_);
        r = fetch(request, answer_options());
      }
    }
    return r;
  }

  std::string url(const std::string& path) const { return base_ + path; }

  // GET of a blob into a file, verified (net::download); authenticated first by a HEAD.
  std::int64_t download_blob(const std::string& digest, const std::filesystem::path& to, std::int64_t size) {
    const std::string path = "/blobs/" + digest;
    const Response head = get("HEAD", path, false);
    if (head.status != 200 && head.status != 307 && head.status != 302)
      throw Error("cannot fetch " + url(path) + " (HTTP " + std::to_string(head.status) + ")", std::nullopt,
                  "the registry no longer has the locked image; mirror from where 'envpin lock' resolved it");
    Request request{"GET", url(path), {}, {}, true};
    if (!token_.empty()) request.headers.push_back("Authorization: Bearer " + token_);
    return download(request, to, Expected{digest.substr(7), size}, options_.http);
  }

 private:
  // A manifest, an index or a token answer is held in memory: read at most kMaxJsonAnswer of it.
  HttpOptions answer_options() const {
    HttpOptions o = options_.http;
    o.max_body = kMaxJsonAnswer;
    return o;
  }

  void authenticate(const std::string& challenge) {
    auto params = challenge_params(challenge);
    if (params["realm"].empty())
      throw Error("registry " + ref_.registry + " sent an unusable auth challenge: " + challenge);
    std::string url = params["realm"] + "?service=" + url_escape(params["service"]);
    url +=
        "&scope=" + url_escape(params["scope"].empty() ? "repository:" + ref_.repository + ":pull" : params["scope"]);
    const Response r = fetch(Request{"GET", url, {}, {}, false}, answer_options());
    if (r.status != 200)
      throw Error("registry " + ref_.registry + " refused an anonymous token for " + ref_.repository + " (HTTP " +
                      std::to_string(r.status) + " from " + url + ")",
                  std::nullopt, "check the repository name; private repositories are not supported yet");
    try {
      const json body = json::parse(r.body);
      token_ = body.value("token", body.value("access_token", ""));
    } catch (const json::exception&) {
    }
    if (token_.empty()) throw Error("the token service " + url + " answered without a token");
  }

  ImageReference ref_;
  RegistryOptions options_;
  std::string base_;
  std::string token_;
};

bool is_sha256_digest(const std::string& d) {
  return d.size() == 71 && d.starts_with("sha256:") && d.find_first_not_of("0123456789abcdef", 7) == std::string::npos;
}

json parse_manifest(const Response& r, const std::string& url) {
  try {
    json j = json::parse(r.body);
    if (!j.is_object()) throw json::type_error::create(302, "not an object", nullptr);
    return j;
  } catch (const json::exception&) {
    throw Error("the registry returned a manifest that is not valid JSON (" + url + ")", std::nullopt,
                "the registry or a proxy in front of it is misbehaving");
  }
}

// GETs by digest and checks the bytes hash to it.
std::string get_verified(Client& client, const std::string& path, const std::string& digest, bool manifest) {
  const Response r = client.get("GET", path, manifest);
  if (r.status != 200) throw Error("cannot fetch " + client.url(path) + " (HTTP " + std::to_string(r.status) + ")");
  const std::string actual = "sha256:" + pin::sha256_hex(r.body);
  if (actual != digest)
    throw Error("content of " + client.url(path) + " hashes to " + actual + ", not " + digest, std::nullopt,
                "the registry served different bytes than it announced; do not trust it");
  return r.body;
}

// A field of a registry's JSON answer, read by its type: a value of another type (a number for a
// digest, an array for "os", null for an entry) is one line naming the answer's URL and the field,
// never a type error of the JSON library. Absent: `fallback`.
std::string text_field(const json& j, const char* key, const std::string& url, const std::string& where,
                       const std::string& fallback = "") {
  if (!j.is_object()) throw Error("the registry's answer at " + url + ": " + where + " is not an object");
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_string())
    throw Error(
        "the registry's answer at " + url + ": " + where + "." + key + " is " + it->type_name() + ", not a string",
        std::nullopt, "the registry or a proxy in front of it is misbehaving");
  return it->get<std::string>();
}

std::string platform_of(const json& p, const std::string& url, const std::string& where) {
  const std::string arch = text_field(p, "architecture", url, where);
  std::string out = text_field(p, "os", url, where) + "/" + arch;
  const std::string variant = text_field(p, "variant", url, where);
  if (!variant.empty() && arch != "arm64") out += "/" + variant;
  return out;
}

std::string config_digest(const json& manifest, const std::string& url) {
  if (!manifest.contains("config") || !manifest["config"].is_object() || !manifest["config"].contains("digest"))
    throw Error("the image manifest at " + url + " has no config digest");
  return text_field(manifest["config"], "digest", url, "config");
}

// The bytes a node pulls for an image manifest: its layers' sizes, as the manifest states them
// (the registry's data: each a whole number up to 1 TiB, at most 1000 layers), else 0.
std::int64_t layers_size(const json& manifest) {
  if (!manifest.contains("layers") || !manifest["layers"].is_array() || manifest["layers"].size() > 1000) return 0;
  std::int64_t sum = 0;
  for (const json& layer : manifest["layers"]) {
    if (!layer.is_object() || !layer.contains("size") || !layer["size"].is_number_integer()) return 0;
    const std::int64_t n = layer["size"].get<std::int64_t>();
    if (n < 0 || n > (std::int64_t{1} << 40)) return 0;
    sum += n;
  }
  return sum <= (std::int64_t{1} << 40) ? sum : 0;
}

// host[:port]: dot-separated labels of letters, digits and '-', or "localhost", then an optional
// numeric port.
bool is_registry_host(std::string_view h) {
  if (const std::size_t colon = h.find(':'); colon != std::string_view::npos) {
    const std::string_view port = h.substr(colon + 1);
    if (port.empty() || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
    h = h.substr(0, colon);
  }
  if (h.empty()) return false;
  for (std::size_t start = 0;;) {
    const std::size_t dot = h.find('.', start);
    const std::string_view label =
        h.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !diag::only_ascii(label, "-")) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// component(/component)*, each [a-z0-9]+ joined by '.', '_', '__' or a run of '-'.
bool is_repository_path(std::string_view p) {
  const auto alnum = [](char c) { return diag::is_digit(c) || (c >= 'a' && c <= 'z'); };
  diag::Cursor c{p};
  for (;;) {
    if (c.span(alnum).empty()) return false;
    if (c.done()) return true;
    if (c.eat("/")) continue;
    if (!(c.eat("__") || c.eat(".") || c.eat("_") || !c.span([](char x) { return x == '-'; }).empty())) return false;
  }
}

}  // namespace

ImageReference parse_image_reference(std::string_view text) {
  // Reference grammar of distribution/reference, simplified to what FROM accepts:
  // [host[:port]/]component(/component)*[:tag][@sha256:64 hex].
  const std::string s(text);
  const Error invalid("invalid image reference '" + s + "'", std::nullopt,
                      "write it as docker does: [registry/]name[:tag][@sha256:digest]");
  std::string_view rest = text;
  std::optional<std::string> digest;
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view d = rest.substr(at + 1);
    if (!d.starts_with("sha256:") || d.size() != 71 ||
        d.find_first_not_of("0123456789abcdef", 7) != std::string_view::npos)
      throw invalid;
    digest = std::string(d);
    rest = rest.substr(0, at);
  }
  std::string first;
  if (const std::size_t slash = rest.find('/');
      slash != std::string_view::npos && is_registry_host(rest.substr(0, slash))) {
    first = std::string(rest.substr(0, slash));
    rest = rest.substr(slash + 1);
  }
  std::optional<std::string> tag;
  if (const std::size_t colon = rest.find(':'); colon != std::string_view::npos) {
    const std::string_view t = rest.substr(colon + 1);
    const auto word = [](char c) {
      return diag::is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    if (t.empty() || t.size() > 128 || !word(t[0]) || !diag::only_ascii(t, "_.-")) throw invalid;
    tag = std::string(t);
    rest = rest.substr(0, colon);
  }
  if (!is_repository_path(rest)) throw invalid;
  ImageReference ref;
  // A first component without '.', ':' or "localhost" is a Docker Hub path, not a host.
  if (!first.empty() && first.find('.') == std::string::npos && first.find(':') == std::string::npos &&
      first != "localhost") {
    ref.repository = first + "/" + std::string(rest);
    first.clear();
  } else {
    ref.repository = std::string(rest);
  }
  ref.registry = first.empty() || first == "docker.io" || first == "index.docker.io" ? "registry-1.docker.io" : first;
  if (ref.registry == "registry-1.docker.io" && ref.repository.find('/') == std::string::npos)
    ref.repository = "library/" + ref.repository;
  ref.tag = tag ? *tag : (digest ? "" : "latest");
  ref.digest = digest.value_or("");
  ref.written = s.substr(0, s.find('@'));
  return ref;
}

ResolvedImage resolve_image(const std::string& reference, const std::vector<std::string>& platforms,
                            const RegistryOptions& options) {
  const ImageReference ref = parse_image_reference(reference);
  Client client(ref, options);
  ResolvedImage out;
  out.requested = reference;
  out.registry = ref.registry;
  out.repository = ref.repository;
  const std::string wanted = ref.digest.empty() ? ref.tag : ref.digest;
  const std::string path = "/manifests/" + wanted;

  const Response head = client.get("HEAD", path, true);
  if (head.status == 404) {
    // HEAD has no body: GET for the registry's own words.
    const Response get = client.get("GET", path, true);
    const std::string why = registry_error_text(get);
    throw Error("image " + ref.registry + "/" + ref.repository + ": " + (ref.digest.empty() ? "tag '" : "digest '") +
                    wanted + "' not found (HTTP 404" + (why.empty() ? "" : " " + why) + " from " + client.url(path) +
                    ")",
                std::nullopt, ref.digest.empty() ? "check the tag exists in that repository" : "check the digest");
  }
  if (head.status == 401 || head.status == 403)
    throw Error("registry " + ref.registry + " refused access to " + ref.repository + " (HTTP " +
                    std::to_string(head.status) + " from " + client.url(path) + ")",
                std::nullopt, "check the repository name; private repositories are not supported yet");
  if (head.status != 200)
    throw Error("registry " + ref.registry + " answered HTTP " + std::to_string(head.status) + " for " +
                client.url(path));
  std::string digest = head.header("docker-content-digest");
  if (!ref.digest.empty()) digest = ref.digest;

  // GET once and hash the exact bytes: the spec says clients MUST verify content by digest.
  const Response body = client.get("GET", path, true);
  if (body.status != 200)
    throw Error("registry " + ref.registry + " answered HTTP " + std::to_string(body.status) + " for GET " +
                client.url(path));
  const std::string actual = "sha256:" + pin::sha256_hex(body.body);
  if (!digest.empty() && digest != actual)
    throw Error("manifest " + client.url(path) + " hashes to " + actual + " but the registry announced " + digest,
                std::nullopt, "the registry served different bytes than it announced; do not trust it");
  out.digest = actual;
  const json manifest = parse_manifest(body, client.url(path));
  const std::string url = client.url(path);
  out.media_type = text_field(manifest, "mediaType", url, "the manifest", body.header("content-type"));

  if (manifest.contains("manifests")) {  // an OCI index or Docker manifest list
    const json& entries = manifest["manifests"];
    if (!entries.is_array())
      throw Error("the registry's answer at " + url + ": manifests is " + entries.type_name() + ", not an array",
                  std::nullopt, "the registry or a proxy in front of it is misbehaving");
    // Each entry's platform ("" without one), read once, every field by its type.
    std::vector<std::string> entry_platform;
    std::vector<std::string> available;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string where = "manifests[" + std::to_string(i) + "]";
      if (!entries[i].is_object()) text_field(entries[i], "digest", url, where);  // throws: not an object
      entry_platform.push_back(
          entries[i].contains("platform") ? platform_of(entries[i]["platform"], url, where + ".platform") : "");
      if (!entry_platform.back().empty()) available.push_back(entry_platform.back());
    }
    for (const std::string& want : platforms) {
      const auto at = std::find(entry_platform.begin(), entry_platform.end(), want);
      const auto it = at == entry_platform.end() ? entries.end() : entries.begin() + (at - entry_platform.begin());
      if (it == entries.end()) {
        std::string list;
        for (const auto& a : available)
          if (a != "unknown/unknown") list += (list.empty() ? "" : ", ") + a;
        throw Error("image " + reference + " has no " + want + " manifest (it has: " + list + ")", std::nullopt,
                    "pick a tag built for " + want + ", or remove it from platforms");
      }
      const std::string m_digest =
          text_field(*it, "digest", url, "manifests[" + std::to_string(at - entry_platform.begin()) + "]");
      if (!is_sha256_digest(m_digest))
        throw Error("the registry's answer at " + url + " names " + diag::quote(m_digest) + " for " + want +
                        ", not a sha256 digest",
                    std::nullopt, "the registry or a proxy in front of it is misbehaving");
      const std::string m_path = "/manifests/" + m_digest;
      const json platform_manifest =
          parse_manifest(Response{200, {}, get_verified(client, m_path, m_digest, true)}, client.url(m_path));
      out.platforms.push_back(
          {want, m_digest, config_digest(platform_manifest, client.url(m_path)), layers_size(platform_manifest)});
    }
    return out;
  }

  // A single-platform image: its config says which platform it is.
  const std::string config = config_digest(manifest, client.url(path));
  const json config_json = [&] {
    try {
      return json::parse(get_verified(client, "/blobs/" + config, config, false));
    } catch (const json::exception&) {
      throw Error("the image config " + client.url("/blobs/" + config) + " is not valid JSON");
    }
  }();
  const std::string actual_platform = platform_of(config_json, client.url("/blobs/" + config), "the image config");
  for (const std::string& want : platforms)
    if (want != actual_platform)
      throw Error("image " + reference + " is " + actual_platform + " only, but platforms asks for " + want,
                  std::nullopt,
                  "use a multi-platform tag, or build for " + actual_platform +
                      " (running it elsewhere ends in 'exec format error')");
  for (const std::string& want : platforms) out.platforms.push_back({want, actual, config, layers_size(manifest)});
  return out;
}

namespace {

// A descriptor of the manifest: its digest (sha256 only) and a size from 1 byte to 1 TiB.
std::pair<std::string, std::int64_t> descriptor(const json& d, const std::string& url) {
  const Error bad("the image manifest at " + url + " has a malformed descriptor", std::nullopt,
                  "the registry is misbehaving; do not mirror from it");
  if (!d.is_object() || !d.contains("digest") || !d["digest"].is_string() || !d.contains("size") ||
      !d["size"].is_number_integer())
    throw bad;
  const std::string digest = d["digest"].get<std::string>();
  const std::int64_t size = d["size"].get<std::int64_t>();
  if (!is_sha256_digest(digest) || size < 0 || size > (std::int64_t{1} << 40)) throw bad;
  return {digest, size};
}

}  // namespace

MirroredImage mirror_image(const std::string& reference, const std::string& manifest_digest,
                           const std::filesystem::path& dir, const std::vector<std::filesystem::path>& shared,
                           const RegistryOptions& options, const BlobProgress& progress) {
  if (!is_sha256_digest(manifest_digest)) throw Error("not a sha256 digest: " + diag::quote(manifest_digest));
  const ImageReference ref = parse_image_reference(reference);
  Client client(ref, options);
  const std::string path = "/manifests/" + manifest_digest;
  const std::string body = get_verified(client, path, manifest_digest, true);
  if (body.size() > 4 * 1024 * 1024)
    throw Error("the manifest " + client.url(path) + " is larger than 4 MiB", std::nullopt,
                "the registry is misbehaving; do not mirror from it");
  const json manifest = parse_manifest(Response{200, {}, body}, client.url(path));
  if (manifest.contains("manifests"))
    throw Error(manifest_digest + " of " + reference + " is an index, not an image manifest", std::nullopt,
                "mirror the lock's platform manifest (platform-manifests.manifest)");
  std::vector<std::pair<std::string, std::int64_t>> wanted;
  if (!manifest.contains("config")) throw Error("the image manifest at " + client.url(path) + " has no config");
  wanted.push_back(descriptor(manifest["config"], client.url(path)));
  if (!manifest.contains("layers") || !manifest["layers"].is_array() || manifest["layers"].size() > 1000)
    throw Error("the image manifest at " + client.url(path) + " has no layer list (or more than 1000 layers)");
  for (const json& layer : manifest["layers"]) wanted.push_back(descriptor(layer, client.url(path)));

  std::filesystem::create_directories(dir);
  MirroredImage out;
  out.media_type =
      text_field(manifest, "mediaType", client.url(path), "the manifest", "application/vnd.oci.image.manifest.v1+json");
  for (const auto& blob : wanted) {
    // Named, not bound: a lambda below uses them (clang 14 cannot capture structured bindings).
    const std::string& digest = blob.first;
    const std::int64_t size = blob.second;
    const std::filesystem::path file = dir / digest.substr(7);
    if (pin::file_matches(file, digest.substr(7), size)) {
      out.kept += size;
      continue;
    }
    std::error_code ec;
    std::filesystem::remove_all(file, ec);  // not the blob: never kept
    const auto twin = std::find_if(shared.begin(), shared.end(), [&](const std::filesystem::path& other) {
      return pin::file_matches(other / digest.substr(7), digest.substr(7), size);
    });
    if (twin != shared.end()) std::filesystem::create_hard_link(*twin / digest.substr(7), file, ec);
    if (twin != shared.end() && !ec) {
      out.kept += size;
      continue;
    }
    if (progress) progress(digest, size);
    out.fetched += client.download_blob(digest, file, size);
  }
  // The manifest last: a directory that has it has every blob it names.
  io::write_atomic(dir / "version", "Directory Transport Version: 1.1\n", false);
  io::write_atomic(dir / "manifest.json", body, false);
  return out;
}

}  // namespace envpin::net

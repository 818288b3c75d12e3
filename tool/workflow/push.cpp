// SPDX-License-Identifier: Apache-2.0
// Facts the push relies on, with their sources:
//   - `docker push` prints "<tag>: digest: sha256:<hex> size: <n>" on stdout for each tag it
//     pushed, made by the daemon (moby distribution/push_v2.go; daemon/containerd/image_push.go on
//     the containerd store, where it is the index's digest); a deferred note may follow it.
//   - docker 20.10 prints the digest of the manifest it sent, hashed by the daemon, even when the
//     registry's PUT answers another (tests/e2e/push.sh's lying registry showed it). A `docker pull`
//     of that digest proves nothing while the image is local: the daemon only HEADs the manifest
//     and finds it "up to date" (seen there too). So the manifest is read back with skopeo
//     (`inspect --raw`, containers/skopeo docs/skopeo-inspect.1.md) and its bytes hashed here: the
//     registry serves exactly that manifest, found by digest, never by looking the tag up again
//     (another push may have moved it).
//   - The daemon removes the Dockerfile from a tar context when .dockerignore names it (moby
//     builder/remotecontext/detect.go, removeDockerfile), so envpin's push Dockerfile, named as the
//     generated .dockerignore's envpin temporaries are, is not copied into the image.
#include "workflow/push.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <tuple>

#include "diag/cursor.hpp"
#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/atomic_file.hpp"
#include "io/json_input.hpp"
#include "io/process.hpp"
#include "io/state_dir.hpp"
#include "jobs/project.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"
#include "render/code.hpp"
#include "scan/ignore.hpp"
#include "scan/send_set.hpp"
#include "workflow/context.hpp"
#include "workflow/generate.hpp"
#include "workflow/project.hpp"

namespace envpin::workflow {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;

namespace {

constexpr std::size_t kRecordMax = 64 * 1024;
// Named as envpin's temporary files are, which the generated .dockerignore leaves out
// (**/.*.envpin-*): the daemon then removes it from the context before COPY sees it.
constexpr const char* kPushDockerfile = ".envpin/.push.Dockerfile.envpin-push";

// Never in the pushed image: the record and the files generate writes the digest into (in the
// image they would change the tree the digest was taken from).
std::vector<std::string> left_out(const manifest::Manifest& m) {
  return {".envpin/push.json", m.outputs.record.value, m.outputs.kubernetes.value, m.outputs.enroot.value,
          m.outputs.apptainer.value};
}

bool hex64(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return diag::is_digit(c) || (c >= 'a' && c <= 'f'); });
}
bool sha256_digest(std::string_view s) { return s.starts_with("sha256:") && hex64(s.substr(7)); }

// An image name as run.sh prints it: envpin/NAME:TAG (or ENVPIN_IMAGE's), one word.
bool image_name(std::string_view s) {
  return !s.empty() && s.size() <= 255 && s.front() != '-' && diag::only_ascii(s, "._/:@-");
}

std::string tag_of(const std::string& reference) {
  const std::size_t slash = reference.rfind('/');
  const std::size_t colon = reference.rfind(':');
  return colon != std::string::npos && colon > slash ? reference.substr(colon + 1) : std::string();
}

// A temporary directory, removed with what is in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "envpin-push.XXXXXX").string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr)
      throw Error("cannot create a temporary directory for the build context", std::nullopt,
                  "set TMPDIR to a writable directory with room for the project");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

Error no_state_directory() {
  return Error(
      "envpin push keeps its own copy of the record in the user's state directory, and neither XDG_STATE_HOME nor "
      "HOME names one",
      std::nullopt, "set HOME (or XDG_STATE_HOME) to an absolute directory of your own");
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

}  // namespace

fs::path push_record_path(const manifest::Manifest& m) { return m.project_dir / ".envpin" / "push.json"; }

PushRecord parse_push_record(const std::string& text, const fs::path& file) {
  const std::string shown = file.generic_string();
  const std::string hint = "run 'envpin push' again: it writes the record whole";
  const auto broken = [&](const std::string& why) {
    return Error(shown + " is not envpin push's record: " + why, Location{shown, 0, 0}, hint);
  };
  if (text.size() > kRecordMax) throw broken("it is larger than 64 KiB");
  bool too_deep = false;
  const nlohmann::json j = io::parse_bounded_json(text, &too_deep);
  if (too_deep || !j.is_object()) throw broken("not a JSON object");
  PushRecord r;
  const std::pair<const char*, std::string*> fields[] = {
      {"reference", &r.reference}, {"digest", &r.digest}, {"image", &r.image}, {"tree", &r.tree}};
  if (j.size() != std::size(fields)) throw broken("it must hold reference, digest, image and tree, nothing else");
  for (const auto& [key, value] : fields) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string()) throw broken(std::string("no string '") + key + "'");
    *value = it->get<std::string>();
  }
  if (!manifest::is_push_reference(r.reference) || tag_of(r.reference).empty())
    throw broken("reference " + diag::quote(r.reference) + " is not REGISTRY/REPOSITORY:TAG");
  if (!sha256_digest(r.digest)) throw broken("digest " + diag::quote(r.digest) + " is not sha256:<64 hex>");
  if (!sha256_digest(r.tree)) throw broken("tree " + diag::quote(r.tree) + " is not sha256:<64 hex>");
  if (!image_name(r.image)) throw broken("image " + diag::quote(r.image) + " is not an image name");
  return r;
}

std::optional<PushRecord> read_push_record(const manifest::Manifest& m) {
  const fs::path file = push_record_path(m);
  const fs::path shown = shown_path(m.project_dir, file.lexically_relative(m.project_dir).generic_string());
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (!fs::exists(st)) return std::nullopt;
  if (!fs::is_regular_file(st))
    throw Error(shown.generic_string() + " is not a regular file", Location{shown.generic_string(), 0, 0},
                "remove it and run 'envpin push': envpin writes the record as a file");
  if (fs::file_size(file, ec) > kRecordMax)
    throw Error(shown.generic_string() + " is not envpin push's record: it is larger than 64 KiB",
                Location{shown.generic_string(), 0, 0}, "run 'envpin push' again: it writes the record whole");
  const auto text = io::read_file(file);
  if (!text) throw Error("cannot read " + shown.generic_string());
  return parse_push_record(*text, shown);
}

fs::path private_record_path(const manifest::Manifest& m) {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  if (!(xdg && xdg[0] == '/') && !(home && home[0] == '/')) return {};
  std::error_code ec;
  const fs::path project = fs::weakly_canonical(fs::absolute(m.project_dir, ec), ec);
  return io::state_root() / "push" / (pin::sha256_hex(project.string()) + ".json");
}

void keep_push_record(const manifest::Manifest& m, const PushRecord& r) {
  const fs::path file = private_record_path(m);
  if (file.empty()) throw no_state_directory();
  // Held as envpin's scripts are: a directory of this user's only, the file read-only, replaced whole.
  io::hold_file(file.parent_path(), file.filename().string(), push_record_json(r));
}

std::string push_record_unvouched(const manifest::Manifest& m, const PushRecord& r) {
  const fs::path file = private_record_path(m);
  const std::string none =
      "envpin push did not record it on this machine (its own copy, kept outside the project, is missing)";
  if (file.empty()) return none + "; neither XDG_STATE_HOME nor HOME is set";
  std::string text;
  switch (io::read_regular(file, kRecordMax, text)) {
    case io::ReadStatus::ok:
      break;
    case io::ReadStatus::missing:
      return none;
    default:
      return "envpin push's own copy of it, " + file.generic_string() + ", cannot be read";
  }
  PushRecord kept;
  try {
    kept = parse_push_record(text, file);
  } catch (const Error&) {
    return "envpin push's own copy of it, " + file.generic_string() + ", is not a record";
  }
  for (const auto& [what, a, b] :
       {std::tuple{"digest", &r.digest, &kept.digest}, std::tuple{"reference", &r.reference, &kept.reference},
        std::tuple{"tree", &r.tree, &kept.tree}, std::tuple{"image", &r.image, &kept.image}})
    if (*a != *b)
      return std::string("its ") + what + " is not the one envpin push recorded on this machine (its own copy is " +
             "kept outside the project, where no job writes)";
  return "";
}

bool has_private_record(const manifest::Manifest& m) {
  const fs::path file = private_record_path(m);
  std::error_code ec;
  return !file.empty() && fs::exists(fs::symlink_status(file, ec));
}

std::string registry_unvouched(const PushRecord& r) {
  if (io::find_on_path("skopeo").empty())
    return "skopeo, which would ask the registry for it, is not on PATH (apt-get install skopeo)";
  const std::string repository = push_repository(r.reference);
  const std::string by_digest = repository + "@" + r.digest;
  // A manifest is small: an answer past 16 MiB is not one.
  const io::ProcessResult read = io::run_process(manifest_read_argv(repository, by_digest, {}), {}, 16 << 20);
  if (read.exit_code == 0 && "sha256:" + pin::sha256_hex(read.out) == r.digest) return "";
  return "the registry does not serve its digest in " + repository +
         (read.exit_code != 0 ? " (skopeo: " + diag::printable(first_line(read.err)) + ")"
                              : " (what it serves hashes to sha256:" + pin::sha256_hex(read.out) + ")");
}

std::string push_record_json(const PushRecord& r) {
  nlohmann::ordered_json j;
  j["reference"] = r.reference;
  j["digest"] = r.digest;
  j["image"] = r.image;
  j["tree"] = r.tree;
  return j.dump(2) + "\n";
}

std::string digest_from_push_output(std::string_view output, std::string_view tag) {
  const std::string prefix = std::string(tag) + ": digest: ";
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.starts_with(prefix)) continue;
    const std::string rest = line.substr(prefix.size());
    const std::size_t space = rest.find(' ');
    const std::string digest = rest.substr(0, space);
    if (sha256_digest(digest) && space != std::string::npos && rest.substr(space).starts_with(" size: ")) return digest;
  }
  return {};
}

std::string push_repository(const std::string& reference) {
  const std::string tag = tag_of(reference);
  return tag.empty() ? reference : reference.substr(0, reference.size() - tag.size() - 1);
}

std::string push_tree(const manifest::Manifest& m, const std::vector<render::Artifact>& planned) {
  const fs::path root = m.project_dir;
  scan::IgnoreRules rules = scan::IgnoreRules::from_file(root / m.outputs.dockerignore.value);
  for (const std::string& p : left_out(m)) rules.add("/" + p);
  scan::SendRules send;
  send.rules = &rules;
  for (const auto& a : m.context_allow_secrets) send.allow_secrets.push_back(a.value);
  send.carrier = "the pushed image would carry";
  send.hint = "remove it (and rotate it), or add the file to context.exclude in " + m.file;
  const std::vector<std::string> paths = scan::send_set(root, send, m.project_dir.generic_string()).paths;
  std::map<std::string, const render::Artifact*> ours;
  for (const auto& a : planned) ours[a.path] = &a;
  pin::Sha256 tree;
  const auto add = [&](const std::string& line) { tree.update(line.data(), line.size()); };
  for (const std::string& rel : paths) {
    const fs::path full = root / rel;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) throw Error("cannot stat " + full.string());
    if (const auto it = ours.find(rel); it != ours.end()) {
      add("f " + rel + (it->second->executable ? " 0755 " : " 0644 ") + pin::sha256_hex(it->second->bytes) + "\n");
    } else if (S_ISLNK(st.st_mode)) {
      add("l " + rel + " " + fs::read_symlink(full).generic_string() + "\n");
    } else if (S_ISDIR(st.st_mode)) {
      add("d " + rel + "\n");
    } else if (S_ISREG(st.st_mode)) {
      add("f " + rel + ((st.st_mode & 0111) ? " 0755 " : " 0644 ") + pin::sha256_file(full) + "\n");
    }
  }
  // A planned artifact the context would send but that is not written yet changes the tree too.
  for (const auto& a : planned)
    if (!std::binary_search(paths.begin(), paths.end(), a.path) && !fs::exists(root / a.path) &&
        !rules.excluded(a.path))
      add("f " + a.path + " new " + pin::sha256_hex(a.bytes) + "\n");
  return "sha256:" + tree.hex();
}

std::string registry_host(const std::string& registry) {
  if (registry.starts_with("[")) {
    const std::size_t close = registry.find(']');
    return close == std::string::npos ? registry : registry.substr(1, close - 1);
  }
  return registry.substr(0, registry.rfind(':'));
}

bool loopback_address(std::string_view address) {
  const std::string a(address);
  unsigned char v4[4], v6[16];
  if (::inet_pton(AF_INET, a.c_str(), v4) == 1) return v4[0] == 127;
  if (::inet_pton(AF_INET6, a.c_str(), v6) != 1) return false;
  static constexpr unsigned char kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::equal(v6, v6 + 16, kLoopback) || (std::equal(v6, v6 + 12, kMapped) && v6[12] == 127);
}

std::vector<std::string> host_addresses(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::string> out;
  if (host.empty() || ::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return out;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* addr = a->ai_family == AF_INET
                           ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr)
                       : a->ai_family == AF_INET6
                           ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr)
                           : nullptr;
    if (addr && ::inet_ntop(a->ai_family, addr, text, sizeof text)) out.emplace_back(text);
  }
  ::freeaddrinfo(found);
  return out;
}

bool registry_without_tls(const std::string& registry, const std::vector<std::string>& insecure,
                          std::vector<std::string> (*resolve)(const std::string&)) {
  if (std::find(insecure.begin(), insecure.end(), registry) != insecure.end()) return true;
  // docker's rule (moby registry/config.go, isSecureIndex): a registry whose host resolves into
  // 127.0.0.0/8 or ::1 is insecure. Here every address must be loopback: one that is not could be
  // the one connected to, and skopeo would send the login's Authorization header in clear.
  const std::vector<std::string> addresses = resolve(registry_host(registry));
  return !addresses.empty() && std::all_of(addresses.begin(), addresses.end(), loopback_address);
}

std::vector<std::string> manifest_read_argv(const std::string& repository, const std::string& by_digest,
                                            const std::vector<std::string>& insecure) {
  const std::string registry = repository.substr(0, repository.find('/'));
  std::vector<std::string> argv{"skopeo", "inspect", "--raw", "--retry-times", "2"};
  const char* config_dir = std::getenv("DOCKER_CONFIG");
  const char* home = std::getenv("HOME");
  const fs::path config = config_dir && *config_dir ? fs::path(config_dir) / "config.json"
                          : home && *home           ? fs::path(home) / ".docker" / "config.json"
                                                    : fs::path();
  std::error_code ec;
  if (!config.empty() && fs::is_regular_file(config, ec)) argv.insert(argv.end(), {"--authfile", config.string()});
  const fs::path certs = fs::path("/etc/docker/certs.d") / registry;
  if (fs::is_directory(certs, ec))
    argv.insert(argv.end(), {"--cert-dir", certs.string()});
  else if (registry_without_tls(registry, insecure))
    argv.push_back("--tls-verify=false");
  argv.push_back("docker://" + by_digest);
  return argv;
}

void require_pushed(const manifest::Manifest& m) {
  const std::string fix = "run 'envpin push', then 'envpin generate'";
  if (!m.jobs || !m.jobs->push)
    throw Error(
        "--pushed submits " + m.outputs.enroot.value + ", which runs the image envpin push sends: jobs.push is not set",
        Location{m.file, 0, 0},
        "set jobs.push to the registry repository, e.g. 'push: registry.example.com/team/" + m.name.value + "'");
  const Plan judged = plan(m, "", std::nullopt, true);
  if (!judged.env.pushed)
    throw Error("envpin push has not recorded an image for this project yet", Location{".envpin/push.json", 0, 0}, fix);
  if (!judged.env.pushed->stale.empty())
    throw Error(judged.env.pushed->stale + ": its digest is not this project's", Location{".envpin/push.json", 0, 0},
                fix);
  for (const render::Artifact& a : judged.artifacts)
    if (a.path == m.outputs.enroot.value && io::read_file(m.project_dir / a.path) != a.bytes)
      throw Error(a.path + " does not name the pushed image " + judged.env.pushed->reference, Location{m.file, 0, 0},
                  "run 'envpin generate --manifest " + m.file + "'");
}

Pushed push(const PushRequest& o, std::ostream& log, diag::Progress& progress) {
  const jobs::Project p = jobs::load_project(o.manifest);
  const manifest::Manifest& m = p.m;
  std::string reference = o.reference;
  if (reference.empty() && m.jobs->push) reference = m.jobs->push->value;
  if (reference.empty())
    throw Error("there is no registry to push to", Location{m.file, 0, 0},
                "set jobs.push in " + m.file + " (e.g. 'push: registry.example.com/team/" + m.name.value +
                    "'), or name it: envpin push registry.example.com/team/" + m.name.value);
  if (!manifest::is_push_reference(reference))
    throw Error("invalid push reference " + diag::quote(reference), std::nullopt,
                reference.find('@') != std::string::npos
                    ? "leave the digest out: the registry answers it"
                    : "write REGISTRY/REPOSITORY[:TAG], the registry named and the repository in lower case, e.g. "
                      "registry.example.com/team/train");
  // Where the record goes, judged before anything is built: no link at .envpin/ or at the record,
  // and a state directory outside the project for envpin's own copy.
  io::owned_path(m.project_dir, push_record_path(m));
  if (private_record_path(m).empty()) throw no_state_directory();
  require_pinned(p);
  const Plan planned = plan(m);
  const std::string engine = jobs::container_engine();
  if (engine != "docker")
    throw Error("envpin push builds and pushes with docker; the engine here is " + engine, std::nullopt,
                "run it where docker runs (ENVPIN_ENGINE=docker): podman's push is not supported yet");
  const std::string tree = push_tree(m, planned.artifacts);
  std::string tag = tag_of(reference);
  if (tag.empty()) {
    tag = tree.substr(7, 16);  // the same project, the same tag: pushing it again sends nothing
    reference += ":" + tag;
  }
  const std::string repository = push_repository(reference);

  // 1. The job image, as run.sh builds it (its build's output goes to stderr).
  log << "envpin: the job image (sh " << p.run_script.generic_string() << " --prepare)\n" << std::flush;
  std::string prepared;
  // The held run.sh (require_pinned held it from the plan it checked), never the tree's.
  std::vector<std::string> prepare = jobs::run_script_argv(p);
  prepare.push_back("--prepare");
  int rc = io::run_attached(prepare, {"ENVPIN_ENGINE=" + engine}, &prepared);
  std::string image;
  {
    std::istringstream lines(prepared);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) image = line;
  }
  if (rc != 0 || !image_name(image))
    throw Error("the job image could not be built (sh " + p.run_script.generic_string() + " --prepare exited " +
                    std::to_string(rc) + ")",
                std::nullopt, "fix what its output above names, then run envpin push again");

  // 2. The image with the project in it, from the build context's tar (.dockerignore and the
  //    secret rules applied, as `envpin context` writes it).
  const TempDir temp;
  ContextRequest c;
  c.manifest = o.manifest;
  c.output = (temp.path / "context.tar").string();
  c.leave_out = left_out(m);
  const std::string uid = std::to_string(m.user.uid.value);
  // The workdir, a manifest value, in the exec form through the Dockerfile escaper (as the
  // generated Dockerfile's COPY lines); the image name is run.sh's, checked above.
  c.extra.emplace_back(kPushDockerfile, "FROM " + image + "\nCOPY --chown=" + uid + ":" + uid + " " +
                                            render::Code::dockerfile_args({".", m.workdir.value}).text() + "\n");
  write_context(c, progress);
  if (push_tree(m, planned.artifacts) != tree)
    throw Error("the project changed while envpin push packed it", std::nullopt, "run envpin push again");
  log << "envpin: building " << reference << " (" << image << " and the project at " << m.workdir.value << ")\n"
      << std::flush;
  std::vector<std::string> build{engine, "build"};
  if (planned.env.platforms.size() == 1) build.push_back("--platform=" + planned.env.platforms.front());
  build.insert(build.end(), {"-t", reference, "-f", kPushDockerfile, "-"});
  std::string built;
  rc = io::run_attached(build, {}, &built, c.output, true);
  if (rc != 0)
    throw Error("building " + reference + " failed (" + engine + " build exited " + std::to_string(rc) + ")",
                std::nullopt, "fix what its output above names, then run envpin push again");

  // 3. The push; the digest is the registry's answer, in the push's own output.
  log << "envpin: pushing " << reference << "\n" << std::flush;
  std::string pushed_out;
  rc = io::run_attached({engine, "push", reference}, {}, &pushed_out, {}, true);
  if (rc != 0)
    throw Error("pushing " + reference + " failed (" + engine + " push exited " + std::to_string(rc) +
                    "); the record of the last push is unchanged",
                std::nullopt,
                "log in with '" + engine + " login " + reference.substr(0, reference.find('/')) +
                    "' (envpin reads no credentials: " + engine +
                    "'s own configuration holds them), or check that the registry is reachable");
  const std::string digest = digest_from_push_output(pushed_out, tag);
  if (digest.empty())
    throw Error(engine + " push printed no digest for " + reference + "; the record of the last push is unchanged",
                std::nullopt, "check the push's output above; envpin takes the digest only from the push itself");

  // 4. The registry serves that manifest: read back by digest and hashed here.
  const std::string by_digest = repository + "@" + digest;
  log << "envpin: checking that the registry serves " << by_digest << "\n" << std::flush;
  if (io::find_on_path("skopeo").empty())
    throw Error("envpin push reads the pushed manifest back with skopeo, which is not on PATH; nothing was recorded",
                std::nullopt, "install skopeo (Debian and Ubuntu: apt-get install skopeo), then push again");
  const io::ProcessResult read = io::run_process(manifest_read_argv(repository, by_digest, o.insecure));
  const std::string served = read.exit_code == 0 ? "sha256:" + pin::sha256_hex(read.out) : std::string();
  if (served != digest)
    throw Error("the registry does not serve " + by_digest + ", the manifest its push answered (" +
                    (read.exit_code != 0 ? "skopeo: " + diag::printable(first_line(read.err))
                                         : "what it serves hashes to " + served) +
                    "); the record of the last push is unchanged",
                std::nullopt, "the registry is not storing what it acknowledged: check it, then push again");

  Pushed out;
  out.record = {reference, digest, image, tree};
  const ProjectLock lock(m.project_dir, &log);
  std::optional<PushRecord> before;
  try {
    before = read_push_record(m);
  } catch (const Error&) {  // a broken record is replaced
  }
  out.unchanged = before && before->reference == reference && before->digest == digest && before->tree == tree &&
                  before->image == image && push_record_unvouched(m, *before).empty();
  if (!out.unchanged) {
    // The private copy first: a record in the tree is believed only when that copy agrees, so
    // one that fails between the two leaves the tree's record unbelieved, never a stale one believed.
    keep_push_record(m, out.record);
    io::owned_path(m.project_dir, push_record_path(m));
    io::write_atomic(push_record_path(m), push_record_json(out.record), false);
  }
  return out;
}

}  // namespace envpin::workflow

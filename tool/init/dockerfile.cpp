// SPDX-License-Identifier: Apache-2.0
// envpin init's reader for an existing Dockerfile: the final stage's FROM (an nvidia/cuda,
// pytorch/pytorch or python image, a plain OS image, or anything else as `base`), the packages of
// its `apt-get install` and `pip install` lines. Nothing in it is run or expanded beyond the
// global ARG defaults a FROM names. A Dockerfile is read after the other inputs and gives way to
// them: where it disagrees, its value is a suggestion in the notes.
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/dockerfile_syntax.hpp"
#include "init/init.hpp"
#include "init/parts.hpp"
#include "manifest/requirement.hpp"
#include "resolve/cuda_tables.hpp"
#include "resolve/policy_parts.hpp"
#include "secrets/rules.hpp"

namespace envpin::init {
namespace {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;
using namespace detail;

// Sets a value the Dockerfile gives, unless another input gave a different one: then the
// Dockerfile's is a suggestion.
void offer(Draft& d, std::optional<Value>& slot, Value v, const std::string& what) {
  if (!slot) {
    slot = std::move(v);
    return;
  }
  if (slot->value != v.value)
    note(d, v.from + " suggests " + what + " " + quote_input(v.value) + "; kept " + quote_input(slot->value) +
                " from " + slot->from);
}

// "12.1.1-cudnn8-devel-ubuntu22.04" and the like, from nvidia/cuda's tags
// (https://hub.docker.com/r/nvidia/cuda/tags: VERSION[-cudnnN]-FLAVOR-OS).
void from_cuda_tag(const std::string& tag, const std::string& from, Draft& d) {
  std::vector<std::string> parts;
  std::stringstream ss(tag);
  for (std::string p; std::getline(ss, p, '-');) parts.push_back(p);
  if (parts.empty() || !std::isdigit(static_cast<unsigned char>(parts[0].front()))) {
    note(d, from + ": the nvidia/cuda tag " + quote_input(tag) + " names no CUDA version: cuda.version left to you");
    return;
  }
  std::string version = parts[0];
  version = version.substr(0, version.find('.', version.find('.') + 1));  // 12.1.1 -> 12.1: envpin picks the patch
  offer(d, d.cuda, {version, from}, "cuda.version");
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.starts_with("cudnn"))
      offer(d, d.cudnn, {"true", from}, "cuda.cudnn");
    else if (p == "base" || p == "runtime" || p == "devel")
      offer(d, d.flavor, {p, from}, "cuda.flavor");
    else if (p.starts_with("ubuntu") && (p == "ubuntu20.04" || p == "ubuntu22.04" || p == "ubuntu24.04"))
      offer(d, d.os, {p, from}, "os");
    else if (p.starts_with("ubuntu"))
      note(d, from + ": the tag's " + quote_input(p) + " is not an OS envpin builds on (Ubuntu 20.04, 22.04 and " +
                  "24.04): os is left to envpin, where the apt packages this Dockerfile names for " +
                  diag::printable(p) + " may be named differently or missing");
    else
      note(d, from + ": the tag's " + quote_input(p) +
                  " has no envpin setting (envpin builds CUDA images on nvidia/cuda's Ubuntu tags): left out");
  }
}

// Debian codename or number in a tag ("3.11-slim-bookworm", "bookworm-slim", "12") -> os key.
std::string debian_os(const std::string& tag) {
  for (const auto& [code, key] : {std::pair{"bullseye", "debian11"}, {"bookworm", "debian12"}, {"trixie", "debian13"}})
    if (tag.find(code) != std::string::npos) return key;
  for (const auto& [num, key] : {std::pair{"11", "debian11"}, {"12", "debian12"}, {"13", "debian13"}})
    if (tag == num || tag.starts_with(std::string(num) + "-") || tag.starts_with(std::string(num) + ".")) return key;
  return "";
}

void from_image(const std::string& image, const std::string& from, Draft& d) {
  // A FROM that holds a credential (user:password@, a token) is no image envpin can name: it would
  // be written into the draft, the Dockerfile and the lock.
  if (secrets::redact(image) != image) {
    note(d,
         from + ": the base image " + quote_input(image) + " holds a credential: left out; name the image without it");
    return;
  }
  std::string ref = image;
  if (const auto at = ref.find('@'); at != std::string::npos) ref.resize(at);  // the digest: envpin lock pins its own
  std::string repo = ref, tag;
  if (const auto colon = ref.rfind(':'); colon != std::string::npos && ref.find('/', colon) == std::string::npos) {
    repo = ref.substr(0, colon);
    tag = ref.substr(colon + 1);
  }
  for (const char* prefix : {"docker.io/", "index.docker.io/", "library/", "nvcr.io/"})
    if (repo.starts_with(prefix)) repo = repo.substr(std::string_view(prefix).size());
  if (repo.starts_with("library/")) repo = repo.substr(8);
  if (repo == "nvidia/cuda") {
    from_cuda_tag(tag, from, d);
    return;
  }
  if (repo == "pytorch/pytorch" && !tag.empty()) {
    // "2.1.0-cuda12.1-cudnn8-runtime" (https://hub.docker.com/r/pytorch/pytorch/tags)
    std::vector<std::string> parts;
    std::stringstream ss(tag);
    for (std::string p; std::getline(ss, p, '-');) parts.push_back(p);
    if (manifest::is_pep440_version(parts[0])) {
      try {
        add_package(d, "torch==" + parts[0], from);
      } catch (const Error&) {
        note(d, from + " suggests torch==" + parts[0] + "; the other inputs' torch is kept");
      }
    }
    for (std::size_t i = 1; i < parts.size(); ++i) {
      if (parts[i].starts_with("cuda"))
        offer(d, d.cuda, {parts[i].substr(4), from}, "cuda.version");
      else if (parts[i].starts_with("cudnn"))
        offer(d, d.cudnn, {"true", from}, "cuda.cudnn");
      else if (parts[i] == "runtime" || parts[i] == "devel")
        offer(d, d.flavor, {parts[i], from}, "cuda.flavor");
    }
    if (d.cuda && d.cuda->from == from) torch_variant_index(d, d.cuda->value, from);
    note(d, from +
                ": the image also ships the torchvision and torchaudio built for its torch: not carried; list "
                "them under python.packages if the project imports them");
    return;
  }
  if (repo == "python" && !tag.empty()) {
    const std::string version = tag.substr(0, tag.find('-'));
    const std::string minor = version.substr(0, version.find('.', version.find('.') + 1));
    if (manifest::is_python_version(minor))
      offer(d, d.python, {minor, from}, "python.version");
    else
      note(d, from + ": the python tag " + quote_input(tag) + " names no Python version: python.version left to you");
    if (const std::string os = debian_os(tag.find('-') == std::string::npos ? "" : tag.substr(tag.find('-') + 1));
        !os.empty())
      offer(d, d.os, {os, from}, "os");
    return;
  }
  if (repo == "ubuntu" && (tag.starts_with("20.04") || tag.starts_with("22.04") || tag.starts_with("24.04"))) {
    offer(d, d.os, {"ubuntu" + tag.substr(0, 5), from}, "os");
    return;
  }
  if (repo == "debian" && !debian_os(tag).empty()) {
    offer(d, d.os, {debian_os(tag), from}, "os");
    return;
  }
  offer(d, d.base, {image, from}, "base");
}

// Global ARG defaults ("ARG CUDA=12.1.1") put into a FROM line; an expansion envpin cannot
// resolve leaves the line unread.
std::optional<std::string> expand(const std::string& s, const std::map<std::string, std::string>& args) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$') {
      out += s[i];
      continue;
    }
    std::string name;
    if (i + 1 < s.size() && s[i + 1] == '{') {
      const auto close = s.find('}', i);
      if (close == std::string::npos) return std::nullopt;
      name = s.substr(i + 2, close - i - 2);
      i = close;
    } else {
      std::size_t e = i + 1;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
      name = s.substr(i + 1, e - i - 1);
      i = e - 1;
    }
    const auto it = args.find(name);
    if (it == args.end() || it->second.find('$') != std::string::npos) return std::nullopt;
    out += it->second;
    if (out.size() > kMaxPackageBytes) return std::nullopt;  // a hostile file's expansions stay small
  }
  return out;
}

// `apt-get install` packages: name or name=version, each checked as Debian spells them.
void apt_install(const std::vector<std::string>& words, std::size_t first, const std::string& from, const Location& at,
                 Draft& d) {
  std::unordered_set<std::string>& names = d.reading.apt;
  if (names.size() != d.apt.size()) {  // set by another reader or a caller
    names.clear();
    for (const Value& v : d.apt) names.insert(v.value.substr(0, v.value.find('=')));
  }
  for (std::size_t i = first; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "-o" || w == "--option" || w == "-t" || w == "--target-release" || w == "-c" || w == "--config-file") {
      ++i;
      continue;
    }
    if (w.starts_with("-")) continue;
    const auto eq = w.find('=');
    const std::string name = w.substr(0, eq);
    const std::string version = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (!manifest::is_deb_name(name)) {
      note(d, from + ": the apt package " + quote_input(w) +
                  " is not a Debian package name envpin can pin (an expansion, a release or a pattern): left out");
      continue;
    }
    std::string kept = w;
    if (!version.empty() && !manifest::is_deb_version(version)) {
      // "ffmpeg=7:*" (any version of epoch 7), "git=1:*": the package, at the version envpin lock pins.
      note(d, from + ": the apt version pattern " + quote_input(w) + " is not carried: " + quote_input(name) +
                  " is kept at the version the image's OS has, which envpin lock pins");
      kept = name;
    }
    if (names.count(name)) continue;
    if (d.apt.size() >= kMaxPackages)
      throw Error(quote_input(name) + " would be apt package " + std::to_string(kMaxPackages + 1) +
                      "; envpin.yaml lists at most " + std::to_string(kMaxPackages),
                  at, "list the system packages the project needs");
    names.insert(name);
    d.apt.push_back({kept, from});
  }
}

// A pip install's --index-url becomes the manifest's python.index, which envpin lock reads for
// every package, not only that line's: the wider scope is said.
void note_only_index(Draft& d, const std::string& from, const std::string& url) {
  note(d, from + ": the index " + quote_input(secrets::redact(url)) +
              " was this pip install's only index; carried as python.index, which envpin lock uses for every "
              "package (if other packages came from PyPI, make it python.extra_index instead)");
}

// A pip option (of `pip install` or pip's own) that takes the next word as its value, which is
// not carried: neither a package nor shown (a --config-settings or --proxy value may be a secret).
bool takes_value(std::string_view w) {
  static constexpr std::string_view kOptions[] = {"-f",
                                                  "--find-links",
                                                  "--trusted-host",
                                                  "-t",
                                                  "--target",
                                                  "--prefix",
                                                  "--root",
                                                  "--platform",
                                                  "--python-version",
                                                  "--only-binary",
                                                  "--no-binary",
                                                  "-C",
                                                  "--config-settings",
                                                  "--global-option",
                                                  "--build-option",
                                                  "--install-option",
                                                  "--proxy",
                                                  "--cert",
                                                  "--client-cert",
                                                  "--src",
                                                  "--log",
                                                  "--cache-dir",
                                                  "--progress-bar",
                                                  "--upgrade-strategy",
                                                  "--exists-action",
                                                  "--python",
                                                  "--report",
                                                  "--root-user-action",
                                                  "--abi",
                                                  "--implementation",
                                                  "--retries",
                                                  "--timeout",
                                                  "--keyring-provider",
                                                  "--use-feature",
                                                  "--use-deprecated"};
  return std::find(std::begin(kOptions), std::end(kOptions), w) != std::end(kOptions);
}

// PyTorch's own wheel index (https://download.pytorch.org/whl/<variant>).
bool pytorch_index(std::string_view url) {
  return url.starts_with("https://download.pytorch.org/whl/") || url.starts_with("http://download.pytorch.org/whl/");
}

// A COPY or ADD from the build context (no --from): its sources, relative to the context and
// maybe globs, and where they land in the image.
struct ContextCopy {
  std::vector<std::string> sources;
  std::string dest;
};

// The context files that are at `image_path` (a glob like /tmp/requirements_*.txt too) after the
// COPYs so far, relative to `context`: "COPY requirements_*.txt /tmp/" then "pip install -r
// /tmp/requirements_*.txt" reads requirements_a.txt and requirements_b.txt beside the Dockerfile.
std::vector<std::string> copied_to(const std::string& image_path, const std::vector<ContextCopy>& copies,
                                   const fs::path& context, const fs::path& root) {
  const fs::path wanted = fs::path(image_path).lexically_normal();
  for (auto c = copies.rbegin(); c != copies.rend(); ++c) {
    const bool into_directory = c->dest.ends_with("/") || c->sources.size() > 1 ||
                                std::any_of(c->sources.begin(), c->sources.end(), [](const std::string& x) {
                                  return x.find_first_of("*?[") != std::string::npos;
                                });
    const fs::path dest = fs::path(c->dest).lexically_normal();
    std::vector<std::string> found;
    for (const std::string& source : c->sources) {
      const fs::path src = fs::path(source).lexically_normal();
      if (src.is_absolute() || src.empty() || *src.begin() == "..") continue;
      const std::string pattern = src.filename().string();
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(context / src.parent_path(), ec)) {
        const std::string name = entry.path().filename().string();
        if (found.size() >= 16 || ::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
        const fs::path landed = into_directory ? (dest / name).lexically_normal() : dest;
        const bool hit = into_directory ? landed.parent_path() == wanted.parent_path() &&
                                              ::fnmatch(wanted.filename().c_str(), name.c_str(), FNM_PERIOD) == 0
                                        : landed == wanted;
        std::error_code fe;
        const fs::path resolved = fs::weakly_canonical(entry.path(), fe);
        if (hit && !fe && inside(resolved, root) && fs::is_regular_file(resolved, fe))
          found.push_back((src.parent_path() / name).generic_string());
      }
    }
    if (!found.empty()) {
      std::sort(found.begin(), found.end());
      return found;
    }
  }
  return {};
}

// `pip install` arguments, read as the lines of a requirements file would be.
void pip_install(std::vector<std::string> words, std::size_t first, const fs::path& file, int line, Draft& d,
                 Includes& inc, const std::map<std::string, std::string>& vars,
                 const std::vector<ContextCopy>& copies) {
  const std::string from = where(file, line);
  // "torch==${PYTORCH_VERSION}": the value the Dockerfile's own ARG default or ENV gives it.
  for (std::size_t i = first; i < words.size(); ++i)
    if (words[i].find('$') != std::string::npos)
      if (const auto expanded = expand(words[i], vars)) words[i] = *expanded;
  for (std::size_t i = first; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool has_value = i + 1 < words.size();
    if (w.find('$') != std::string::npos) {
      note(d, from + ": " + quote_input(w) + " holds a shell expansion the Dockerfile gives no value: left out");
      continue;
    }
    if ((w == "-r" || w == "--requirement") && has_value) {
      // The path is the image's: read only a file of the project that is there, beside the
      // Dockerfile (a secret one is refused by requirement_line).
      const fs::path included = file.parent_path() / words[++i];
      std::error_code ec;
      const fs::path resolved = fs::weakly_canonical(fs::absolute(included, ec), ec);
      const std::vector<std::string> copied =
          words[i].find("://") == std::string::npos
              ? copied_to(words[i], copies, fs::absolute(file).parent_path(), inc.root)
              : std::vector<std::string>{};
      if (!fs::path(words[i]).is_absolute() && words[i].find("://") == std::string::npos && !ec &&
          inside(resolved, inc.root) && fs::is_regular_file(resolved, ec)) {
        requirement_line("-r " + words[i], file, line, d, inc);
      } else if (!copied.empty()) {
        // A file the Dockerfile copied from its context: read where it comes from; each
        // package's comment names that file.
        for (const std::string& c : copied) requirement_line("-r " + c, file, line, d, inc);
      } else {
        note(d, from + ": pip installs " + quote_input(words[i]) +
                    ", which is not beside the Dockerfile: pass it with --from");
      }
    } else if ((w == "-c" || w == "--constraint") && has_value) {
      note(d, from + ": the constraints file " + quote_input(words[++i]) +
                  " is not carried: envpin lock pins every version the listed packages resolve to");
    } else if ((w == "-i" || w == "--index-url") && has_value && pytorch_index(words[i + 1])) {
      // One `pip install torch ... --index-url .../cu121` scopes that index to its own line: as the
      // manifest's only index it would serve every other package too. It is the torch variant's.
      note(d, from + ": the index " + quote_input(words[i + 1]) +
                  " is this pip install's only (for torch): kept as an extra index, not the project's index");
      requirement_line("--extra-index-url " + words[++i], file, line, d, inc);
    } else if (w.starts_with("--index-url=") && pytorch_index(w.substr(12))) {
      note(d, from + ": the index " + quote_input(w.substr(12)) +
                  " is this pip install's only (for torch): kept as an extra index, not the project's index");
      requirement_line("--extra-index-url " + w.substr(12), file, line, d, inc);
    } else if ((w == "-i" || w == "--index-url" || w == "--extra-index-url" || w == "-e" || w == "--editable") &&
               has_value) {
      if (w == "-i" || w == "--index-url") note_only_index(d, from, words[i + 1]);
      requirement_line(w + " " + words[++i], file, line, d, inc);
    } else if (w.starts_with("--index-url=") || w.starts_with("--extra-index-url=")) {
      if (w.starts_with("--index-url=")) note_only_index(d, from, w.substr(12));
      requirement_line(w, file, line, d, inc);
    } else if ((w == "-f" || w == "--find-links") && has_value) {
      requirement_line(w + " " + words[++i], file, line, d, inc);
    } else if (takes_value(w)) {
      note(d, from + ": the pip option " + quote_input(w) +
                  " is not carried (envpin lock and the Dockerfile set pip's options)");
      ++i;
    } else if (const auto eq = w.find('=');
               w.starts_with("--") && eq != std::string::npos && takes_value(w.substr(0, eq))) {
      // --only-binary=:all:, --no-binary=pkg: the same option in one word, named the same way
      // (its value not shown: a --config-settings or --proxy value may be a secret).
      note(d, from + ": the pip option " + quote_input(w.substr(0, eq)) +
                  " is not carried (envpin lock and the Dockerfile set pip's options)");
    } else if (w == "--no-deps" || w == "--no-dependencies" || w == "--pre") {
      // What is installed changes: named, never dropped silently. envpin lock resolves every
      // package with its dependencies and takes pre-releases only where a pin names one.
      note(d, from + ": pip's " + w + " is not carried: " +
                  (w == "--pre" ? "envpin lock takes a pre-release only where a pin names one; pin it (X==1.0rc1)"
                                : "envpin lock resolves the packages of this line with their dependencies, so a "
                                  "requirement of theirs may now conflict with the project's: pin the conflicting "
                                  "package, or leave it out of envpin.yaml"));
    } else if (w.starts_with("-")) {
      continue;  // -U, --no-cache-dir, -q: how pip runs, not what it installs
    } else if (const std::string n = manifest::normalize_name(w.substr(0, w.find_first_of("<>=!~[; ")));
               n == "pip" || n == "setuptools" || n == "wheel") {
      note(d, from + ": " + quote_input(w) + " is pip's own tooling: left out (the Python envpin installs brings it)");
    } else {
      try {
        requirement_line(w, file, line, d, inc);
      } catch (const Conflict&) {  // another input asks for it differently, and wins
        note(d,
             from + ": " + quote_input(w) + " conflicts with the other inputs: left out (they win over a Dockerfile)");
      }
    }
  }
}

// A command of a RUN line that changes nothing the image keeps (a cd, a cleanup of apt's lists).
bool leaves_nothing(const std::string& program, const std::vector<std::string>& cmd, std::size_t i) {
  // rm of caches and downloads leaves nothing; rm of the system's files (dreamfusion's rm -f
  // /etc/apt/sources.list.d/*.list) is a step.
  if (program == "rm") {
    for (std::size_t j = i + 1; j < cmd.size(); ++j)
      if (!cmd[j].starts_with("-") && cmd[j].starts_with("/") && !cmd[j].starts_with("/tmp") &&
          !cmd[j].starts_with("/var/lib/apt/lists") && !cmd[j].starts_with("/var/cache") &&
          !cmd[j].starts_with("/root/.cache"))
        return false;
    return true;
  }
  static constexpr std::string_view kQuiet[] = {"cd",   "mkdir", "echo",  "true",  ":",      "export",   "set",
                                                "test", "[",     "which", "sleep", "printf", "ldconfig", "exit",
                                                "pwd",  "ls",    "cat",   "false", "rmdir"};
  if (std::find(std::begin(kQuiet), std::end(kQuiet), program) != std::end(kQuiet)) return true;
  const std::string verb = i + 1 < cmd.size() ? cmd[i + 1] : "";
  if (program == "apt-get" || program == "apt")
    for (std::size_t j = i + 1; j < cmd.size(); ++j)
      if (cmd[j] == "update" || cmd[j] == "clean" || cmd[j] == "autoclean" || cmd[j] == "autoremove") return true;
  if ((program == "conda" || program == "mamba" || program == "micromamba") && verb == "clean") return true;
  if (program.starts_with("pip") && verb == "cache") return true;
  return false;
}

void run_line(const Instruction& ins, const fs::path& file, Draft& d, Includes& inc,
              const std::map<std::string, std::string>& vars, bool pip_only, const std::vector<ContextCopy>& copies) {
  const std::string from = where(file, ins.line);
  if (ins.args.starts_with("[") || ins.args.find("<<") != std::string::npos) {
    note(d, from + ": a RUN in exec or heredoc form is not read: add what it installs by hand");
    return;
  }
  // The steps envpin's Dockerfile does not run (a library built from source, setup.py install, a
  // user added): named, never dropped silently.
  std::vector<std::string> steps;
  bool adds_user = false;
  const auto step = [&](const std::vector<std::string>& cmd, std::size_t i) {
    std::string shown = cmd[i];
    if (i + 1 < cmd.size() && !cmd[i + 1].starts_with("-")) shown += " " + cmd[i + 1];
    shown = diag::printable(shown.substr(0, 60));
    if (std::find(steps.begin(), steps.end(), shown) == steps.end() && steps.size() < 8) steps.push_back(shown);
    const std::string program = fs::path(cmd[i]).filename().string();
    adds_user = adds_user || program == "useradd" || program == "adduser";
  };
  for (const Command& command : commands(ins.args)) {
    const std::vector<std::string>& cmd = command.words;
    std::size_t i = 0;
    while (i < cmd.size() && (cmd[i].find('=') != std::string::npos || cmd[i] == "sudo" || cmd[i] == "env"))
      ++i;  // FOO=bar apt-get
    if (i >= cmd.size()) continue;
    const std::string program = fs::path(cmd[i]).filename().string();
    // A versioned interpreter run ("python3.7 get-pip.py", "python3.10 -m pip") names the
    // project's Python: detectron2's docker/Dockerfile installs torch for python3.7 this way.
    if (program.starts_with("python") && manifest::is_python_version(program.substr(6)) &&
        program.find('.') != std::string::npos)
      offer(d, d.python, {program.substr(6), from + " (" + program + ")"}, "python.version");
    const auto sub = [&](const std::string& verb) {
      for (std::size_t j = i + 1; j < cmd.size(); ++j)
        if (cmd[j] == verb) return j;
      return cmd.size();
    };
    if (leaves_nothing(program, cmd, i)) continue;
    if (program == "apt-get" || program == "apt") {
      if (const std::size_t j = sub("install"); j < cmd.size() && pip_only)
        note(d, from + ": apt installs in a build stage are not carried: the final image copies only files from it");
      else if (j < cmd.size())
        apt_install(cmd, j + 1, from, Location{file.generic_string(), ins.line, 1}, d);
      else
        step(cmd, i);  // apt-get upgrade: versions envpin lock does not pin
    } else if (program.starts_with("pip") ||
               (program.starts_with("python") && i + 2 < cmd.size() && cmd[i + 1] == "-m" && cmd[i + 2] == "pip") ||
               (program == "uv" && i + 1 < cmd.size() && cmd[i + 1] == "pip")) {
      if (const std::size_t j = sub("install"); j < cmd.size()) {
        for (const std::string& r : command.redirected)
          note(d, from + ": " + quote_input(r) +
                      " is not quoted, so the shell reads its '<' or '>' as a redirection: pip installs " +
                      quote_input(r.substr(0, r.find_first_of("<>"))) + " at any version; quote it in the Dockerfile");
        pip_install(cmd, j + 1, file, ins.line, d, inc, vars, copies);
      } else {
        step(cmd, i);
      }
    } else if (program == "conda" || program == "mamba" || program == "micromamba") {
      if (sub("install") < cmd.size() || sub("create") < cmd.size() || sub("update") < cmd.size())
        note(d, from + ": " + program +
                    " installs in the Dockerfile are not read: export the environment "
                    "('conda env export --from-history') and pass it with --from");
      else
        step(cmd, i);
    } else {
      step(cmd, i);
    }
  }
  if (!steps.empty()) {
    std::string list;
    for (const std::string& s : steps) list += (list.empty() ? "" : ", ") + quote_input(s);
    note(d, from + ": RUN " + list +
                " not carried: envpin's Dockerfile installs only the manifest's packages; run such steps in a "
                "Dockerfile of your own that starts FROM the image envpin builds" +
                (adds_user ? " (envpin's image has its own non-root user: user: in envpin.yaml)" : ""));
  }
}

}  // namespace

void detail::torch_variant_index(Draft& d, const std::string& cuda, const std::string& cuda_from) {
  for (const Value& p : d.packages) {
    std::string error;
    std::size_t column = 0;
    const auto r = manifest::parse_requirement(p.value, error, column);
    if (!r || r->normalized != "torch") continue;
    const auto pinned = r->pinned();
    std::string version = pinned ? *pinned : "";
    for (const auto& s : r->specifiers)
      if (s.op == "==" && s.version.ends_with(".*")) version = s.version.substr(0, s.version.size() - 2);
    if (version.empty()) continue;
    const resolve::TorchRelease* release = resolve::find_torch_release(version);
    if (!release) continue;  // newer or older than the table: envpin cuda says so
    // Only a version names a variant: anything else is refused as cuda.version, where it is.
    if (!is_cuda_minor(cuda)) return;
    std::string wheel_cuda = cuda;
    if (!resolve::find_torch_variant(version, cuda)) {
      // conda had builds pip never had (NVlabs/eg3d: pytorch=1.11.0 with cudatoolkit=11.1; PyPI's
      // index has cu102, cu113, cu115): the nearest newer CUDA of the same major, said so.
      const auto number = [](std::string_view v) {
        const auto dot = v.find('.');
        return std::pair{resolve::detail::bounded_int(v.substr(0, dot)),
                         dot == std::string_view::npos ? 0 : resolve::detail::bounded_int(v.substr(dot + 1))};
      };
      const auto want = number(cuda);
      const resolve::TorchVariant* nearest = nullptr;
      for (const auto& v : release->variants) {
        const auto have = number(v.cuda);
        if (have.first == want.first && have > want && (!nearest || have < number(nearest->cuda))) nearest = &v;
      }
      if (nearest) {
        wheel_cuda = std::string(nearest->cuda);
        note(d, cuda_from + ": torch " + diag::printable(version) + " has no CUDA " + diag::printable(cuda) +
                    " wheels on download.pytorch.org (conda's build for it has no pip form): its " +
                    std::string(nearest->tag) + " wheels, the nearest newer CUDA " + wheel_cuda + ", are taken");
        if (d.cuda && d.cuda->from == cuda_from) {
          d.cuda->value = resolve::find_cuda_release(wheel_cuda) ? wheel_cuda : "auto";
          d.cuda->from = cuda_from + ", as torch's " + std::string(nearest->tag) + " wheels need";
        }
      }
    }
    if (!resolve::find_torch_variant(version, wheel_cuda)) {
      std::string variants;
      for (const auto& v : release->variants) variants += (variants.empty() ? "" : ", ") + std::string(v.tag);
      // The origins quote the inputs' lines: redacted, as every line init shows.
      throw Error(secrets::redact("torch " + diag::printable(version) + " (" + diag::printable(p.from) +
                                  ") never had CUDA " + diag::printable(cuda) + " wheels (" +
                                  diag::printable(cuda_from) + "); its variants are " + variants),
                  std::nullopt,
                  "pick a CUDA version among its variants, or a torch release built for CUDA " + diag::printable(cuda));
    }
    std::string tag = "cu" + wheel_cuda;
    std::erase(tag, '.');
    const std::string url = resolve::torch_index_url(tag);
    if (std::none_of(d.extra_index.begin(), d.extra_index.end(), [&](const Value& v) { return v.value == url; }))
      d.extra_index.push_back({url, cuda_from});
  }
}

namespace {

// A variable an ARG or ENV gives the stage; at most kMaxVars of them, each at most a value's size,
// so a hostile file's expansions and stage copies stay small.
constexpr std::size_t kMaxVars = 256;
void set_var(std::map<std::string, std::string>& vars, const std::string& name, const std::string& value) {
  if (value.size() > kMaxPackageBytes || (vars.size() >= kMaxVars && !vars.count(name))) return;
  vars[name] = value;
}

// pip's and uv's own variables for the index (https://pip.pypa.io/en/stable/topics/configuration/,
// https://docs.astral.sh/uv/reference/environment/): the requirements line each stands for.
std::string index_option_of(const std::string& variable) {
  if (variable == "PIP_INDEX_URL" || variable == "UV_INDEX_URL" || variable == "UV_DEFAULT_INDEX") return "--index-url";
  if (variable == "PIP_EXTRA_INDEX_URL" || variable == "UV_EXTRA_INDEX_URL" || variable == "UV_INDEX")
    return "--extra-index-url";
  return "";
}

}  // namespace

void detail::read_dockerfile_unredacted(const fs::path& file, Draft& d) {
  Includes inc;
  const std::optional<std::string> input = open_input(file, d, inc);
  if (!input) return;
  const std::string& text = *input;
  if (written_by_envpin(text))
    throw Error(diag::printable(file.filename().generic_string()) +
                    " was written by envpin generate: it is the manifest's output, not an input",
                Location{file.generic_string(), 1, 1},
                "edit envpin.yaml instead, or name the project's own Dockerfile");
  const std::vector<Instruction> all = instructions(text, file);
  if (std::none_of(all.begin(), all.end(), [](const Instruction& i) { return i.keyword == "FROM"; }))
    throw Error("no FROM instruction: this is not a Dockerfile", Location{file.generic_string(), 1, 1},
                "name the project's Dockerfile");
  d.sources.push_back(file.generic_string());
  // The final stage is the image that runs; its FROM may name an earlier stage.
  std::map<std::string, std::string> global_args;
  std::map<std::string, std::pair<std::string, int>> stages;  // name -> the image it starts from, and its FROM line
  std::size_t final_from = 0;
  bool seen_from = false;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const Instruction& ins = all[k];
    if (ins.keyword == "ARG" && !seen_from) {
      const auto eq = ins.args.find('=');
      if (eq != std::string::npos) global_args[trim(ins.args.substr(0, eq))] = trim(ins.args.substr(eq + 1));
      for (auto& [name, value] : global_args)
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
          value = value.substr(1, value.size() - 2);
    }
    if (ins.keyword == "FROM") {
      seen_from = true;
      final_from = k;
    }
  }
  std::string image;
  int image_line = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k].keyword != "FROM") continue;
    std::vector<std::string> words;
    std::stringstream ss(all[k].args);
    for (std::string w; ss >> w;)
      if (!w.starts_with("--")) words.push_back(w);  // --platform=...
    if (words.empty()) continue;
    const auto expanded = expand(words[0], global_args);
    std::string resolved = expanded ? *expanded : "";
    int line = all[k].line;
    if (const auto it = stages.find(resolved); it != stages.end()) std::tie(resolved, line) = it->second;
    if (words.size() >= 3) {
      std::string as = words[1];
      std::transform(as.begin(), as.end(), as.begin(), [](unsigned char c) { return std::tolower(c); });
      if (as == "as") stages[words[2]] = {resolved, line};
    }
    if (k == final_from) {
      image = resolved;
      image_line = line;
      if (!expanded)
        note(d, where(file, all[k].line) + ": FROM " + quote_input(words[0]) +
                    " uses an ARG without a default: the base is left to you");
    }
  }
  if (!image.empty() && image != "scratch") {
    if (!std::all_of(image.begin(), image.end(), [](unsigned char c) {
          return std::isalnum(c) || std::string_view("._/:@-").find(c) != std::string_view::npos;
        }))
      note(d, where(file, image_line) + ": FROM " + quote_input(image) +
                  " is not an image reference envpin reads: left out");
    else
      collecting(d, Location{file.generic_string(), image_line, 1},
                 [&] { from_image(image, where(file, image_line) + " (FROM " + image + ")", d); });
  }
  // What the stages install, and what envpin will not carry from them.
  // Which stage each instruction is in (the index of its FROM), and the stages the final image is
  // built on: another stage's installs reach it only as files a COPY --from brings.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> stage_at(all.size(), kNone);
  std::map<std::size_t, std::size_t> parent_of;
  std::map<std::string, std::size_t> named;
  for (std::size_t k = 0, current = kNone; k < all.size(); ++k) {
    if (all[k].keyword == "FROM") {
      current = k;
      std::vector<std::string> words;
      std::stringstream ss(all[k].args);
      for (std::string w; ss >> w;)
        if (!w.starts_with("--")) words.push_back(w);
      if (!words.empty())
        if (const auto it = named.find(words[0]); it != named.end()) parent_of[k] = it->second;
      if (words.size() >= 3) named[words[2]] = k;
    }
    stage_at[k] = current;
  }
  std::set<std::size_t> final_chain;
  for (std::size_t s = final_from; s != kNone && final_chain.insert(s).second;)
    s = parent_of.count(s) ? parent_of[s] : kNone;
  // Stages the final image copies files from (COPY --from=NAME), and theirs: what pip installs
  // there reaches it as the files of a virtual environment (kohya_ss's Dockerfile builds its venv
  // in one); what apt installs there does not.
  std::set<std::size_t> copied;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (stage_at[k] == kNone || !final_chain.count(stage_at[k]) ||
        (all[k].keyword != "COPY" && all[k].keyword != "ADD"))
      continue;
    std::stringstream ss(all[k].args);
    for (std::string w; ss >> w;) {
      if (!w.starts_with("--from=")) continue;
      const auto it = named.find(w.substr(7));
      for (std::size_t s = it == named.end() ? kNone : it->second; s != kNone && copied.insert(s).second;)
        s = parent_of.count(s) ? parent_of[s] : kNone;
    }
  }
  // The values of ARG defaults and ENV a stage has, for the pip words that expand them.
  std::map<std::size_t, std::map<std::string, std::string>> vars_of;
  std::vector<ContextCopy> copies;  // from the build context, in order: a later -r may read them
  for (std::size_t k = 0; k < all.size(); ++k) {
    const Instruction& ins = all[k];
    const std::string from = where(file, ins.line);
    const std::size_t stage = stage_at[k];
    if (stage == kNone) continue;  // the global ARGs, read above
    std::map<std::string, std::string>& vars = vars_of[stage];
    if (ins.keyword == "FROM" && parent_of.count(k)) vars = vars_of[parent_of[k]];  // ENV is inherited
    const bool pip_only = !final_chain.count(stage) && copied.count(stage);
    if (!final_chain.count(stage) && !pip_only) {
      if (ins.keyword == "RUN")
        note(d, where(file, all[stage].line) + ": the build stage " + quote_input(all[stage].args) +
                    " is not the final image's and it copies nothing from it: what it installs is not carried");
      continue;
    }
    if (ins.keyword == "ARG") {
      const std::string decl = trim(ins.args);
      const auto eq = decl.find('=');
      const std::string name = decl.substr(0, eq);
      std::string value = eq != std::string::npos   ? trim(decl.substr(eq + 1))
                          : global_args.count(name) ? global_args[name]  // "ARG NAME": the global default
                                                    : "";
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
        value = value.substr(1, value.size() - 2);
      if (eq != std::string::npos || global_args.count(name)) set_var(vars, name, value);
    } else if (ins.keyword == "ENV") {
      for (const Command& command : commands(ins.args)) {
        const std::vector<std::string>& cmd = command.words;
        if (cmd.size() >= 2 && cmd[0].find('=') == std::string::npos) {  // "ENV NAME value words"
          std::string value;
          for (std::size_t i = 1; i < cmd.size() && value.size() <= kMaxPackageBytes; ++i)
            value += (i > 1 ? " " : "") + cmd[i];
          set_var(vars, cmd[0], expand(value, vars).value_or(value));  // docker expands an ENV's value
          continue;
        }
        for (const std::string& w : cmd)
          if (const auto eq = w.find('='); eq != std::string::npos)
            set_var(vars, w.substr(0, eq), expand(w.substr(eq + 1), vars).value_or(w.substr(eq + 1)));
      }
    }
    // The stage's ENV and files stay in it; only the index it installs from matters to its pip.
    if (pip_only && ins.keyword == "ENV")
      for (const Command& command : commands(ins.args))
        for (const std::string& w : command.words)
          if (const auto eq = w.find('='); eq != std::string::npos && !index_option_of(w.substr(0, eq)).empty()) {
            const std::string name = w.substr(0, eq), option = index_option_of(name);
            std::string url = vars.count(name) ? vars[name] : "";
            if (name == "UV_INDEX" && url.find('=') != std::string::npos && url.find('=') < url.find("://"))
              url = url.substr(url.find('=') + 1);
            if (!url.empty())
              collecting(d, Location{file.generic_string(), ins.line, 1},
                         [&] { requirement_line(option + " " + url, file, ins.line, d, inc); });
          }
    if (ins.keyword == "COPY" || ins.keyword == "ADD") {
      ContextCopy c;
      bool from_stage = false;
      std::stringstream words(ins.args);
      for (std::string w; words >> w;)
        if (w.starts_with("--from"))
          from_stage = true;
        else if (!w.starts_with("--"))
          c.sources.push_back(w);
      if (!from_stage && c.sources.size() >= 2) {
        c.dest = c.sources.back();
        c.sources.pop_back();
        copies.push_back(std::move(c));
      }
    }
    if (pip_only && ins.keyword != "RUN") continue;
    if (ins.keyword == "RUN") {
      collecting(d, Location{file.generic_string(), ins.line, 1},
                 [&] { run_line(ins, file, d, inc, vars, pip_only, copies); });
    } else if (ins.keyword == "ENV") {
      std::string names;
      int count = 0;
      for (const Command& command : commands(ins.args))
        for (std::size_t i = 0; i < command.words.size(); ++i) {
          const std::vector<std::string>& cmd = command.words;
          const auto eq = cmd[i].find('=');
          const std::string name = eq == std::string::npos ? (i == 0 ? cmd[i] : "") : cmd[i].substr(0, eq);
          // PIP_INDEX_URL, UV_INDEX and the like: the index pip or uv installs from, as the option.
          if (const std::string option = index_option_of(name); !option.empty()) {
            const std::string value = vars.count(name) ? vars[name] : "";
            std::stringstream urls(value);  // PIP_EXTRA_INDEX_URL holds URLs separated by spaces
            for (std::string url; urls >> url;) {
              if (name == "UV_INDEX" && url.find('=') != std::string::npos && url.find('=') < url.find("://"))
                url = url.substr(url.find('=') + 1);  // "name=url"
              collecting(d, Location{file.generic_string(), ins.line, 1},
                         [&] { requirement_line(option + " " + url, file, ins.line, d, inc); });
            }
            if (eq == std::string::npos) break;
            continue;
          }
          if (!name.empty()) names += (count++ ? ", " : "") + diag::printable(name);
          if (eq == std::string::npos) break;  // "ENV NAME value words": one variable
        }
      std::size_t length = 0;
      if (count == 0) continue;
      const bool token = secrets::find_token(ins.args, length) != std::string::npos;
      note(d, from + ": ENV " + names + " not carried: set " + (count > 1 ? "them" : "it") +
                  " under env: in envpin.yaml (secrets: for a credential); values are not copied" +
                  (token ? ". It holds what looks like a credential: rotate it, it is in the image's history" : ""));
    } else if (ins.keyword == "USER" || ins.keyword == "WORKDIR" || ins.keyword == "CMD" ||
               ins.keyword == "ENTRYPOINT" || ins.keyword == "EXPOSE" || ins.keyword == "VOLUME" ||
               ins.keyword == "HEALTHCHECK" || ins.keyword == "SHELL" || ins.keyword == "STOPSIGNAL" ||
               ins.keyword == "ONBUILD") {
      // How the container runs, not what it holds: each has its place in envpin.yaml, or none.
      const std::string where_in_envpin =
          ins.keyword == "USER"      ? "envpin's image runs as its own non-root user "
                                       "(user: in envpin.yaml)"
          : ins.keyword == "WORKDIR" ? "the working directory is workdir: in envpin.yaml"
          : ins.keyword == "CMD" || ins.keyword == "ENTRYPOINT"
              ? "what runs is envpin run's command or jobs: in envpin.yaml"
          : ins.keyword == "EXPOSE" ? "ports are devcontainer.forward_ports in envpin.yaml"
                                    : "envpin's Dockerfile has no such setting";
      note(d, from + ": " + ins.keyword + " not carried: " + where_in_envpin);
    } else if (ins.keyword == "COPY" || ins.keyword == "ADD") {
      std::vector<std::string> words;
      std::stringstream ss(ins.args);
      for (std::string w; ss >> w;)
        if (!w.starts_with("--")) words.push_back(w);
      if (!words.empty()) words.pop_back();  // the destination
      for (const std::string& w : words)
        if (secrets::is_secret_path(fs::path(w).lexically_normal().generic_string()))
          note(d, from + ": " + ins.keyword + " " + quote_input(w) +
                      " puts a secret file into the image; envpin keeps secrets out "
                      "of the context: declare it under secrets: for run time");
    }
  }
  // A path into the image's Python ("/opt/conda/lib/python3.10/site-packages", as
  // stable-diffusion-webui-docker's Dockerfile patches a file there) names that Python.
  for (std::size_t k = 0; k < all.size() && !d.python; ++k) {
    if (stage_at[k] == kNone || !final_chain.count(stage_at[k])) continue;
    const std::string& a = all[k].args;
    for (std::size_t at = a.find("/python3."); at != std::string::npos; at = a.find("/python3.", at + 1)) {
      const std::size_t end = a.find('/', at + 1);
      const std::string minor = a.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
      const std::string rest = end == std::string::npos ? "" : a.substr(end);
      if (manifest::is_python_version(minor) &&
          (rest.starts_with("/site-packages") || rest.starts_with("/dist-packages"))) {
        offer(d, d.python, {minor, where(file, all[k].line) + " (a path into python" + minor + "'s site-packages)"},
              "python.version");
        break;
      }
    }
  }
  // A plain OS image whose apt installs python3 runs the OS's own Python: Ubuntu 22.04's is 3.10,
  // not envpin's default. Sources: packages.ubuntu.com (focal 3.8, jammy 3.10, noble 3.12) and
  // packages.debian.org (bullseye 3.9, bookworm 3.11, trixie 3.13), package python3.
  static constexpr std::pair<std::string_view, std::string_view> kSystemPython[] = {
      {"ubuntu20.04", "3.8"}, {"ubuntu22.04", "3.10"}, {"ubuntu24.04", "3.12"},
      {"debian11", "3.9"},    {"debian12", "3.11"},    {"debian13", "3.13"}};
  const auto apt_python = std::find_if(d.apt.begin(), d.apt.end(), [](const Value& v) {
    return v.value == "python3" || v.value.starts_with("python3=") || v.value.starts_with("python3-") ||
           v.value.starts_with("python3.");
  });
  if (!d.python && d.os && apt_python != d.apt.end())
    for (const auto& [os, python] : kSystemPython)
      if (d.os->value == os)
        offer(d, d.python, {std::string(python), apt_python->from + " (" + std::string(os) + "'s python3)"},
              "python.version");
  // After the OS's Python has named python.version: an interpreter the Dockerfile installs by apt ("python3.7
  // python3.7-dev python3.7-distutils", detectron2's on Ubuntu 18.04): envpin installs the manifest's Python itself, so
  // these OS packages, which a newer Ubuntu may not have, are left out with the reason.
  std::erase_if(d.apt, [&](const Value& v) {
    const std::string& n = v.value;
    if (!n.starts_with("python3.")) return false;
    const std::string minor =
        n.substr(6, n.find_first_of("-=") == std::string::npos ? std::string::npos : n.find_first_of("-=") - 6);
    const std::string rest = n.substr(6 + minor.size());
    if (!manifest::is_python_version(minor) ||
        !(rest.empty() || rest.starts_with("-dev") || rest.starts_with("-distutils") || rest.starts_with("-venv") ||
          rest.starts_with("=")))
      return false;
    note(d, v.from + ": the apt package " + quote_input(n) + " is the OS's Python " + minor +
                ": left out; envpin installs python.version itself");
    d.reading.apt.erase(n.substr(0, n.find('=')));
    return true;
  });
}

}  // namespace envpin::init

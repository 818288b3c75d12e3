// SPDX-License-Identifier: Apache-2.0
// `envpin mirror DIR`: everything envpin.lock names, fetched and verified into DIR, for a build
// with no network but DIR (workflow/mirror.hpp); then what to run on the offline side.
#include <algorithm>
#include <filesystem>
#include <memory>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/error.hpp"
#include "diag/terminal.hpp"
#include "diag/text.hpp"
#include "lock/size.hpp"
#include "manifest/load.hpp"
#include "net/http.hpp"
#include "render/quote.hpp"
#include "workflow/mirror.hpp"
#include "workflow/project.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

struct MirrorArgs {
  std::string dir;
  std::string manifest = "envpin.yaml";
  std::string lock;
  std::vector<std::string> insecure;
  bool quiet = false;
};

int mirror_cmd(const MirrorArgs& a, Streams& io) {
  const manifest::Manifest m = manifest::load(a.manifest);
  // Only a lock whose digest holds and that is current (load_lock's rule, as generate's).
  const std::optional<lock::Lock> l = workflow::load_lock(m, a.lock);
  const std::string shown =
      a.lock.empty() ? workflow::shown_path(m.project_dir, "envpin.lock").generic_string() : a.lock;
  if (!l)
    throw diag::Error("cannot read " + shown, diag::Location{shown, 0, 0},
                      "run 'envpin lock' first: the mirror holds what the lock names");
  workflow::MirrorOptions o;
  o.dir = a.dir;
  o.lock_file = shown;
  o.registry.insecure = a.insecure;
  diag::Progress progress(io.err, io.err_term, a.quiet);
  o.progress = [&](const std::string& line) { progress.step("mirror: " + line); };
  // The name goes into commands to copy and paste: one the shell reads back as it is, or none.
  if (const std::size_t bad = std::min(diag::invalid_utf8_at(a.dir), diag::control_at(a.dir)); bad != std::string::npos)
    throw diag::Error(
        "the mirror directory " + diag::quote(a.dir) + " has " + diag::describe_char_at(a.dir, bad) + " in its name",
        std::nullopt, "name a directory without control characters (newline, tab, escape)");
  const workflow::MirrorSummary s = workflow::mirror(*l, o);
  progress.done();
  const std::string dir = render::sh_word(fs::path(a.dir).lexically_normal().generic_string());
  io.out << "mirrored " << shown << " into " << diag::printable(dir) << ": " << s.images.size() << " image(s), "
         << s.debs << " .deb(s), " << s.wheels << " wheel(s); fetched " << lock::bytes_text(s.fetched) << ", kept "
         << lock::bytes_text(s.kept) << " already there\n"
         << "on the offline side, with " << dir << " copied there (docs/mirror.md):\n"
         << "  serve it:  python3 -m http.server --bind 127.0.0.1 --directory " << dir << " 8000\n";
  for (const workflow::MirroredRef& r : s.images)
    io.out << "  "
           << (r.name == "image"         ? "image:     "
               : r.name == "devel-image" ? "devel:     "
                                         : "uv:        ")
           << "skopeo copy --preserve-digests "
           << render::sh_word("dir:" + fs::path(a.dir).lexically_normal().generic_string() + "/images/" + r.name)
           << " docker://REGISTRY/" << r.repository << ":" << (r.tag.empty() ? "envpin-mirror" : r.tag) << "\n";
  io.out << "  build:     envpin generate --mirror http://127.0.0.1:8000"
         << (s.images.empty() ? "" : " --mirror-registry REGISTRY") << " && docker build --network host .\n";
  return kOk;
}

}  // namespace

Command mirror_command() {
  return {"mirror", "fetch every image blob, .deb and wheel envpin.lock names into DIR, verified, for offline builds",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto a = std::make_shared<MirrorArgs>();
            app.add_option("dir", a->dir, "the mirror directory (created; files already there that match are kept)")
                ->required();
            manifest_option(app, a->manifest);
            app.add_option("--lock", a->lock, "the lock to mirror (default: envpin.lock next to the manifest)");
            insecure_registry_option(app, a->insecure);
            quiet_flag(app, a->quiet);
            app.add_option_function<long>("--timeout", net::set_network_timeout_s,
                                          "seconds a server may stay silent before the request fails (default "
                                          "$ENVPIN_NET_TIMEOUT, else 30)")
                ->check(CLI::Range(1L, 3600L));
            return [a](Streams& io) { return mirror_cmd(*a, io); };
          }};
}

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// `envpin context`: its options and the digest line; workflow/context.hpp writes the tar.
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/terminal.hpp"
#include "workflow/context.hpp"

namespace envpin::cli {
namespace {

struct Options {
  std::string manifest = "envpin.yaml";
  std::string output = "envpin-context.tar";
  bool quiet = false;
};

int context(const Options& o, Streams& io) {
  diag::Progress progress(io.err, io.err_term, o.quiet);
  const workflow::ContextWritten w = workflow::write_context({o.manifest, o.output, {}, {}}, progress);
  // With '-o -' the tar is the output, and the digest goes to stderr.
  std::ostream& line = o.output == "-" ? io.err : io.out;
  line << "sha256:" << w.sha256 << "  " << o.output << " (" << w.files << " files, " << w.bytes << " bytes)\n";
  return kOk;
}

}  // namespace

Command context_command() {
  return {"context", "write the docker build context as a deterministic tar and print its sha256",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<Options>();
            manifest_option(app, o->manifest);
            app.add_option("-o,--output", o->output, "the tar to write ('-': standard output, the digest on stderr)")
                ->capture_default_str();
            quiet_flag(app, o->quiet);
            return [o](Streams& io) { return context(*o, io); };
          }};
}

}  // namespace envpin::cli

// SPDX-License-Identifier: Apache-2.0
// `envpin push`: its options and the pushed reference; workflow/push.hpp builds, pushes, checks
// and records.
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/terminal.hpp"
#include "workflow/push.hpp"

namespace envpin::cli {
namespace {

struct PushOptions {
  std::string manifest = "envpin.yaml";
  std::string reference;
  std::vector<std::string> insecure;
  bool json = false;
  bool quiet = false;
};

int push(const PushOptions& o, Streams& io) {
  diag::Progress progress(io.err, io.err_term, o.quiet);
  const workflow::Pushed p = workflow::push({o.manifest, o.reference, o.insecure}, io.err, progress);
  const workflow::PushRecord& r = p.record;
  if (o.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(workflow::push_record_json(r));
    j["unchanged"] = p.unchanged;
    io.out << j.dump(2) << "\n";
  } else {
    io.out << r.reference << "@" << r.digest << "\n";
  }
  io.err << "envpin: " << (p.unchanged ? "unchanged since the last push" : "recorded in .envpin/push.json")
         << "; 'envpin generate' writes " << r.digest.substr(0, 19) << "... into the files that name the image\n";
  return kOk;
}

}  // namespace

Command push_command() {
  return {"push", "build the job image with the project in it, push it, record the registry's digest",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<PushOptions>();
            app.add_option("reference", o->reference,
                           "REGISTRY/REPOSITORY[:TAG] (default: jobs.push; the tag: the project tree's hash)");
            manifest_option(app, o->manifest);
            app.add_flag("--json", o->json, "print the whole record as JSON");
            insecure_registry_option(app, o->insecure);
            quiet_flag(app, o->quiet);
            return [o](Streams& io) { return push(*o, io); };
          }};
}

}  // namespace envpin::cli

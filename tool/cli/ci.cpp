// SPDX-License-Identifier: Apache-2.0
// `envpin ci`: its options and the files written; workflow/ci.hpp checks and writes.
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "workflow/ci.hpp"

namespace envpin::cli {
namespace {

struct CiOptions {
  workflow::CiRequest request;
  bool gitlab = false;
};

int ci(const CiOptions& o, Streams& io) {
  workflow::CiRequest r = o.request;
  r.options.github = !o.gitlab;
  const workflow::CiWritten w = workflow::write_ci(r, io.err);
  for (std::size_t i = 0; i < w.files.size(); ++i)
    io.out << (w.changed[i] ? "wrote " : "unchanged ") << w.files[i] << "\n";
  if (!w.note.empty()) io.err << "envpin: note: " << w.note << "\n";
  return kOk;
}

}  // namespace

Command ci_command() {
  return {"ci", "write the CI pipeline that checks the environment on every change (GitHub Actions or GitLab CI)",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<CiOptions>();
            auto* github = app.add_flag("--github", o->request.options.github, "write .github/workflows/envpin.yml");
            auto* gitlab =
                app.add_flag("--gitlab", o->gitlab, "write .envpin/gitlab-ci.yml (and .gitlab-ci.yml including it)");
            github->excludes(gitlab);
            app.add_option("--deb", o->request.options.deb_url, "the URL the pipeline installs envpin's .deb from")
                ->required();
            app.add_option("--deb-sha256", o->request.options.deb_sha256, "that .deb's sha256")->required();
            app.add_option("--gpu-runner", o->request.options.gpu_runner,
                           "a runner label: the smoke runs on a GPU there too");
            app.add_option("--user-secret", o->request.options.user_secret,
                           "the CI secret holding the registry's user name (for jobs.push)")
                ->capture_default_str();
            app.add_option("--password-secret", o->request.options.password_secret,
                           "the CI secret holding the registry's password or token")
                ->capture_default_str();
            app.add_flag("--force", o->request.force, "replace a pipeline file envpin ci did not write");
            manifest_option(app, o->request.manifest);
            app.callback([github, gitlab] {
              if (github->count() + gitlab->count() != 1)
                throw CLI::ValidationError("envpin ci", "name --github or --gitlab");
            });
            return [o](Streams& io) { return ci(*o, io); };
          }};
}

}  // namespace envpin::cli

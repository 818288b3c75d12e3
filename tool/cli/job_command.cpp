// SPDX-License-Identifier: Apache-2.0
#include "cli/job_command.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace envpin::cli {

Command job_command(const char* name, const char* summary, Action action,
                    std::function<void(CLI::App&, JobOptions&)> options) {
  return {name, summary, [action, options](CLI::App& app) -> std::function<int(Streams&)> {
            auto o = std::make_shared<JobOptions>();
            manifest_option(app, o->manifest);
            options(app, *o);
            return [o, action](Streams& io) { return action(*o, io); };
          }};
}

}  // namespace envpin::cli

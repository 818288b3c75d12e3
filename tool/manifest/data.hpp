// SPDX-License-Identifier: Apache-2.0
// What a project's jobs read that is not code: the `paths:` entries that lie in the project as
// the container sees it (under the workdir, where run.sh mounts the project) and jobs.data.
// envpin sync names those it leaves out, `sync --data` sends them, `run --host` needs them there.
#pragma once

#include <string>
#include <vector>

#include "manifest/model.hpp"

namespace envpin::manifest {

// Project-relative, '/'-separated paths, sorted, each once; a `paths:` entry's ${NAME} is read
// from `env`. Entries outside the workdir (mounted from elsewhere) are not the project's.
std::vector<Located<std::string>> data_paths(const Manifest& m);

}  // namespace envpin::manifest

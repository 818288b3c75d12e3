// SPDX-License-Identifier: Apache-2.0
// `envpin hash PATH...`: sha256 of a file, or the h1m digest of a tree (pin/tree_digest.hpp).
#include <filesystem>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "diag/error.hpp"
#include "diag/terminal.hpp"
#include "pin/sha256.hpp"
#include "pin/tree_digest.hpp"

namespace envpin::cli {
namespace {

namespace fs = std::filesystem;

int hash(const std::vector<std::string>& paths, bool quiet, Streams& io) {
  for (const std::string& p : paths) {
    std::error_code ec;
    const auto status = fs::symlink_status(p, ec);
    if (ec || !fs::exists(status))
      throw diag::Error("cannot hash '" + p + "': no such file or directory", diag::Location{p, 0, 0});
    if (fs::is_directory(status)) {
      std::size_t files = 0;
      std::uintmax_t bytes = 0;
      diag::Progress progress(io.err, io.err_term, quiet);
      const std::string digest = pin::tree_digest(p, files, bytes, progress);
      io.out << digest << "  " << p << " (" << files << " files, " << bytes << " bytes)\n";
    } else {
      io.out << "sha256:" << pin::sha256_file(p) << "  " << p << "\n";
    }
  }
  return kOk;
}

}  // namespace

Command hash_command() {
  return {"hash", "sha256 of files, and a deterministic digest of directory trees (h1m: paths, modes, links)",
          [](CLI::App& app) -> std::function<int(Streams&)> {
            auto paths = std::make_shared<std::vector<std::string>>();
            auto quiet = std::make_shared<bool>(false);
            app.add_option("paths", *paths, "files or directories")->required();
            quiet_flag(app, *quiet);
            return [paths, quiet](Streams& io) { return hash(*paths, *quiet, io); };
          }};
}

}  // namespace envpin::cli

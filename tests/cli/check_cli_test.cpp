// SPDX-License-Identifier: Apache-2.0
// `envpin check` beyond check_env.sh (whose verdicts tests/e2e/check_env_run.sh compares with
// envpin check's): the lock's integrity bit and the --deep file checks on a real venv and a real deb.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.hpp"
#include "lock/lock.hpp"
#include "manifest/load.hpp"

namespace envpin {
namespace {

class CheckCli : public Cli {};

nlohmann::json verdict(const nlohmann::json& j, const std::string& name) {
  for (const auto& v : j["verdicts"])
    if (v["name"] == name) return v;
  return {};
}

TEST_F(CheckCli, LockIntegrityIsBitTwo) {
  write("envpin.yaml", "envpin: 1\nname: c\napt: [dash]\n");
  const manifest::Manifest m = manifest::load((dir_ / "envpin.yaml").string());
  lock::Lock l;
  l.created_by = "envpin 0.1.0";
  l.platforms = {"linux/amd64"};
  l.inputs_digest = lock::inputs_digest(m);
  lock::seal(l);
  write("envpin.lock", lock::to_toml(l));
  Result r = run("check --json --allow-no-gpu");
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(verdict(j, "lock.integrity")["status"], "ok") << r.out;
  EXPECT_EQ(j["status"].get<int>() & 2, 0);
  std::string text = *io::read_file(dir_ / "envpin.lock");
  text.replace(text.find("created-by = \"envpin 0.1.0\""), 27, "created-by = \"envpin 9.9.9\"");
  write("envpin.lock", text);
  r = run("check --json --allow-no-gpu");
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(verdict(j, "lock.integrity")["status"], "STALE");
  EXPECT_EQ(j["status"].get<int>() & 2, 2);
  EXPECT_EQ(r.code & 2, 2);
}

TEST_F(CheckCli, DeepHashesInstalledFiles) {
  // A real venv: pip's RECORD lists sha256 for each of its files.
  ASSERT_EQ(std::system(("/usr/bin/python3 -m venv " + (dir_ / "venv").string() + " >/dev/null 2>&1").c_str()), 0);
  write("envpin.yaml", "envpin: 1\nname: c\napt: [dash]\npython: {version: '3.11', packages: [pip]}\n");
  const std::string env = "ENVPIN_PYTHON=" + (dir_ / "venv/bin/python3").string();
  Result r = run("check --deep --json --allow-no-gpu", env);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(verdict(j, "deep.python.pip")["status"], "ok") << r.out;
  EXPECT_EQ(verdict(j, "deep.apt.dash")["status"], "ok") << r.out;
  // Change one installed file of pip: --deep names the distribution and the file.
  fs::path victim;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "venv/lib"))
    if (e.path().filename() == "__main__.py" && e.path().parent_path().filename() == "pip") victim = e.path();
  ASSERT_FALSE(victim.empty());
  io::write_atomic(victim, "# tampered\n", false);
  r = run("check --deep --json --allow-no-gpu", env);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(verdict(j, "deep.python.pip")["status"], "MISMATCH");
  EXPECT_NE(verdict(j, "deep.python.pip")["detail"].get<std::string>().find("found 1 of"), std::string::npos);
  EXPECT_NE(verdict(j, "deep.python.pip")["detail"].get<std::string>().find("pip/__main__.py"), std::string::npos);
  EXPECT_EQ(r.code & 1, 1);
}

}  // namespace
}  // namespace envpin

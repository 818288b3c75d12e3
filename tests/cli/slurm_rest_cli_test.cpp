// SPDX-License-Identifier: Apache-2.0
// `envpin submit --rest` and `envpin jobs --rest` against each REST API version slurmrestd
// serves on today's clusters (Slurm 23.02 to 25.11), on a stand-in server that answers as they
// do (tests/fakes/fake_slurmrestd.py: an OpenAPI document listing the versions, the answers
// recorded in tests/data/slurmrestd/recorded). What envpin sends is validated by ajv against
// Slurm's own schema of that version (tests/data/slurmrestd/v0.0.4X.schema.json, reduced from the
// documents Slurm's testsuite recorded, with unknown keys refused: slurmrestd only warns about
// them), and so are the recorded answers. v0.0.38 runs against Debian 12's real slurmrestd in
// tests/e2e/resume_torch.sh.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_fixture.hpp"
#include "manifest/load.hpp"

namespace envpin {
namespace {

const std::string kData = std::string(ENVPIN_SOURCE_DIR) + "/tests/data/slurmrestd";
const std::string kAjv = std::string(ENVPIN_SOURCE_DIR) + "/tests/tools/node_modules/.bin/ajv";

class SlurmRestCli : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    write("envpin.yaml",
          "envpin: 1\nname: demo\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: debian12\n"
          "jobs:\n  checkpoints: {path: /checkpoints, host: ckpt}\n  logs: logs\n  launch: torchrun\n  nodes: 2\n"
          "  gpus_per_node: 4\n  slurm: {time: '04:00:00', partition: gpu}\n");
    write("envpin.lock", lock::to_toml(image_only_lock(manifest::load((dir_ / "envpin.yaml").string()))));
    ASSERT_EQ(run("generate").code, 0);
    fs::create_directories(dir_ / "server");
  }
  void TearDown() override {
    stop();
    Cli::TearDown();
  }
  // The stand-in serving `versions` (comma-separated), answering submissions with `submit` and
  // job lists with `jobs` (files of tests/data/slurmrestd/recorded).
  void serve(const std::string& versions, const std::string& submit, const std::string& jobs) {
    stop();
    fs::copy_file(kData + "/recorded/" + submit, dir_ / "server/answer-submit.json",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(kData + "/recorded/" + jobs, dir_ / "server/answer-jobs.json", fs::copy_options::overwrite_existing);
    port_ =
        std::stoi(shell("/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); "
                        "print(s.getsockname()[1])'"));
    pid_ = std::stoi(shell("{ /usr/bin/python3 " +
                           sh_quote(std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/fake_slurmrestd.py") + " " +
                           std::to_string(port_) + " " + sh_quote((dir_ / "server").string()) + " " + versions +
                           " >/dev/null 2>&1 </dev/null & echo $!; }"));
    for (int i = 0; i < 100 && shell("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:" +
                                     std::to_string(port_) + "/openapi/v3") != "401";
         ++i)
      ::usleep(50000);
  }
  void stop() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
    pid_ = 0;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // envpin COMMAND --rest URL ARGS, with a token.
  Result rest(const std::string& command, const std::string& args = "") {
    return run(command + " --rest " + url() + " " + args, "SLURM_JWT=eyJh.eyJl.sig");
  }
  // ajv's verdict on `data` against the `root` schema ("submit_request", "submit_response",
  // "jobs_response") of Slurm's `version`: "" when valid, else ajv's complaint.
  std::string invalid(const std::string& version, const std::string& root, const fs::path& data) {
    std::ifstream in(kData + "/" + version + ".schema.json");
    const nlohmann::json schema = nlohmann::json::parse(in);
    const nlohmann::json wrapper = {{"$ref", schema["roots"][root]}, {"definitions", schema["definitions"]}};
    write("schema.json", wrapper.dump());
    const std::string out =
        shell(sh_quote(kAjv) + " validate --strict=false -c ajv-formats -s " +
              sh_quote((dir_ / "schema.json").string()) + " -d " + sh_quote(data.string()) + " 2>&1; echo \"exit=$?\"");
    return out.ends_with("exit=0\n") ? "" : out;
  }
  bool have_ajv() {
    if (fs::exists(kAjv)) return true;
    const char* required = std::getenv("ENVPIN_REQUIRE_TOOLS");
    EXPECT_FALSE(required && std::string(required) == "1") << "ajv is not installed (run .ci/install-deps)";
    return false;
  }
  int port_ = 0;
  int pid_ = 0;
};

TEST_F(SlurmRestCli, EachVersionGetsARequestItsSchemaTakes) {
  if (!have_ajv()) GTEST_SKIP() << "ajv is not installed (run .ci/install-deps)";
  // v0.0.40 has no recorded document: its job description has v0.0.41's keys and types (Slurm
  // 23.11's parsers.c, c92b66a3), so v0.0.41's schema checks it.
  for (const auto& [version, schema] : std::vector<std::pair<std::string, std::string>>{{"v0.0.40", "v0.0.41"},
                                                                                        {"v0.0.41", "v0.0.41"},
                                                                                        {"v0.0.42", "v0.0.42"},
                                                                                        {"v0.0.43", "v0.0.43"},
                                                                                        {"v0.0.44", "v0.0.44"}}) {
    SCOPED_TRACE(version);
    // An older version beside it, as every server serves: the newest is chosen.
    serve("v0.0.38," + version, "submit.json", "jobs-v0.0.40+.json");
    const Result r = rest("submit", "--job-id train-1 -- python3 train.py --epochs 3");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "submitted slurm job 4242 as envpin job train-1; output in logs/\n");
    const fs::path sent = dir_ / "server" / ("submit-" + version + ".json");
    ASSERT_TRUE(fs::exists(sent)) << "nothing was posted to /slurm/" << version << "/job/submit";
    EXPECT_EQ(invalid(schema, "submit_request", sent), "");
    EXPECT_EQ(invalid(schema, "submit_response", kData + "/recorded/submit.json"), "");
    EXPECT_EQ(invalid(schema, "jobs_response", kData + "/recorded/jobs-v0.0.40+.json"), "");
    const Result jobs = rest("jobs", "--json");
    ASSERT_EQ(jobs.code, 0) << jobs.err;
    const auto list = nlohmann::json::parse(jobs.out);
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[1]["job"], "bad-data");
    EXPECT_EQ(list[1]["state"], "FAILED");
    EXPECT_EQ(list[1]["exit"], "3");
    EXPECT_EQ(list[2]["state"], "CANCELLED,COMPLETING");
    EXPECT_EQ(list[2]["exit"], "signal 9");
  }
}

// The schemas refuse what a version does not take: v0.0.38's shapes (an environment map, the
// node count as a list) and keys (`gpus_per_node`), which envpin sent to every server before.
TEST_F(SlurmRestCli, TheSchemasRefuseTheOldShapes) {
  if (!have_ajv()) GTEST_SKIP() << "ajv is not installed (run .ci/install-deps)";
  write("old.json", R"({"script": "#!/bin/sh\ntrue\n", "job": {"name": "demo", "environment": {"PATH": "/bin"},
      "nodes": [2, 2], "open_mode": "append", "time_limit": 240}})");
  const std::string complaint = invalid("v0.0.44", "submit_request", dir_ / "old.json");
  EXPECT_NE(complaint.find("must be array"), std::string::npos) << complaint;
  write("unknown.json",
        R"({"job": {"script": "#!/bin/sh\ntrue\n", "environment": ["PATH=/bin"], "gpus_per_node": "x"}})");
  EXPECT_NE(invalid("v0.0.44", "submit_request", dir_ / "unknown.json").find("additionalProperties"),
            std::string::npos);
}

TEST_F(SlurmRestCli, V0039AndWhatEnvpinDoesNotSpeak) {
  serve("v0.0.39", "submit.json", "jobs-v0.0.39.json");
  Result r = rest("submit", "-- true");
  EXPECT_EQ(r.code, 0) << r.err;
  const auto body = nlohmann::json::parse(io::read_file(dir_ / "server/submit-v0.0.39.json").value_or("null"));
  EXPECT_TRUE(body["job"]["environment"].is_array());
  r = rest("jobs", "--json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)[2]["exit"], "signal 9");
  // Slurm's refusal, its words once.
  serve("v0.0.44", "submit-error.json", "jobs-v0.0.40+.json");
  write("server/fail", "");
  r = rest("submit", "-- true");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "envpin: error: slurmrestd at " + url() +
                " answered POST /slurm/v0.0.44/job/submit with Invalid partition name specified");
  fs::remove(dir_ / "server/fail");
  // A server newer than envpin: what it serves and what envpin speaks, nothing sent.
  serve("v0.0.45,v0.0.46", "submit.json", "jobs-v0.0.40+.json");
  r = rest("submit", "-- true");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: slurmrestd at " + url() +
                " serves the REST API v0.0.45, v0.0.46 only; envpin speaks v0.0.38 to v0.0.44\n"
                "envpin: hint: use an envpin that speaks v0.0.46, or start slurmrestd with -d v0.0.44 as well\n");
  EXPECT_FALSE(fs::exists(dir_ / "server/submit-v0.0.46.json"));
  // Named by the user: taken without asking; a version envpin does not speak is refused.
  serve("v0.0.41,v0.0.42", "submit.json", "jobs-v0.0.40+.json");
  EXPECT_EQ(run("submit --rest " + url() + " -- true", "SLURM_JWT=a.b.c ENVPIN_SLURM_REST_API=v0.0.41").code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "server/submit-v0.0.41.json"));
  r = run("submit --rest " + url() + " -- true", "SLURM_JWT=a.b.c ENVPIN_SLURM_REST_API=v0.0.37");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "envpin: error: ENVPIN_SLURM_REST_API is 'v0.0.37', not a REST API version envpin speaks");
}

}  // namespace
}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
// The REST submission's parts that need no slurmrestd: the JSON body (the script with the
// command, the properties job.sbatch's directives give), the job's environment (never a
// manifest secret), Slurm's time limits and raw exit codes. tests/e2e/resume_torch.sh submits
// through a real slurmrestd.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "diag/error.hpp"
#include "jobs/slurm_rest.hpp"
#include "manifest/load.hpp"

namespace envpin::jobs {
namespace {

const char* kScript = "#!/bin/sh\n#SBATCH --job-name=ddp\n# comment\nset -u\ncd x\nsh .envpin/run.sh -- \"$@\"\n";

manifest::Manifest parse(const std::string& jobs) {
  return manifest::parse("envpin: 1\nname: ddp\nsecrets: [WANDB_API_KEY]\njobs:\n" + jobs, "envpin.yaml", ".");
}

TEST(SlurmRest, BodyCarriesTheDirectivesAndTheQuotedCommand) {
  const auto m = parse(R"(  launch: torchrun
  nodes: 2
  gpus_per_node: 4
  slurm: {time: "1-02:03:04", warn: 90, partition: gpu}
)");
  Submission s{
      "/shared/p", kScript, "run1", {"python3", "train.py", "--name", "it's $(rm -rf /)"}, {{"PATH", "/usr/bin"}}};
  const nlohmann::json b = submit_body(m, s);
  const auto& job = b["job"];
  EXPECT_EQ(job["name"], "ddp");
  EXPECT_EQ(job["comment"], "envpin job run1");
  EXPECT_EQ(job["current_working_directory"], "/shared/p");
  EXPECT_EQ(job["standard_output"], "/shared/p/logs/slurm-%j.out");
  EXPECT_EQ(job["open_mode"], "append");
  EXPECT_EQ(job["requeue"], true);
  EXPECT_FALSE(job.contains("signal"));  // slurmrestd 22.05 refuses "B:"; the script warns itself
  EXPECT_EQ(job["time_limit"], 1 * 1440 + 2 * 60 + 3 + 1);
  EXPECT_EQ(job["partition"], "gpu");
  EXPECT_EQ(job["nodes"], nlohmann::json::array({2, 2}));
  EXPECT_EQ(job["tasks_per_node"], 1);
  EXPECT_EQ(job["tasks"], 2);
  EXPECT_EQ(job["gpus_per_node"], "gpu:4");
  EXPECT_EQ(job["environment"]["PATH"], "/usr/bin");
  // The command becomes "$@" right after `set -u`, each word single-quoted: nothing in it runs.
  const std::string script = b["script"];
  EXPECT_EQ(script.substr(0, script.find("cd x")),
            "#!/bin/sh\n#SBATCH --job-name=ddp\n# comment\nset -u\n"
            "set -- 'python3' 'train.py' '--name' 'it'\\''s $(rm -rf /)'\n");
}

TEST(SlurmRest, OneNodeWithoutLauncherIsOneTask) {
  const auto m = parse("  gpus: all\n");
  const nlohmann::json job = submit_body(m, {"/p", kScript, "", {"true"}, {}})["job"];
  EXPECT_EQ(job["comment"], "envpin");
  EXPECT_EQ(job["tasks"], 1);
  EXPECT_FALSE(job.contains("tasks_per_node"));
  EXPECT_EQ(job["exclusive"], "true");
  EXPECT_FALSE(job.contains("time_limit"));
}

TEST(SlurmRest, ScriptWithoutSetULineIsRefused) {
  const auto m = parse("  gpus: none\n");
  EXPECT_THROW(submit_body(m, {"/p", "#!/bin/sh\necho hi\n", "", {"true"}, {}}), diag::Error);
}

TEST(SlurmRest, EnvironmentNeverCarriesASecret) {
  const auto m = parse("  env: [WANDB_PROJECT]\n  notify: {url_secret: HOOK_URL}\n");
  ::setenv("WANDB_API_KEY", "planted-secret", 1);
  ::setenv("WANDB_PROJECT", "proj", 1);
  ::setenv("HOOK_URL", "https://hooks.example/x", 1);
  ::setenv("GLOO_SOCKET_IFNAME", "lo", 1);
  std::vector<std::string> withheld;
  const auto env = job_environment(m, "/shared/p", "run1", withheld);
  ::unsetenv("WANDB_API_KEY");
  ::unsetenv("WANDB_PROJECT");
  ::unsetenv("HOOK_URL");
  ::unsetenv("GLOO_SOCKET_IFNAME");
  EXPECT_EQ(env.count("WANDB_API_KEY"), 0u);
  for (const auto& [k, v] : env) EXPECT_EQ(v.find("planted-secret"), std::string::npos) << k;
  EXPECT_EQ(withheld, std::vector<std::string>{"WANDB_API_KEY"});
  EXPECT_EQ(env.at("WANDB_PROJECT"), "proj");
  EXPECT_EQ(env.at("HOOK_URL"), "https://hooks.example/x");
  EXPECT_EQ(env.at("GLOO_SOCKET_IFNAME"), "lo");
  EXPECT_EQ(env.at("ENVPIN_PROJECT_DIR"), "/shared/p");
  EXPECT_EQ(env.at("ENVPIN_JOB_ID"), "run1");
  EXPECT_EQ(env.at("ENVPIN_SELF_WARN"), "1");
  EXPECT_FALSE(env.at("PATH").empty());
}

TEST(SlurmRest, TimeLimitsAndExitCodes) {
  EXPECT_EQ(time_limit_minutes("90"), 90);
  EXPECT_EQ(time_limit_minutes("04:00:00"), 240);
  EXPECT_EQ(time_limit_minutes("00:00:01"), 1);
  EXPECT_EQ(time_limit_minutes("2-00:30:00"), 2910);
  EXPECT_EQ(describe_exit_code(0), "0");
  EXPECT_EQ(describe_exit_code(768), "3");  // exit 3, as slurmrestd reports it
  EXPECT_EQ(describe_exit_code(9), "signal 9");
  EXPECT_EQ(describe_exit_code(-1), "-");
}

TEST(SlurmRest, JobsAnswerIsReadWithoutTrustingItsTypes) {
  const auto good = rest_job(nlohmann::json::parse(R"({"job_id": 7, "name": "ddp", "comment": "envpin job run1",
      "job_state": "FAILED", "state_reason": "NonZeroExitCode", "exit_code": 768, "nodes": "node[1-2]", "restart_cnt": 1})"),
                             "ddp");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->slurm_job, 7);
  EXPECT_EQ(good->job, "run1");
  EXPECT_EQ(good->state, "FAILED");
  EXPECT_EQ(good->exit, "3");
  EXPECT_EQ(good->nodes, "node[1-2]");
  EXPECT_EQ(good->restarts, 1);
  const auto plain = rest_job(nlohmann::json::parse(R"({"job_id": 8, "name": "ddp", "comment": "envpin"})"), "ddp");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->job, "ddp-slurm-8");
  EXPECT_EQ(plain->exit, "-");
  // Another project's job, not an object, no id: left out. Fields of another type read as missing.
  EXPECT_FALSE(rest_job(nlohmann::json::parse(R"({"job_id": 9, "name": "other"})"), "ddp"));
  EXPECT_FALSE(rest_job(nlohmann::json::parse(R"([1, 2])"), "ddp"));
  EXPECT_FALSE(rest_job(nlohmann::json::parse(R"({"name": "ddp"})"), "ddp"));
  const auto odd = rest_job(nlohmann::json::parse(R"({"job_id": 10, "name": "ddp", "nodes": [1, 2], "exit_code": "x",
      "comment": 5, "restart_cnt": "many"})"),
                            "ddp");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->nodes, "");
  EXPECT_EQ(odd->exit, "-");
  EXPECT_EQ(odd->job, "");
  EXPECT_EQ(odd->restarts, 0);
}

TEST(SlurmRest, UrlIsChecked) {
  EXPECT_THROW(rest_target("127.0.0.1:6820"), diag::Error);
  EXPECT_THROW(rest_target("http://h:1/$(id)"), diag::Error);
  ::setenv("SLURM_JWT", "not a token;", 1);
  EXPECT_THROW(rest_target("http://127.0.0.1:6820"), diag::Error);
  ::setenv("SLURM_JWT", "eyJh.eyJl.sig_-", 1);
  const RestTarget t = rest_target("http://127.0.0.1:6820/");
  ::unsetenv("SLURM_JWT");
  EXPECT_EQ(t.base, "http://127.0.0.1:6820");
  EXPECT_EQ(t.token, "eyJh.eyJl.sig_-");
  EXPECT_FALSE(t.user.empty());
}

}  // namespace
}  // namespace envpin::jobs

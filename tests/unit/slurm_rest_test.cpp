// SPDX-License-Identifier: Apache-2.0
// The REST submission's parts that need no slurmrestd: the JSON body (the script with the
// command, the properties job.sbatch's directives give), the job's environment (never a
// manifest secret), Slurm's time limits and raw exit codes. tests/e2e/resume_torch.sh submits
// through a real slurmrestd.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <vector>

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
  const nlohmann::json b = submit_body(m, s, 38);
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
  const nlohmann::json job = submit_body(m, {"/p", kScript, "", {"true"}, {}}, 38)["job"];
  EXPECT_EQ(job["comment"], "envpin");
  EXPECT_EQ(job["tasks"], 1);
  EXPECT_FALSE(job.contains("tasks_per_node"));
  EXPECT_EQ(job["exclusive"], "true");
  EXPECT_FALSE(job.contains("time_limit"));
}

TEST(SlurmRest, ScriptWithoutSetULineIsRefused) {
  const auto m = parse("  gpus: none\n");
  for (const int api : {38, 44})
    EXPECT_THROW(submit_body(m, {"/p", "#!/bin/sh\necho hi\n", "", {"true"}, {}}, api), diag::Error);
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

// v0.0.39 and later (Slurm 23.02 to 25.11): the same job in the data_parser's shapes. The bodies
// are checked against Slurm's recorded OpenAPI schemas by SlurmRestCli (tests/cli).
TEST(SlurmRest, LaterVersionsGetTheirShapes) {
  const auto m = parse(R"(  launch: torchrun
  nodes: 2
  gpus_per_node: 4
  slurm: {time: "1-02:03:04", partition: gpu}
)");
  Submission s{"/shared/p", kScript, "run1", {"python3", "train.py"}, {{"PATH", "/usr/bin"}, {"HOME", "/home/u"}}};
  for (const int api : {39, 40, 41, 42, 43, 44}) {
    SCOPED_TRACE(api_name(api));
    const nlohmann::json b = submit_body(m, s, api);
    EXPECT_FALSE(b.contains("script"));  // job.script; the top-level one is deprecated from v0.0.41
    const auto& job = b["job"];
    EXPECT_NE(job["script"].get<std::string>().find("\nset -u\nset -- 'python3' 'train.py'\n"), std::string::npos);
    EXPECT_EQ(job["environment"], nlohmann::json::array({"HOME=/home/u", "PATH=/usr/bin"}));
    EXPECT_EQ(job["nodes"], "2");
    EXPECT_EQ(job["open_mode"], nlohmann::json::array({"APPEND"}));
    EXPECT_EQ(job["time_limit"], nlohmann::json({{"set", true}, {"infinite", false}, {"number", 1564}}));
    EXPECT_EQ(job["tres_per_node"], "gres/gpu:4");
    EXPECT_FALSE(job.contains("gpus_per_node"));
    EXPECT_EQ(job["tasks_per_node"], 1);
    EXPECT_EQ(job["tasks"], 2);
  }
  const auto all = parse("  gpus: all\n");
  const nlohmann::json job = submit_body(all, {"/p", kScript, "", {"true"}, {}}, 42)["job"];
  EXPECT_EQ(job["shared"], nlohmann::json::array({"none"}));  // `exclusive` is gone from v0.0.42
  EXPECT_FALSE(job.contains("exclusive"));
}

nlohmann::json openapi(std::initializer_list<const char*> paths) {
  nlohmann::json doc = {{"openapi", "3.0.3"}, {"servers", {{{"url", "/"}}}}, {"paths", nlohmann::json::object()}};
  for (const char* p : paths) doc["paths"][p] = {{"post", nlohmann::json::object()}};
  return doc;
}

TEST(SlurmRest, TheNewestVersionBothSpeakIsChosen) {
  // Slurm 22.05 (Debian 12) with -s openapi/v0.0.38; 24.11 with its three parsers; 25.11 with
  // v0.0.45 beside v0.0.44 (master has it: newer than envpin, skipped).
  EXPECT_EQ(choose_api(openapi({"/slurm/v0.0.38/job/submit", "/slurm/v0.0.38/jobs"}), "h"), 38);
  EXPECT_EQ(choose_api(openapi({"/slurm/v0.0.40/job/submit", "/slurm/v0.0.42/job/submit", "/slurm/v0.0.41/job/submit",
                                "/slurmdb/v0.0.42/jobs/"}),
                       "h"),
            42);
  EXPECT_EQ(choose_api(openapi({"/slurm/v0.0.44/job/submit", "/slurm/v0.0.45/job/submit"}), "h"), 44);
  const auto error = [](const nlohmann::json& doc) {
    try {
      choose_api(doc, "http://h:6820");
    } catch (const diag::Error& e) {
      return e.message();
    }
    return std::string();
  };
  EXPECT_EQ(error(openapi({"/slurm/v0.0.45/job/submit", "/slurm/v0.0.46/job/submit"})),
            "slurmrestd at http://h:6820 serves the REST API v0.0.45, v0.0.46 only; envpin speaks v0.0.38 to v0.0.44");
  EXPECT_EQ(error(openapi({"/slurm/v0.0.36/job/submit"})),
            "slurmrestd at http://h:6820 serves the REST API v0.0.36 only; envpin speaks v0.0.38 to v0.0.44");
  // Not a document, no paths, paths that only look like versions: no version.
  for (const auto& doc :
       {nlohmann::json::array(), nlohmann::json::object(), openapi({"/slurm/v0.0.x/job/submit"}),
        openapi({"/slurm/v0.0.44/job/submit/x", "/slurm/v0.0.4444/job/submit", "/slurm//job/submit"})})
    EXPECT_EQ(
        error(doc),
        "slurmrestd at http://h:6820 lists no job submission API in its OpenAPI document; envpin speaks v0.0.38 to "
        "v0.0.44");
}

// The recorded answers (tests/data/slurmrestd/recorded, checked against Slurm's schemas by
// SlurmRestCli) as each version reads them.
TEST(SlurmRest, EveryVersionsJobsAnswerReadsAlike) {
  for (const char* name : {"jobs-v0.0.39.json", "jobs-v0.0.40+.json"}) {
    SCOPED_TRACE(name);
    std::ifstream in(std::string(ENVPIN_SOURCE_DIR) + "/tests/data/slurmrestd/recorded/" + name);
    const nlohmann::json answer = nlohmann::json::parse(in);
    std::vector<RestJob> jobs;
    for (const auto& e : answer["jobs"])
      if (auto j = rest_job(e, "demo")) jobs.push_back(*j);
    ASSERT_EQ(jobs.size(), 3u);  // the fourth is another project's
    EXPECT_EQ(jobs[0].job, "train-1");
    EXPECT_EQ(jobs[0].state, "RUNNING");
    EXPECT_EQ(jobs[0].exit, "-");  // not set while it runs
    EXPECT_EQ(jobs[0].restarts, 1);
    EXPECT_EQ(jobs[0].nodes, "node[1-2]");
    EXPECT_EQ(jobs[1].state, "FAILED");
    EXPECT_EQ(jobs[1].exit, "3");
    EXPECT_EQ(jobs[2].job, "demo-slurm-4244");
    EXPECT_EQ(jobs[2].exit, "signal 9");
  }
  // v0.0.40+ lists the state's flags; a server started with +complex gives the numbers bare.
  const auto flagged = rest_job(nlohmann::json::parse(R"({"job_id": 5, "name": "demo",
      "job_state": ["CANCELLED", "COMPLETING"], "exit_code": {"status": ["ERROR"], "return_code": 2}})"),
                                "demo");
  ASSERT_TRUE(flagged);
  EXPECT_EQ(flagged->state, "CANCELLED,COMPLETING");
  EXPECT_EQ(flagged->exit, "2");
  // Out of range or of another type: no exit code rather than a wrong one.
  const auto odd = rest_job(nlohmann::json::parse(R"({"job_id": 6, "name": "demo", "job_state": [1, "RUNNING"],
      "exit_code": {"return_code": {"set": true, "number": 99999}, "signal": {"id": "9"}}})"),
                            "demo");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->state, "RUNNING");
  EXPECT_EQ(odd->exit, "-");
  // The server's words reach a terminal: escapes shown, not sent; long ones cut; a comment that
  // does not hold a job id names none.
  const auto hostile = rest_job(nlohmann::json::parse(R"({"job_id": 7, "name": "demo",
      "comment": "envpin job ../../x; rm", "job_state": ["RUN\u001b]0;owned\u0007NING"],
      "state_reason": "\u001b[2J\u202eesaeler", "nodes": ")" +
                                                      std::string(5000, 'n') + R"("})"),
                                "demo");
  ASSERT_TRUE(hostile);
  EXPECT_EQ(hostile->job, "");
  EXPECT_EQ(hostile->state, "RUN\\x1b]0;owned\\x07NING");
  EXPECT_EQ(hostile->reason, "\\x1b[2J\\u202eesaeler");
  EXPECT_EQ(hostile->nodes.size(), 203u);
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

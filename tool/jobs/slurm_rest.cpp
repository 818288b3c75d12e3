// SPDX-License-Identifier: Apache-2.0
// Facts used here (reference/real-tools-2.md §2, Slurm 22.05.8): slurmrestd answers a missing or
// unaccepted token with 401, and a token slurmctld rejects (bogus, expired, another user) with
// 500 "slurmctld config is unable to load"; `environment` must be a dictionary; exit_code is the
// raw wait status (exit 3 -> 768).
#include "jobs/slurm_rest.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/process.hpp"
#include "net/http.hpp"
#include "sync/remote.hpp"

namespace envpin::jobs {
namespace {

using diag::Error;
using nlohmann::json;

constexpr std::string_view kApi = "/slurm/v0.0.38";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> headers(const RestTarget& t) {
  return {"X-SLURM-USER-NAME: " + t.user, "X-SLURM-USER-TOKEN: " + t.token, "Accept: application/json",
          "Content-Type: application/json"};
}

// The first error slurmrestd put in the body ("errors": [{"error": ..., "description": ...}]),
// or the body's own "error"/"description".
std::string body_error(const json& j) {
  const auto text = [](const json& e) {
    std::string out;
    for (const char* key : {"description", "error"})
      if (e.contains(key) && e[key].is_string() && !e[key].get<std::string>().empty()) {
        if (!out.empty()) out += ": ";
        out += e[key].get<std::string>();
      }
    return out;
  };
  if (j.contains("errors") && j["errors"].is_array())
    for (const json& e : j["errors"])
      if (e.is_object() && !text(e).empty()) return text(e);
  return j.is_object() ? text(j) : "";
}

net::Response call(const RestTarget& t, const std::string& method, const std::string& path, const std::string& body) {
  net::Request r;
  r.method = method;
  r.url = t.base + std::string(kApi) + path;
  r.headers = headers(t);
  r.body = body;
  net::HttpOptions o;
  o.attempts = method == "GET" ? 3 : 1;  // a submission is never sent twice
  net::Response response;
  try {
    response = net::fetch(r, o);
  } catch (const Error& e) {
    throw Error("slurmrestd at " + t.base + " is not reachable: " + e.message(), std::nullopt,
                "start it (slurmrestd -a rest_auth/jwt -s openapi/v0.0.38 HOST:PORT), or give its URL to --rest");
  }
  json j = json::parse(response.body, nullptr, false);
  if (response.status == 401)
    throw Error("slurmrestd at " + t.base + " refused the token (401 " +
                    (body_error(j).empty() ? std::string("Authentication failure") : body_error(j)) + ")",
                std::nullopt,
                "export SLURM_JWT from 'scontrol token' (slurm.conf needs AuthAltTypes=auth/jwt, and slurmrestd "
                "runs with SLURM_JWT=daemon -a rest_auth/jwt)");
  // slurmctld refuses a bad token by closing the connection: slurmrestd then reports
  // "slurmctld config is unable to load" (reads) or "Zero Bytes were transmitted or received".
  if (const std::string why = body_error(j);
      why.find("unable to load") != std::string::npos || why.find("Zero Bytes were transmitted") != std::string::npos)
    throw Error("slurmctld rejected the token slurmrestd passed on (" + std::to_string(response.status) + ": " + why +
                    "): it is expired, malformed, or not for user '" + t.user + "'",
                std::nullopt, "get a new one: eval \"$(scontrol token lifespan=3600)\"");
  if (response.status < 200 || response.status > 299 || j.is_discarded()) {
    std::string why = j.is_discarded() ? "" : body_error(j);
    if (why.empty()) why = "HTTP " + std::to_string(response.status);
    throw Error("slurmrestd at " + t.base + " answered " + method + " " + std::string(kApi) + path + " with " + why,
                std::nullopt, "check the URL (the API is " + std::string(kApi) + ") and slurmrestd's log");
  }
  return response;
}

}  // namespace

RestTarget rest_target(const std::string& url) {
  if (!(url.starts_with("http://") || url.starts_with("https://")) || !diag::only_ascii(url, ":/._-[]"))
    throw Error("--rest must be slurmrestd's http(s) URL, found " + diag::quote(url), std::nullopt,
                "write it as http://slurm-login:6820");
  RestTarget t;
  t.base = url;
  while (t.base.size() > 8 && t.base.back() == '/') t.base.pop_back();
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_name) t.user = pw->pw_name;
  if (t.user.empty()) throw Error("cannot tell this user's name (getpwuid failed) for X-SLURM-USER-NAME");
  t.token = env("SLURM_JWT");
  if (t.token.empty()) {
    const std::string scontrol = io::find_on_path("scontrol");
    if (scontrol.empty())
      throw Error("no Slurm token: SLURM_JWT is not set and there is no scontrol to ask for one", std::nullopt,
                  "export SLURM_JWT with a token from the cluster (scontrol token, run there)");
    const io::ProcessResult r = io::run_process({scontrol, "token"});
    const std::size_t at = r.out.find("SLURM_JWT=");
    if (r.exit_code != 0 || at == std::string::npos)
      throw Error("no Slurm token: SLURM_JWT is not set and 'scontrol token' failed" +
                      (r.err.empty() ? std::string() : ": " + r.err.substr(0, r.err.find('\n'))),
                  std::nullopt,
                  "export SLURM_JWT with a token from the cluster (slurm.conf needs AuthAltTypes=auth/jwt)");
    t.token = r.out.substr(at + 10, r.out.find_first_of("\r\n", at) - at - 10);
  }
  if (!diag::only_ascii(t.token, "._-"))
    throw Error("SLURM_JWT is not a token (a JWT is letters, digits, '.', '_' and '-')", std::nullopt,
                "export SLURM_JWT from 'scontrol token'");
  return t;
}

long time_limit_minutes(const std::string& t) {
  if (t.find(':') == std::string::npos) return std::stol(t);
  long days = 0;
  std::string rest = t;
  if (const std::size_t dash = rest.find('-'); dash != std::string::npos) {
    days = std::stol(rest.substr(0, dash));
    rest = rest.substr(dash + 1);
  }
  const long h = std::stol(rest.substr(0, rest.find(':')));
  const long m = std::stol(rest.substr(rest.find(':') + 1, 2));
  const long s = std::stol(rest.substr(rest.rfind(':') + 1));
  return days * 1440 + h * 60 + m + (s > 0 ? 1 : 0);
}

std::map<std::string, std::string> job_environment(const manifest::Manifest& m, const std::string& project_dir,
                                                   const std::string& job_id, std::vector<std::string>& withheld) {
  std::map<std::string, std::string> out;
  out["PATH"] = env("PATH").empty() ? "/usr/local/bin:/usr/bin:/bin" : env("PATH");
  if (!env("HOME").empty()) out["HOME"] = env("HOME");
  out["ENVPIN_PROJECT_DIR"] = project_dir;
  out["ENVPIN_SELF_WARN"] = "1";
  if (!job_id.empty()) out["ENVPIN_JOB_ID"] = job_id;
  std::vector<std::string> names = {"SLURM_CONF",
                                    "DOCKER_HOST",
                                    "CONTAINER_HOST",
                                    "CONTAINERS_CONF",
                                    "CONTAINERS_STORAGE_CONF",
                                    "ENVPIN_ENGINE",
                                    "ENVPIN_IMAGE",
                                    "ENVPIN_CHECKPOINTS",
                                    "ENVPIN_LOGS",
                                    "ENVPIN_BUILD_FLAGS",
                                    "ENVPIN_RUN_FLAGS",
                                    "ENVPIN_NETWORK",
                                    "ENVPIN_RDZV_HOST",
                                    "ENVPIN_RDZV_PORT",
                                    "NCCL_SOCKET_IFNAME",
                                    "NCCL_IB_DISABLE",
                                    "NCCL_DEBUG",
                                    "NCCL_P2P_DISABLE",
                                    "GLOO_SOCKET_IFNAME",
                                    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                                    "TORCH_NCCL_BLOCKING_WAIT",
                                    "TORCH_DISTRIBUTED_DEBUG"};
  if (m.jobs) {
    for (const auto& e : m.jobs->env) names.push_back(e.value);
    if (m.jobs->notify && m.jobs->notify->url_secret) names.push_back(m.jobs->notify->url_secret->value);
  }
  for (const auto& n : names)
    if (const char* v = std::getenv(n.c_str())) out[n] = v;
  for (const auto& s : m.secrets)
    if (std::getenv(s.value.c_str())) {
      out.erase(s.value);
      withheld.push_back(s.value);
    }
  return out;
}

nlohmann::json submit_body(const manifest::Manifest& m, const Submission& s) {
  const manifest::Jobs& j = *m.jobs;
  // The command as the script's "$@", set after `set -u` (before anything reads it).
  std::string set_line = "set --";
  for (const auto& word : s.command) set_line += " " + sync::sh_quote(word);
  std::string script = s.script;
  const std::size_t at = script.find("\nset -u\n");
  if (at == std::string::npos) throw Error("the job script has no 'set -u' line to put the command after");
  script.insert(at + 8, set_line + "\n");

  json job;
  job["name"] = m.name.value;
  job["comment"] = s.job_id.empty() ? "envpin" : "envpin job " + s.job_id;
  job["current_working_directory"] = s.project_dir;
  job["standard_output"] = s.project_dir + "/" + j.logs.value + "/slurm-%j.out";
  if (j.logs.value.starts_with("/")) job["standard_output"] = j.logs.value + "/slurm-%j.out";
  job["open_mode"] = "append";
  job["requeue"] = true;
  // No "signal": Slurm 22.05's REST parser refuses the batch-shell form its own schema documents
  // ("B:10@120", "B:USR1@120": "Invalid SIGNAL specification"; "USR1@120" is taken but signals
  // the job steps, not the batch shell that stops and requeues). The script sends itself the
  // warning instead when ENVPIN_SELF_WARN is set (templates/job.sbatch.mustache).
  if (j.slurm_time) job["time_limit"] = time_limit_minutes(j.slurm_time->value);
  if (j.slurm_partition) job["partition"] = j.slurm_partition->value;
  const bool several = j.nodes.value > 1 || j.launch.value == "srun";
  job["nodes"] = json::array({j.nodes.value, j.nodes.value});
  if (several) job["tasks_per_node"] = 1;
  job["tasks"] = several ? j.nodes.value : 1;
  if (j.gpus.value == "all")
    job["exclusive"] = "true";
  else if (!j.gpus.value.empty())
    job["gpus_per_node"] = "gpu:" + j.gpus.value;
  job["environment"] = s.environment;
  return {{"job", job}, {"script", script}};
}

std::string rest_submit(const RestTarget& t, const nlohmann::json& body) {
  const net::Response r = call(t, "POST", "/job/submit", body.dump());
  const json j = json::parse(r.body, nullptr, false);
  if (!body_error(j).empty() || !j.contains("job_id") || !j["job_id"].is_number_integer())
    throw Error("Slurm did not take the job: " +
                    (body_error(j).empty() ? std::string("no job_id in the answer") : body_error(j)),
                std::nullopt, "look at slurmrestd's and slurmctld's logs");
  return std::to_string(j["job_id"].get<long>());
}

nlohmann::json rest_jobs(const RestTarget& t) {
  const net::Response r = call(t, "GET", "/jobs", "");
  const json j = json::parse(r.body, nullptr, false);
  return j.contains("jobs") && j["jobs"].is_array() ? j["jobs"] : json::array();
}

std::optional<RestJob> rest_job(const nlohmann::json& e, const std::string& project) {
  const auto text = [&e](const char* key) {
    return e.contains(key) && e[key].is_string() ? e[key].get<std::string>() : std::string();
  };
  const auto number = [&e](const char* key, long otherwise) {
    return e.contains(key) && e[key].is_number_integer() ? e[key].get<long>() : otherwise;
  };
  if (!e.is_object() || text("name") != project || number("job_id", -1) < 0) return std::nullopt;
  RestJob r;
  r.slurm_job = number("job_id", 0);
  const std::string comment = text("comment");
  if (comment.starts_with("envpin job "))
    r.job = comment.substr(11);
  else if (comment == "envpin")
    r.job = project + "-slurm-" + std::to_string(r.slurm_job);
  r.state = text("job_state");
  r.reason = text("state_reason");
  r.exit = describe_exit_code(number("exit_code", -1));
  r.nodes = text("nodes");
  r.restarts = number("restart_cnt", 0);
  return r;
}

std::string describe_exit_code(long raw) {
  if (raw < 0) return "-";
  if ((raw & 0x7f) != 0) return "signal " + std::to_string(raw & 0x7f);
  return std::to_string((raw >> 8) & 0xff);
}

}  // namespace envpin::jobs

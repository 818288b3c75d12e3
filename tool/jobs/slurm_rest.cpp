// SPDX-License-Identifier: Apache-2.0
// Facts used here (reference/real-tools-2.md §2, Slurm 22.05.8): slurmrestd answers a missing or
// unaccepted token with 401, and a token slurmctld rejects (bogus, expired, another user) with
// 500 "slurmctld config is unable to load"; `environment` must be a dictionary; exit_code is the
// raw wait status (exit 3 -> 768).
// The later versions, from Slurm's source (SchedMD/slurm, src/plugins/data_parser/v0.0.4X/
// parsers.c at slurm-24-05-8-1, slurm-25-05-8-1 and slurm-25-11-7-1) and the OpenAPI documents its
// testsuite recorded (testsuite/python/data/openapi_specs/openapi_spec_v41..44.json @284c3b95;
// reduced in tests/data/slurmrestd): from v0.0.39 `job.script` carries the script, `environment`
// is a list of "K=V" (required in v0.0.39), `nodes` a string ("2": min = max), `open_mode` and
// `shared` flag lists, `time_limit` a {set, infinite, number} object, GPUs `tres_per_node`
// "gres/gpu:N" (no gpus_per_node key exists); `exclusive` is gone from v0.0.42, `shared: [none]`
// is sbatch --exclusive in every version. A key the server does not know is only a warning, and
// Slurm reports a held job or busy nodes as warnings: only `errors` fail a request. The served
// versions are the /slurm/vX/job/submit keys of GET /openapi/v3's `paths`.
#include "jobs/slurm_rest.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "io/json_input.hpp"
#include "io/process.hpp"
#include "jobs/project.hpp"
#include "net/http.hpp"
#include "sync/remote.hpp"

namespace envpin::jobs {
namespace {

using diag::Error;
using nlohmann::json;

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
      if (e.contains(key) && e[key].is_string() && !e[key].get<std::string>().empty() &&
          e[key].get<std::string>() != out) {  // later versions often give the same words twice
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

// METHOD base + PATH. Throws diag::Error naming the cause for every answer but a 2xx with a JSON
// body (and, when `missing_ok`, a 404, returned as it is).
net::Response request(const RestTarget& t, const std::string& method, const std::string& path, const std::string& body,
                      bool missing_ok = false) {
  net::Request r;
  r.method = method;
  r.url = t.base + path;
  r.headers = headers(t);
  r.body = body;
  net::HttpOptions o;
  o.attempts = method == "GET" ? 3 : 1;  // a submission is never sent twice
  o.max_body = net::kMaxJsonAnswer;
  net::Response response;
  try {
    response = net::fetch(r, o);
  } catch (const Error& e) {
    throw Error("slurmrestd at " + t.base + " is not reachable: " + e.message(), std::nullopt,
                "start it (slurmrestd -a rest_auth/jwt HOST:PORT), or give its URL to --rest");
  }
  if (missing_ok && response.status == 404) return response;
  const json j = io::parse_bounded_json(response.body);
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
    throw Error("slurmrestd at " + t.base + " answered " + method + " " + path + " with " + diag::printable(why),
                std::nullopt, "check the URL and slurmrestd's log");
  }
  return response;
}

net::Response call(const RestTarget& t, const std::string& method, const std::string& path, const std::string& body) {
  return request(t, method, "/slurm/" + api_name(t.api) + path, body);
}

// "v0.0.NN" with NN of one to three digits: NN; else -1.
int api_number(std::string_view name) {
  constexpr std::string_view kPrefix = "v0.0.";
  if (!name.starts_with(kPrefix)) return -1;
  name.remove_prefix(kPrefix.size());
  if (name.empty() || name.size() > 3 || name.find_first_not_of("0123456789") != std::string_view::npos) return -1;
  return std::stoi(std::string(name));
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

std::string api_name(int api) { return "v0.0." + std::to_string(api); }

int choose_api(const json& openapi, const std::string& where) {
  std::vector<int> served;
  if (openapi.is_object() && openapi.contains("paths") && openapi["paths"].is_object())
    for (const auto& [path, item] : openapi["paths"].items()) {
      // "/slurm/v0.0.44/job/submit"
      constexpr std::string_view kHead = "/slurm/", kTail = "/job/submit";
      const std::string_view p = path;
      if (p.size() > kHead.size() + kTail.size() && p.starts_with(kHead) && p.ends_with(kTail))
        if (const int n = api_number(p.substr(kHead.size(), p.size() - kHead.size() - kTail.size())); n >= 0)
          served.push_back(n);
    }
  std::sort(served.begin(), served.end());
  served.erase(std::unique(served.begin(), served.end()), served.end());
  for (auto it = served.rbegin(); it != served.rend(); ++it)
    if (*it >= kOldestApi && *it <= kNewestApi) return *it;
  std::string list;
  for (const int n : served) list += (list.empty() ? "" : ", ") + api_name(n);
  throw Error("slurmrestd at " + where +
                  (served.empty() ? std::string(" lists no job submission API in its OpenAPI document")
                                  : " serves the REST API " + list + " only") +
                  "; envpin speaks " + api_name(kOldestApi) + " to " + api_name(kNewestApi),
              std::nullopt,
              served.empty() || served.back() < kOldestApi
                  ? "start slurmrestd with a plugin envpin speaks (-s openapi/v0.0.38 on Slurm 22.05, -d " +
                        api_name(kNewestApi) + " on 25.11), or name one in ENVPIN_SLURM_REST_API"
                  : "use an envpin that speaks " + api_name(served.back()) + ", or start slurmrestd with -d " +
                        api_name(kNewestApi) + " as well");
}

void discover_api(RestTarget& t) {
  if (const std::string named = env("ENVPIN_SLURM_REST_API"); !named.empty()) {
    const int n = api_number(named);
    if (n < kOldestApi || n > kNewestApi)
      throw Error("ENVPIN_SLURM_REST_API is " + diag::quote(named) + ", not a REST API version envpin speaks",
                  std::nullopt,
                  "name one of " + api_name(kOldestApi) + " to " + api_name(kNewestApi) +
                      ", or unset it to use the newest the server serves");
    t.api = n;
    return;
  }
  // Every slurmrestd since 20.11 serves its OpenAPI document here (/openapi on the oldest).
  net::Response r = request(t, "GET", "/openapi/v3", "", true);
  if (r.status == 404) r = request(t, "GET", "/openapi", "");
  t.api = choose_api(io::parse_bounded_json(r.body), t.base);
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

nlohmann::json submit_body(const manifest::Manifest& m, const Submission& s, int api) {
  const manifest::Jobs& j = *m.jobs;
  // The command as the script's "$@", set after `set -u` (before anything reads it).
  std::string set_line = "set --";
  for (const auto& word : s.command) set_line += " " + sync::sh_quote(word);
  std::string script = s.script;
  const std::size_t at = script.find("\nset -u\n");
  if (at == std::string::npos) throw Error("the job script has no 'set -u' line to put the command after");
  script.insert(at + 8, set_line + "\n");
  const bool v38 = api <= 38;

  json job;
  job["name"] = m.name.value;
  job["comment"] = s.job_id.empty() ? "envpin" : "envpin job " + s.job_id;
  job["current_working_directory"] = s.project_dir;
  job["standard_output"] = s.project_dir + "/" + j.logs.value + "/slurm-%j.out";
  if (j.logs.value.starts_with("/")) job["standard_output"] = j.logs.value + "/slurm-%j.out";
  job["open_mode"] = v38 ? json("append") : json::array({"APPEND"});
  job["requeue"] = true;
  // No "signal": Slurm 22.05's REST parser refuses the batch-shell form its own schema documents
  // ("B:10@120", "B:USR1@120": "Invalid SIGNAL specification"; "USR1@120" is taken but signals
  // the job steps, not the batch shell that stops and requeues). The script sends itself the
  // warning instead when ENVPIN_SELF_WARN is set (templates/job.sbatch.mustache).
  if (j.slurm_time) {
    const long minutes = time_limit_minutes(j.slurm_time->value);
    job["time_limit"] = v38 ? json(minutes) : json{{"set", true}, {"infinite", false}, {"number", minutes}};
  }
  if (j.slurm_partition) job["partition"] = j.slurm_partition->value;
  const bool several = j.nodes.value > 1 || j.launch.value == "srun";
  job["nodes"] = v38 ? json::array({j.nodes.value, j.nodes.value}) : json(std::to_string(j.nodes.value));
  if (several) job["tasks_per_node"] = 1;
  job["tasks"] = several ? j.nodes.value : 1;
  if (j.gpus.value == "all") {
    if (v38)
      job["exclusive"] = "true";
    else
      job["shared"] = json::array({"none"});  // sbatch --exclusive; `exclusive` is gone from v0.0.42
  } else if (!j.gpus.value.empty()) {
    if (v38)
      job["gpus_per_node"] = "gpu:" + j.gpus.value;
    else
      job["tres_per_node"] = "gres/gpu:" + j.gpus.value;
  }
  if (v38) {
    job["environment"] = s.environment;
    return {{"job", job}, {"script", script}};
  }
  json environment = json::array();
  for (const auto& [name, value] : s.environment) environment.push_back(name + "=" + value);
  job["environment"] = environment;
  job["script"] = script;
  return {{"job", job}};
}

std::string rest_submit(const RestTarget& t, const nlohmann::json& body) {
  const net::Response r = call(t, "POST", "/job/submit", body.dump());
  const json j = io::parse_bounded_json(r.body);
  if (!body_error(j).empty() || !j.is_object() || !j.contains("job_id") || !j["job_id"].is_number_integer())
    throw Error("Slurm did not take the job: " +
                    (body_error(j).empty() ? std::string("no job_id in the answer") : diag::printable(body_error(j))),
                std::nullopt, "look at slurmrestd's and slurmctld's logs");
  return std::to_string(j["job_id"].get<long>());
}

nlohmann::json rest_jobs(const RestTarget& t) {
  const net::Response r = call(t, "GET", "/jobs", "");
  const json j = io::parse_bounded_json(r.body);
  return j.contains("jobs") && j["jobs"].is_array() ? j["jobs"] : json::array();
}

std::optional<RestJob> rest_job(const nlohmann::json& e, const std::string& project) {
  // The server's words reach a terminal: printable (escapes shown, not sent) and at most 200 bytes.
  const auto text = [&e](const char* key) {
    if (!e.contains(key) || !e[key].is_string()) return std::string();
    std::string v = diag::printable(e[key].get<std::string>());
    if (v.size() > 200) {
      std::size_t cut = 200;
      while (cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
      v = v.substr(0, cut) + "...";
    }
    return v;
  };
  const auto number = [&e](const char* key, long otherwise) {
    return e.contains(key) && e[key].is_number_integer() ? e[key].get<long>() : otherwise;
  };
  // A number as v0.0.39 and later give most: {set, infinite, number}, or bare (+complex).
  const auto no_val = [](const json& v) -> std::optional<long> {
    if (v.is_number_integer()) return v.get<long>();
    if (v.is_object() && v.contains("set") && v["set"] == true && v.contains("number") &&
        v["number"].is_number_integer())
      return v["number"].get<long>();
    return std::nullopt;
  };
  if (!e.is_object() || text("name") != project || number("job_id", -1) < 0) return std::nullopt;
  RestJob r;
  r.slurm_job = number("job_id", 0);
  const std::string comment = text("comment");
  if (comment.starts_with("envpin job ")) {
    r.job = comment.substr(11);
    try {
      check_job_id(r.job);  // what submit_body wrote; anything else is not an envpin job id
    } catch (const Error&) {
      r.job.clear();
    }
  } else if (comment == "envpin")
    r.job = project + "-slurm-" + std::to_string(r.slurm_job);
  r.state = text("job_state");
  if (e.contains("job_state") && e["job_state"].is_array())  // v0.0.40+: the state and its flags
    for (const json& word : e["job_state"])
      if (word.is_string() && word.get<std::string>().size() <= 32 && r.state.size() <= 128)
        r.state += (r.state.empty() ? "" : ",") + diag::printable(word.get<std::string>());
  r.reason = text("state_reason");
  r.exit = "-";
  if (e.contains("exit_code")) {
    const json& x = e["exit_code"];
    if (x.is_number_integer()) {
      r.exit = describe_exit_code(x.get<long>());  // v0.0.38: the raw wait status
    } else if (x.is_object() && x.contains("number")) {
      if (const auto raw = no_val(x)) r.exit = describe_exit_code(*raw);  // v0.0.39: the same, in an object
    } else if (x.is_object()) {                                           // v0.0.40+: {status, return_code, signal}
      const long signal = x.contains("signal") && x["signal"].is_object() && x["signal"].contains("id")
                              ? no_val(x["signal"]["id"]).value_or(-1)
                              : -1;
      const long code = x.contains("return_code") ? no_val(x["return_code"]).value_or(-1) : -1;
      if (signal > 0 && signal < 128)
        r.exit = "signal " + std::to_string(signal);
      else if (code >= 0 && code < 256)
        r.exit = std::to_string(code);
    }
  }
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

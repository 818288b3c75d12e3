// SPDX-License-Identifier: Apache-2.0
// The jobs section of envpin.yaml: checkpoints, logs, restarts, GPUs, Slurm, the distributed
// launch (launch, nodes, gpus_per_node), notifications and the GPU-idle guard. Every value that
// reaches .envpin/run.sh or .envpin/job.sbatch is checked here to be a plain word, number or URL.
#include <algorithm>
#include <optional>
#include <sstream>

#include "diag/text.hpp"
#include "manifest/keys.hpp"
#include "manifest/load.hpp"
#include "manifest/paths.hpp"
#include "manifest/requirement.hpp"

namespace envpin::manifest::detail {
namespace {

using diag::quote;

constexpr std::string_view kLaunchValues[] = {"none", "torchrun", "srun"};
constexpr std::string_view kNotifyEvents[] = {"started",  "checkpoint", "restarted", "failed",
                                              "finished", "stopped",    "idle"};
constexpr std::string_view kIdleActions[] = {"stop", "notify"};

// jobs.checkpoints.pattern: which files of a job's checkpoint directory are checkpoints, as
// globs on the names at its top (*, ? and [...]): one, or a list. Only letters, digits and
// "._-*?[]!" are allowed, so the shell's `case` and fnmatch(3) read them alike and nothing else
// reads them at all.
std::vector<Located<std::string>> checkpoint_patterns(const Reader& r, const YAML::Node& v) {
  std::vector<Located<std::string>> out;
  if (v.IsSequence())
    out = r.string_list(v, "jobs.checkpoints.pattern");
  else
    out.push_back(r.string(v, "jobs.checkpoints.pattern"));
  if (out.empty()) r.fail(v, "jobs.checkpoints.pattern is empty", "name the checkpoint files, e.g. pattern: '*.pt'");
  for (const auto& g : out)
    if (g.value.empty() || g.value.size() > 128 || !diag::only_ascii(g.value, "._-*?[]!") || g.value == "." ||
        g.value == "..")
      throw Error("jobs.checkpoints.pattern " + quote(g.value) + " is not a glob on file names", g.where,
                  "use letters, digits, '.', '_', '-' and the wildcards * ? [...], e.g. 'ckpt-*.pt' (no '/')");
  return out;
}

Notify read_notify(const Reader& r, const YAML::Node& node) {
  Notify n;
  n.where = r.at(node);
  for (const auto& [key, k, v] : r.entries(node, "jobs.notify", keys_in("jobs.notify"))) {
    if (key == "url") {
      n.url = r.string(v, "jobs.notify.url");
      if (!is_index_url(n.url->value))
        r.fail(v, "jobs.notify.url must be an http(s) URL, found " + quote(n.url->value),
               "write it as 'https://hooks.example.com/envpin' (percent-encode other characters)");
      // The URL is written into .envpin/run.sh, which is committed: no credentials in it.
      if (!index_url_credentials(n.url->value).empty())
        r.fail(v, "jobs.notify.url holds credentials (the part before '@'): .envpin/run.sh would carry them",
               "name the variable that holds the URL instead: url_secret: NOTIFY_URL");
    } else if (key == "url_secret") {
      n.url_secret = r.string(v, "jobs.notify.url_secret");
      if (!is_env_name(n.url_secret->value))
        r.fail(v, quote(n.url_secret->value) + " is not a variable name", "use letters, digits and '_'");
    } else if (key == "on") {
      for (const YAML::Node& e : r.list(v, "jobs.notify.on")) {
        const Located<std::string> event = r.choice(e, "jobs.notify.on event", kNotifyEvents);
        if (std::any_of(n.on.begin(), n.on.end(), [&](const auto& o) { return o.value == event.value; }))
          r.fail(e, quote(event.value) + " is listed twice in jobs.notify.on");
        n.on.push_back(event);
      }
    } else if (key == "timeout") {
      n.timeout = r.integer(v, "jobs.notify.timeout", 1, 300);
    }
  }
  if (n.url && n.url_secret)
    throw Error("jobs.notify has both url and url_secret", n.url_secret->where, "keep one of them");
  if (!n.url && !n.url_secret)
    r.fail(node, "jobs.notify needs url or url_secret",
           "add 'url: https://hooks.example.com/envpin', or 'url_secret: NOTIFY_URL' to read it from the environment");
  return n;
}

// jobs.data: project-relative paths (letters, digits and ._-+@/, as every manifest path), kept
// inside the project, normalised ('a/./b/' is 'a/b'), each once.
std::vector<Located<std::string>> data_list(const Reader& r, const YAML::Node& v) {
  std::vector<Located<std::string>> out;
  for (Located<std::string> d : r.string_list(v, "jobs.data")) {
    check_path_chars(d, "jobs.data");
    const fs::path path(d.value);
    if (path.is_absolute())
      throw Error("jobs.data " + quote(d.value) + " must be relative to the project", d.where,
                  "name it as the project holds it, e.g. 'data/train' (the job sees it under the workdir)");
    std::string norm = path.lexically_normal().generic_string();
    while (norm.size() > 1 && norm.back() == '/') norm.pop_back();
    if (norm.empty() || norm == "." || norm == ".." || norm.starts_with("../"))
      throw Error("jobs.data " + quote(d.value) + " is not inside the project", d.where,
                  "name a directory or file under the project, e.g. 'data/train'");
    d.value = norm;
    check_path_length(d, "jobs.data", {});
    if (std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.value == norm; }))
      throw Error("jobs.data lists " + quote(norm) + " twice", d.where, "keep one of them");
    out.push_back(std::move(d));
  }
  return out;
}

IdleGuard read_idle(const Reader& r, const YAML::Node& node) {
  IdleGuard g;
  g.where = r.at(node);
  for (const auto& [key, k, v] : r.entries(node, "jobs.idle", keys_in("jobs.idle"))) {
    if (key == "gpu_util_below")
      g.below = r.integer(v, "jobs.idle.gpu_util_below", 1, 100);
    else if (key == "for")
      g.window = duration(r, v, "jobs.idle.for", 1, 7 * 24 * 3600);
    else if (key == "every")
      g.every = duration(r, v, "jobs.idle.every", 1, 3600);
    else
      g.action = r.choice(v, "jobs.idle.action", kIdleActions);
  }
  if (g.window.value < g.every.value)
    throw Error("jobs.idle.for (" + std::to_string(g.window.value) +
                    " s) is shorter than the sampling interval jobs.idle.every (" + std::to_string(g.every.value) +
                    " s): the guard could never see the window",
                g.window.where.line ? g.window.where : g.where,
                "make jobs.idle.for at least jobs.idle.every (e.g. for: 10m, every: 30s)");
  return g;
}

// A DNS-1123 label (a Job's, a Service's or a namespace's name): lower-case letters, digits and
// '-', starting and ending with a letter or digit, at most `max` characters.
bool dns_label(std::string_view s, std::size_t max) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || is_digit(c); };
  return !s.empty() && s.size() <= max && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

// A DNS-1123 subdomain (a claim's or a Secret's name): labels joined by '.', at most 253.
bool dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (std::size_t at = 0;;) {
    const std::size_t dot = s.find('.', at);
    if (!dns_label(s.substr(at, dot - at), 63)) return false;
    if (dot == s.npos) return true;
    at = dot + 1;
  }
}

// The Job's default name: the project's, lower-cased, with '_' and '.' as '-'.
std::string kubernetes_name(std::string name) {
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '_' || c == '.') c = '-';
  }
  return name;
}

Kubernetes read_kubernetes(const Reader& r, const YAML::Node& node, const Manifest& m, bool pushed) {
  Kubernetes k;
  k.where = r.at(node);
  bool has_image = false, has_claim = false, has_name = false;
  for (const auto& [key, kk, v] : r.entries(node, "jobs.kubernetes", keys_in("jobs.kubernetes"))) {
    if (key == "image") {
      // REPOSITORY@sha256:HEX: a tag moves, and the pods of one Job could run different images.
      k.image = r.string(v, "jobs.kubernetes.image");
      has_image = true;
      const std::string& s = k.image.value;
      const std::size_t at = s.find("@sha256:");
      const std::string repo = s.substr(0, at);
      const std::string hex = at == s.npos ? "" : s.substr(at + 8);
      const bool repo_ok = !repo.empty() && only(repo, "._/:-") && repo.find("//") == repo.npos &&
                           only(repo.substr(0, 1), "") && only(repo.substr(repo.size() - 1), "");
      const bool hex_ok = hex.size() == 64 && std::all_of(hex.begin(), hex.end(),
                                                          [](char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); });
      if (!repo_ok || !hex_ok)
        r.fail(v, "jobs.kubernetes.image must name the job image by digest, found " + quote(s),
               "push the image built from the Dockerfile (with the project in it) and write what the registry "
               "answers: 'registry.example.com/team/train@sha256:<64 hex>' (docker inspect --format "
               "'{{index .RepoDigests 0}}' IMAGE prints it)");
    } else if (key == "command") {
      k.command = r.word_list(v, "jobs.kubernetes.command");
      if (k.command.empty())
        r.fail(v, "jobs.kubernetes.command is empty", "name the program and its arguments: [python, train.py]");
      // The reader refused empty words and control characters already.
      for (const auto& w : k.command)
        if (w.value.size() > 4096)
          throw Error(
              "jobs.kubernetes.command word " + quote(w.value.substr(0, 64) + "...") + " is longer than 4096 bytes",
              w.where, "move long values into a file the command reads");
    } else if (key == "name") {
      k.name = r.string(v, "jobs.kubernetes.name");
      has_name = true;
    } else if (key == "namespace") {
      k.ns = r.string(v, "jobs.kubernetes.namespace");
      if (!dns_label(k.ns->value, 63))
        r.fail(v, "jobs.kubernetes.namespace " + quote(k.ns->value) + " is not a namespace name",
               "use lower-case letters, digits and '-' (at most 63), as kubectl get namespaces prints them");
    } else if (key == "claim") {
      k.claim = r.string(v, "jobs.kubernetes.claim");
      has_claim = true;
      if (!dns_subdomain(k.claim.value))
        r.fail(v, "jobs.kubernetes.claim " + quote(k.claim.value) + " is not a PersistentVolumeClaim name",
               "use lower-case letters, digits, '-' and '.', as kubectl get pvc prints them");
    } else {
      k.secret = r.string(v, "jobs.kubernetes.secret");
      if (!dns_subdomain(k.secret->value))
        r.fail(v, "jobs.kubernetes.secret " + quote(k.secret->value) + " is not a Secret name",
               "use lower-case letters, digits, '-' and '.', as kubectl get secrets prints them");
    }
  }
  if (!has_image && !pushed)
    r.fail(node, "jobs.kubernetes needs image: the job image by digest",
           "set jobs.push to a registry repository (envpin push sends the image there and generate writes its "
           "digest), or add 'image: registry.example.com/team/train@sha256:<64 hex>'");
  if (k.command.empty())
    r.fail(node, "jobs.kubernetes needs command: a Job runs no caller's command", "add 'command: [python, train.py]'");
  if (!has_claim)
    r.fail(node, "jobs.kubernetes needs claim: the PersistentVolumeClaim its checkpoints live on",
           "add 'claim: train-checkpoints' (a claim every pod of the Job can mount; ReadWriteMany for several nodes)");
  if (!has_name) k.name = {kubernetes_name(m.name.value), m.name.where};
  return k;
}

// What a Job cannot express, refused before anything is written.
void check_kubernetes(const Jobs& j, const Manifest& m) {
  const Kubernetes& k = *j.kubernetes;
  // An Indexed Job's pods are named <job>-<index>, their host names too (at most 63).
  const std::size_t index_digits = j.nodes.value > 1 ? std::to_string(j.nodes.value - 1).size() + 1 : 0;
  if (!dns_label(k.name.value, 63 - index_digits)) {
    const bool derived = k.name.where.line == m.name.where.line && k.name.where.column == m.name.where.column;
    throw Error((derived ? "the project's name " + quote(m.name.value) + " gives the Kubernetes Job name "
                         : "jobs.kubernetes.name ") +
                    quote(k.name.value) + ", which is not a DNS-1123 label of at most " +
                    std::to_string(63 - index_digits) + " characters",
                k.name.where,
                "set jobs.kubernetes.name to lower-case letters, digits and '-', starting and ending with a letter "
                "or digit, e.g. 'train'");
  }
  if (j.gpus.value == "all")
    throw Error("jobs.gpus is 'all'" + std::string(j.gpus.where.line ? "" : " (the default with a cuda section)") +
                    ", but a Kubernetes pod asks for a number of GPUs",
                j.gpus.where.line ? j.gpus.where : k.where,
                "set jobs.gpus_per_node to the GPUs each pod gets, e.g. 8 (or jobs.gpus: none for a CPU job)");
  std::string names;
  for (const auto& s : m.secrets) names += (names.empty() ? "" : ", ") + s.value;
  for (const auto& e : j.env) names += (names.empty() ? "" : ", ") + e.value;
  if (!names.empty() && !k.secret)
    throw Error("the job is passed " + names +
                    " by name (secrets, jobs.env), and a Kubernetes pod can take them only from a Secret",
                k.where,
                "add 'secret: NAME' to jobs.kubernetes: a Secret with one key per variable (kubectl create secret "
                "generic NAME --from-literal=VAR=...)");
}

}  // namespace

// A duration: seconds as a number, or a number with s, m or h ("30s", "10m", "1h").
Located<int> duration(const Reader& r, const YAML::Node& n, std::string_view key, int lo, int hi) {
  const Located<std::string> s = r.string(n, key);
  std::string digits = s.value;
  int unit = 1;
  if (!digits.empty() && (digits.back() == 's' || digits.back() == 'm' || digits.back() == 'h')) {
    unit = digits.back() == 'h' ? 3600 : digits.back() == 'm' ? 60 : 1;
    digits.pop_back();
  }
  long value = -1;
  if (!digits.empty() && digits.size() <= 6 && std::all_of(digits.begin(), digits.end(), is_digit))
    value = std::stol(digits) * unit;
  if (value < lo || value > hi)
    r.fail(n,
           "'" + std::string(key) + "' must be a duration from " + std::to_string(lo) + " s to " +
               std::to_string(hi / 3600) + " h, found " + quote(s.value),
           "write it as seconds or with a unit: 30s, 10m, 1h");
  return {static_cast<int>(value), s.where};
}

void read_jobs(const Reader& r, const YAML::Node& node, Manifest& m) {
  // A word the shell reads as itself, whatever the quoting around it.
  const auto safe_word = [](const std::string& w) { return !w.empty() && only(w, "_@%+=:,./-"); };
  // Slurm's --time: minutes, or [D-]HH:MM:SS.
  const auto slurm_time = [](std::string_view t) {
    const auto digits = [](std::string_view d, std::size_t lo, std::size_t hi) {
      return d.size() >= lo && d.size() <= hi && std::all_of(d.begin(), d.end(), is_digit);
    };
    if (digits(t, 1, 9)) return true;
    if (const std::size_t dash = t.find('-'); dash != t.npos) {
      if (!digits(t.substr(0, dash), 1, 4)) return false;
      t.remove_prefix(dash + 1);
    }
    return t.size() >= 7 && t.size() <= 8 && t[t.size() - 3] == ':' && t[t.size() - 6] == ':' &&
           digits(t.substr(0, t.size() - 6), 1, 2) && digits(t.substr(t.size() - 5, 2), 2, 2) &&
           digits(t.substr(t.size() - 2), 2, 2);
  };
  Jobs j;
  std::optional<YAML::Node> kubernetes_node;  // a default Node is a defined null
  for (const auto& [key, k, v] : r.entries(node, "jobs", keys_in("jobs"))) {
    if (key == "checkpoints") {
      if (v.IsMap()) {
        for (const auto& [ckey, ck, cv] : r.entries(v, "jobs.checkpoints", keys_in("jobs.checkpoints")))
          if (ckey == "path")
            j.checkpoints = container_path(r, cv, "jobs.checkpoints.path");
          else if (ckey == "host")
            j.checkpoints_host = host_dir(r, cv, "jobs.checkpoints.host", "checkpoints");
          else if (ckey == "keep")
            j.checkpoints_keep = r.integer(cv, "jobs.checkpoints.keep", 1, 1000);
          else
            j.checkpoints_pattern = checkpoint_patterns(r, cv);
      } else {
        j.checkpoints = container_path(r, v, "jobs.checkpoints");
      }
    } else if (key == "logs") {
      j.logs = host_dir(r, v, "jobs.logs", "logs");
    } else if (key == "restart") {
      for (const auto& [rkey, rk, rv] : r.entries(v, "jobs.restart", keys_in("jobs.restart")))
        if (rkey == "max")
          j.max_restarts = r.integer(rv, "jobs.restart.max", 0, 100);
        else
          j.backoff = r.integer(rv, "jobs.restart.backoff", 0, 3600);
    } else if (key == "resume") {
      // A list of words, or one string split at spaces ("--resume auto").
      if (v.IsSequence()) {
        j.resume = r.word_list(v, "jobs.resume");
      } else {
        const Located<std::string> s = r.string(v, "jobs.resume");
        std::istringstream words(s.value);
        for (std::string w; words >> w;) j.resume.push_back({w, s.where});
      }
      // {checkpoint} (once a word) stands for the newest complete checkpoint's path in the container.
      for (const auto& w : j.resume) {
        const std::size_t at = w.value.find(kCheckpointWord);
        std::string rest = w.value;
        if (at != std::string::npos) rest.erase(at, kCheckpointWord.size());
        if (rest.find(kCheckpointWord) != std::string::npos)
          throw Error("jobs.resume word " + quote(w.value) + " names {checkpoint} more than once", w.where,
                      "write {checkpoint} at most once a word, e.g. '--resume={checkpoint}'");
        if (!(rest.empty() && at != std::string::npos) && !safe_word(rest))
          throw Error("jobs.resume word " + quote(w.value) + " has characters a shell would read", w.where,
                      "use plain words such as '--resume auto', and {checkpoint} for the newest checkpoint's path");
      }
    } else if (key == "env") {
      j.env = r.string_list(v, "jobs.env");
      for (const auto& e : j.env)
        if (!is_env_name(e.value))
          throw Error(quote(e.value) + " is not a variable name", e.where, "use letters, digits and '_'");
    } else if (key == "gpus") {
      j.gpus = r.string(v, "jobs.gpus");
      const std::string& g = j.gpus.value;
      const bool count = (g.size() == 1 || g.size() == 2) && g[0] != '0' && std::all_of(g.begin(), g.end(), is_digit);
      if (j.gpus.value == "none" || j.gpus.value == "0")
        j.gpus.value.clear();
      else if (j.gpus.value != "all" && !count)
        r.fail(v, "jobs.gpus must be 'all', a number of GPUs or 'none', found " + quote(j.gpus.value),
               "write 'all', a count such as 2, or 'none'");
    } else if (key == "data") {
      j.data = data_list(r, v);
    } else if (key == "push") {
      j.push = r.string(v, "jobs.push");
      if (!manifest::is_push_reference(j.push->value))
        r.fail(v, "jobs.push must be a registry repository, REGISTRY/REPOSITORY[:TAG], found " + quote(j.push->value),
               j.push->value.find('@') != std::string::npos
                   ? "leave the digest out: the registry answers it when envpin push sends the image"
                   : "name the registry and a lower-case repository, e.g. 'registry.example.com/team/train'");
    } else if (key == "stop_timeout") {
      j.stop_timeout = r.integer(v, "jobs.stop_timeout", 1, 3600);
    } else if (key == "launch") {
      j.launch = r.choice(v, "jobs.launch", kLaunchValues);
    } else if (key == "nodes") {
      j.nodes = r.integer(v, "jobs.nodes", 1, 4096);
    } else if (key == "gpus_per_node") {
      j.gpus_per_node = r.integer(v, "jobs.gpus_per_node", 1, 64);
    } else if (key == "notify") {
      j.notify = read_notify(r, v);
    } else if (key == "idle") {
      j.idle = read_idle(r, v);
    } else if (key == "kubernetes") {
      kubernetes_node = v;
    } else if (key == "slurm") {
      for (const auto& [skey, sk, sv] : r.entries(v, "jobs.slurm", keys_in("jobs.slurm"))) {
        if (skey == "time") {
          j.slurm_time = r.string(sv, "jobs.slurm.time");
          if (!slurm_time(j.slurm_time->value))
            r.fail(sv, "jobs.slurm.time must be Slurm's [D-]HH:MM:SS or minutes, found " + quote(j.slurm_time->value),
                   "write it as '04:00:00' or '1-00:00:00'");
        } else if (skey == "warn") {
          j.slurm_warn = r.integer(sv, "jobs.slurm.warn", 1, 65535);
        } else if (skey == "partition") {
          j.slurm_partition = r.string(sv, "jobs.slurm.partition");
          if (!safe_word(j.slurm_partition->value) || j.slurm_partition->value.find(',') != std::string::npos)
            r.fail(sv, "invalid partition name " + quote(j.slurm_partition->value),
                   "write the partition's name as sinfo prints it");
        } else {
          j.slurm_checkpoints = r.string(sv, "jobs.slurm.checkpoints");
          check_path_chars(*j.slurm_checkpoints, "jobs.slurm.checkpoints");
          if (!fs::path(j.slurm_checkpoints->value).is_absolute())
            r.fail(sv, "jobs.slurm.checkpoints must be an absolute path on the cluster's shared storage",
                   "write it as '/shared/checkpoints/my-project'");
          j.slurm_checkpoints->value = fs::path(j.slurm_checkpoints->value).lexically_normal().generic_string();
          while (j.slurm_checkpoints->value.size() > 1 && j.slurm_checkpoints->value.back() == '/')
            j.slurm_checkpoints->value.pop_back();
          if (j.slurm_checkpoints->value == "/")
            r.fail(sv, "jobs.slurm.checkpoints must not be '/'", "write it as '/shared/checkpoints/my-project'");
          check_path_length(*j.slurm_checkpoints, "jobs.slurm.checkpoints", {});
        }
      }
    }
  }
  if (j.gpus_per_node) {
    const std::string per_node = std::to_string(j.gpus_per_node->value);
    if (j.gpus.where.line == 0)
      j.gpus = {per_node, j.gpus_per_node->where};
    else if (j.gpus.value != per_node)
      throw Error("jobs.gpus_per_node is " + per_node + " but jobs.gpus (line " + std::to_string(j.gpus.where.line) +
                      ") is " + quote(j.gpus.value.empty() ? "none" : j.gpus.value),
                  j.gpus_per_node->where, "keep one of them: jobs.gpus is the GPUs of each node");
  }
  if (j.gpus.where.line == 0 && m.cuda) j.gpus.value = "all";
  if (j.nodes.value > 1 && j.launch.value == "none")
    throw Error(
        "jobs.nodes is " + std::to_string(j.nodes.value) +
            " but jobs.launch is 'none': the command would run on the first node only, the other nodes idle",
        j.nodes.where,
        "set jobs.launch: torchrun (one torchrun per node, one process per GPU), or srun (your command once per "
        "node, reading ENVPIN_NODE_RANK)");
  if (j.idle && j.gpus.value.empty())
    throw Error("jobs.idle watches the job's GPUs, but the job has none (jobs.gpus)", j.idle->where,
                "set jobs.gpus (or a cuda section), or remove jobs.idle");
  if (kubernetes_node) {
    j.kubernetes = read_kubernetes(r, *kubernetes_node, m, j.push.has_value());
    check_kubernetes(j, m);
  }
  j.where = r.at(node);
  m.jobs = std::move(j);
}

}  // namespace envpin::manifest::detail

namespace envpin::manifest {

using detail::only;
using diag::is_digit;

// jobs.push: REGISTRY/REPOSITORY[:TAG] in distribution's reference grammar, the registry named
// (a first component with '.' or ':', or localhost) and no digest: what `docker push` takes, and
// nothing a shell or YAML could read as more than one word.
bool is_push_reference(const std::string& s) {
  if (s.empty() || s.size() > 255 || s.find('@') != s.npos) return false;
  const std::size_t slash = s.find('/');
  if (slash == s.npos) return false;
  const std::string host = s.substr(0, slash);
  const bool named = host.find_first_of(".:") != host.npos || host == "localhost";
  const auto host_char = [](char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!named || !host_char(host.front()) || !only(host, ".:-")) return false;
  std::string rest = s.substr(slash + 1);
  if (const std::size_t colon = rest.rfind(':'); colon != rest.npos) {
    const std::string tag = rest.substr(colon + 1);
    if (tag.empty() || tag.size() > 128 || tag[0] == '.' || tag[0] == '-' || !only(tag, "_.-")) return false;
    rest.resize(colon);
  }
  // path components: [a-z0-9]+ joined by '.', '_', '__' or '-'s, separated by '/'
  std::istringstream parts(rest);
  std::string part;
  std::size_t count = 0;
  while (std::getline(parts, part, '/')) {
    ++count;
    const auto lower = [](char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); };
    if (part.empty() || !lower(part.front()) || !lower(part.back())) return false;
    for (std::size_t i = 0; i < part.size(); ++i)
      if (!lower(part[i]) && part[i] != '.' && part[i] != '_' && part[i] != '-') return false;
    if (part.find("..") != part.npos || part.find("___") != part.npos) return false;
  }
  return count > 0 && rest.back() != '/';
}

}  // namespace envpin::manifest

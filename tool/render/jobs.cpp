// SPDX-License-Identifier: Apache-2.0
// .envpin/run.sh (one job in the pinned image, with checkpoints, logs and restarts),
// .envpin/job.sbatch (the same job under Slurm) and .envpin/envpin_ckpt.py (atomic, verified
// checkpoints for the job's Python), for a manifest with a jobs section.
#include <algorithm>
#include <cctype>
#include <string>

#include "jobs/checkpoints.hpp"
#include "jobs/slurm_rest.hpp"
#include "pin/sha256.hpp"
#include "render/code.hpp"
#include "render/render.hpp"
#include "render/templates.hpp"

namespace envpin::render {
namespace {

std::string join_words(const std::vector<manifest::Located<std::string>>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w.value;
  return out;
}

}  // namespace

std::string checkpoint_globs(const manifest::Jobs& j) {
  std::string globs;
  for (const auto& g : j.checkpoints_pattern)
    globs += (globs.empty() ? "" : "\n") + Code::word(g.value, "._-*?[]!").text();
  return globs;
}

std::string not_checkpoint_globs() {
  std::string skipped = "*tfevents*";
  for (const std::string_view ext : jobs::kNotCheckpointSuffixes) skipped += "\n*" + Code::word(ext, ".").text();
  return skipped;
}

std::string job_image(const manifest::Manifest& m, const Artifact& dockerfile, const std::vector<Copied>& copied) {
  // Named after what goes into the image: the Dockerfile's bytes and every file it copies, each
  // framed by its length so no two inputs give the same stream. Any change is a new tag, and the
  // engine's layer cache keeps the build of an edit short.
  std::string stream;
  const auto add = [&stream](std::string_view part) {
    stream += std::to_string(part.size());
    stream += ':';
    stream += part;
  };
  add(dockerfile.bytes);
  for (const Copied& c : copied) {
    add(c.path);
    add(c.bytes);
  }
  return "envpin/" + m.name.value + ":" + pin::sha256_hex(stream).substr(0, 16);
}

Code sbatch_directives(const manifest::Manifest& m, bool warn_signal) {
  const manifest::Jobs& j = *m.jobs;
  constexpr std::string_view kPathChars = "._-+@/";
  const bool all = j.gpus.value == "all";
  // The #SBATCH lines, one block: Slurm reads directives only before the first command.
  std::vector<Code> lines = {
      Code::literal("#SBATCH --job-name=") + Code::word(m.name.value, "._-"),
      Code::literal("#SBATCH --output=") + Code::word(j.logs.value, kPathChars) + Code::literal("/slurm-%j.out"),
      Code::literal("#SBATCH --open-mode=append"), Code::literal("#SBATCH --requeue")};
  if (warn_signal) lines.push_back(Code::literal("#SBATCH --signal=B:USR1@") + Code::number(j.slurm_warn.value));
  if (j.slurm_time) lines.push_back(Code::literal("#SBATCH --time=") + Code::word(j.slurm_time->value, ":-"));
  if (j.slurm_partition)
    lines.push_back(Code::literal("#SBATCH --partition=") + Code::word(j.slurm_partition->value, "_@%+=:./-"));
  if (j.nodes.value > 1 || j.launch.value == "srun") {
    lines.push_back(Code::literal("#SBATCH --nodes=") + Code::number(j.nodes.value));
    lines.push_back(Code::literal("#SBATCH --ntasks-per-node=1"));
  }
  if (all)
    lines.push_back(Code::literal("#SBATCH --exclusive"));
  else if (!j.gpus.value.empty() && j.nodes.value > 1)
    lines.push_back(Code::literal("#SBATCH --gpus-per-node=") + Code::word(j.gpus.value, ""));
  else if (!j.gpus.value.empty())
    lines.push_back(Code::literal("#SBATCH --gres=gpu:") + Code::word(j.gpus.value, ""));
  return join(lines, Code::literal("\n"));
}

std::vector<Artifact> jobs(const manifest::Manifest& m, const std::string& image) {
  if (!m.jobs) return {};
  const manifest::Jobs& j = *m.jobs;
  Fields d;
  d.text("manifest_name", manifest_name(m));
  d.text("name", m.name.value);
  d.code("name_sh", Code::sh(m.name.value));
  d.code("name_word", Code::word(m.name.value, "._-"));
  d.text("image", image);
  d.code("image_sh", Code::sh(image));
  d.text("dockerfile", m.outputs.dockerfile.value);
  d.code("dockerfile_sh", Code::sh(m.outputs.dockerfile.value));
  d.text("workdir", m.workdir.value);
  d.code("workdir_sh", Code::sh(m.workdir.value));
  d.text("checkpoints", j.checkpoints.value);
  d.code("checkpoints_sh", Code::sh(j.checkpoints.value));
  d.text("checkpoints_host", j.checkpoints_host.value);
  d.code("checkpoints_host_sh", Code::sh(j.checkpoints_host.value));
  d.text("logs", j.logs.value);
  d.code("logs_sh", Code::sh(j.logs.value));
  d.text("max_restarts", std::to_string(j.max_restarts.value));
  d.code("max_restarts_code", Code::number(j.max_restarts.value));
  d.text("backoff", std::to_string(j.backoff.value));
  d.code("backoff_code", Code::number(j.backoff.value));
  d.text("stop_timeout", std::to_string(j.stop_timeout.value));
  d.code("stop_timeout_code", Code::number(j.stop_timeout.value));
  d.code("gpus_sh", j.gpus.value.empty() ? Code::literal("''") : Code::sh(j.gpus.value));
  // jobs.checkpoints.keep: run.sh prunes only when it is set (0: never); envpin_ckpt.py keeps 3
  // unless told.
  const int keep = j.checkpoints_keep ? j.checkpoints_keep->value : 0;
  d.code("runner_keep_code", Code::number(keep));
  if (keep > 0) {
    Fields k;
    k.text("keep", std::to_string(keep));
    d.items("keep", {k});
  } else {
    d.items("keep", {});
  }
  d.flag("has_resume", !j.resume.empty());
  d.text("resume_text", join_words(j.resume));
  // One word a line, {checkpoint} as written: run.sh's resume_word_lines puts the path there.
  std::string resume_lines;
  for (const auto& w : j.resume) resume_lines += (resume_lines.empty() ? "" : "\n") + w.value;
  d.code("resume_words_sh", Code::sh(resume_lines));
  d.flag("resume_needs_checkpoint", std::any_of(j.resume.begin(), j.resume.end(), [](const auto& w) {
           return w.value.find(manifest::kCheckpointWord) != std::string::npos;
         }));
  // Which files are checkpoints: the manifest's globs, else all but the known non-checkpoints
  // (the same rule as jobs::is_checkpoint_name).
  // One case pattern a line, for run.sh's is_checkpoint (templates/lib/run.sh).
  const std::string globs = checkpoint_globs(j);
  std::string rule;
  for (const auto& g : j.checkpoints_pattern) rule += (rule.empty() ? "" : " or ") + g.value;
  d.code("checkpoint_patterns", Code::sh(globs));
  d.code("not_checkpoint_patterns", Code::sh(not_checkpoint_globs()));
  d.code("checkpoints_library", Code::embedded("checkpoints.sh"));
  d.code("image_library", Code::embedded("image.sh"));
  d.code("library", Code::embedded("run.sh"));
  d.text("checkpoint_rule", globs.empty() ? "a file that is not a temporary, a sidecar, an image, a log or a report"
                                          : "a file named " + rule + " (jobs.checkpoints.pattern)");
  // The image is built for the manifest's platform, whatever the host is (one platform; with
  // several, the engine builds the host's and check_env names the mismatch).
  d.code("platform_sh", m.platforms.size() == 1 ? Code::sh(m.platforms.front().value.text()) : Code::literal("''"));
  // Secrets and jobs.env pass by name only: the engine reads each value from the caller.
  std::vector<Fields> pass;
  std::string pass_names;
  for (const auto& n : passed_names(m)) {
    Fields item;
    item.text("name", n);
    pass.push_back(item);
    pass_names += (pass_names.empty() ? "" : " ") + Code::word(n, "_").text();
  }
  d.items("pass", pass);
  d.code("pass_names_sh", Code::sh(pass_names));
  // The distributed launch (jobs.launch, jobs.nodes) and what runs beside the job.
  const bool distributed = j.launch.value != "none";
  d.code("launch_code", Code::word(j.launch.value, ""));
  d.code("nodes_code", Code::number(j.nodes.value));
  d.text("nodes", std::to_string(j.nodes.value));
  d.flag("torchrun", j.launch.value == "torchrun");
  d.flag("srun_launch", j.launch.value == "srun");
  d.flag("distributed", distributed);
  d.flag("multi_node", j.nodes.value > 1);
  d.flag("srun", j.nodes.value > 1 || j.launch.value == "srun");
  // torchrun's processes per node: the GPUs of a node when counted, found at run time for
  // 'all', one without GPUs.
  const std::string per_node = j.gpus_per_node         ? std::to_string(j.gpus_per_node->value)
                               : j.gpus.value == "all" ? ""
                               : j.gpus.value.empty()  ? "1"
                                                       : j.gpus.value;
  d.code("nproc_code", per_node.empty() ? Code::literal("''") : Code::word(per_node, ""));
  d.text("nproc_text", per_node.empty() ? "one per GPU" : per_node);
  if (j.notify) {
    const manifest::Notify& n = *j.notify;
    d.flag("has_notify", true);
    d.code("notify_url_code", n.url
                                  ? Code::sh(n.url->value)
                                  : Code::literal("${") + Code::word(n.url_secret->value, "_") + Code::literal(":-}"));
    d.text("notify_where", n.url ? n.url->value : "the URL in $" + n.url_secret->value);
    std::string events;
    if (n.on.empty()) events = "started checkpoint restarted failed finished stopped idle";
    for (const auto& e : n.on) events += (events.empty() ? "" : " ") + e.value;
    d.code("notify_on_code", Code::sh(events));
    d.text("notify_events", events);
    d.code("notify_timeout_code", Code::number(n.timeout.value));
    d.text("notify_timeout", std::to_string(n.timeout.value));
  } else {
    d.flag("has_notify", false);
    d.code("notify_url_code", Code::literal("''"));
    d.code("notify_on_code", Code::literal("''"));
    d.code("notify_timeout_code", Code::number(10));
  }
  const manifest::IdleGuard idle = j.idle.value_or(manifest::IdleGuard{});
  d.flag("has_idle", j.idle.has_value());
  d.code("idle_below_code", Code::number(idle.below.value));
  d.code("idle_window_code", Code::number(idle.window.value));
  d.code("idle_every_code", Code::number(j.idle ? idle.every.value : 0));
  d.code("idle_action_code", Code::word(idle.action.value, ""));
  d.text("idle_below", std::to_string(idle.below.value));
  d.text("idle_window", std::to_string(idle.window.value));
  d.text("idle_every", std::to_string(idle.every.value));
  d.text("idle_done", idle.action.value == "stop" ? "stopped (no restart)" : "reported (jobs.notify)");
  d.text("warn", std::to_string(j.slurm_warn.value));
  d.code("warn_code", Code::number(j.slurm_warn.value));
  // The self-sent warning of a REST submission: the time limit less the warning, from the start.
  const long limit_s = j.slurm_time ? jobs::time_limit_minutes(j.slurm_time->value) * 60 : 0;
  d.flag("self_warn", limit_s > j.slurm_warn.value);
  d.code("self_warn_after_code", Code::number(limit_s > j.slurm_warn.value ? limit_s - j.slurm_warn.value : 0));
  const std::string shared = j.slurm_checkpoints ? j.slurm_checkpoints->value : j.checkpoints_host.value;
  d.code("directives", sbatch_directives(m, true));
  Fields sbatch = d;
  sbatch.text("checkpoints", shared);
  sbatch.code("checkpoints_sh", Code::sh(shared));
  Fields helper;
  helper.text("manifest_name", manifest_name(m));
  helper.text("keep", std::to_string(keep > 0 ? keep : 3));
  helper.code("keep_code", Code::number(keep > 0 ? keep : 3));
  return {{m.outputs.run.value, render_template("run.sh.mustache", d), true},
          {m.outputs.sbatch.value, render_template("job.sbatch.mustache", sbatch), true},
          {m.outputs.ckpt_helper.value, render_template("envpin_ckpt.py.mustache", helper), false}};
}

}  // namespace envpin::render

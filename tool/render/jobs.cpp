// SPDX-License-Identifier: Apache-2.0
// .envpin/run.sh (one job in the pinned image, with checkpoints, logs and restarts) and
// .envpin/job.sbatch (the same job under Slurm), for a manifest with a jobs section.
#include <algorithm>
#include <cctype>
#include <string>

#include "pin/sha256.hpp"
#include "render/quote.hpp"
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

std::string job_image(const manifest::Manifest& m, const resolve::Environment& env) {
  // Named after what pins it: the lock when there is one, else the manifest's bytes.
  const std::string tag = env.lock ? "lock-" + env.lock->lock_digest.substr(env.lock->lock_digest.find(':') + 1, 12)
                                   : "manifest-" + pin::sha256_hex(m.source).substr(0, 12);
  return "envpin/" + m.name.value + ":" + tag;
}

std::vector<Artifact> jobs(const manifest::Manifest& m, const resolve::Environment& env) {
  if (!m.jobs) return {};
  const manifest::Jobs& j = *m.jobs;
  Data d;
  d.set("manifest_name", manifest_name(m));
  d.set("name", m.name.value);
  d.set("name_sh", sh_quote(m.name.value));
  const std::string image = job_image(m, env);
  d.set("image", image);
  d.set("image_sh", sh_quote(image));
  d.set("dockerfile", m.outputs.dockerfile.value);
  d.set("dockerfile_sh", sh_quote(m.outputs.dockerfile.value));
  d.set("workdir", m.workdir.value);
  d.set("workdir_sh", sh_quote(m.workdir.value));
  d.set("checkpoints", j.checkpoints.value);
  d.set("checkpoints_sh", sh_quote(j.checkpoints.value));
  d.set("checkpoints_host", j.checkpoints_host.value);
  d.set("checkpoints_host_sh", sh_quote(j.checkpoints_host.value));
  d.set("logs", j.logs.value);
  d.set("logs_sh", sh_quote(j.logs.value));
  d.set("max_restarts", std::to_string(j.max_restarts.value));
  d.set("backoff", std::to_string(j.backoff.value));
  d.set("stop_timeout", std::to_string(j.stop_timeout.value));
  d.set("gpus_sh", j.gpus.value.empty() ? std::string("''") : sh_quote(j.gpus.value));
  d.set("has_resume", !j.resume.empty());
  d.set("resume_text", join_words(j.resume));
  Data resume{Data::type::list};
  for (const auto& w : j.resume) resume.push_back(Data(sh_quote(w.value)));
  d.set("resume", resume);
  // Secrets and jobs.env pass by name only: the engine reads each value from the caller.
  std::vector<std::string> names;
  for (const auto& s : m.secrets) names.push_back(s.value);
  for (const auto& e : j.env) names.push_back(e.value);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  Data pass{Data::type::list};
  for (const auto& n : names) {
    Data item;
    item.set("name", n);
    pass.push_back(item);
  }
  d.set("pass", pass);
  d.set("warn", std::to_string(j.slurm_warn.value));
  const bool all = j.gpus.value == "all";
  const std::string shared = j.slurm_checkpoints ? j.slurm_checkpoints->value : j.checkpoints_host.value;
  d.set("slurm_checkpoints", shared);
  d.set("slurm_checkpoints_sh", sh_quote(shared));
  // The #SBATCH lines, one block: Slurm reads directives only before the first command.
  std::string directives = "#SBATCH --job-name=" + m.name.value + "\n#SBATCH --output=" + j.logs.value +
                           "/slurm-%j.out\n#SBATCH --open-mode=append\n#SBATCH --requeue\n#SBATCH --signal=B:USR1@" +
                           std::to_string(j.slurm_warn.value) + "\n";
  if (j.slurm_time) directives += "#SBATCH --time=" + j.slurm_time->value + "\n";
  if (j.slurm_partition) directives += "#SBATCH --partition=" + j.slurm_partition->value + "\n";
  if (all) directives += "#SBATCH --exclusive\n";
  else if (!j.gpus.value.empty()) directives += "#SBATCH --gres=gpu:" + j.gpus.value + "\n";
  d.set("directives", directives.substr(0, directives.size() - 1));
  Data sbatch = d;
  sbatch.set("checkpoints", shared);
  sbatch.set("checkpoints_sh", sh_quote(shared));
  return {{m.outputs.run.value, render_template("run.sh.mustache", d), true},
          {m.outputs.sbatch.value, render_template("job.sbatch.mustache", sbatch), true}};
}

}  // namespace envpin::render

// SPDX-License-Identifier: Apache-2.0
// The jobs domain: the project a job runs in, the state run.sh keeps (<logs>/<job>.status,
// key=value lines), the supervision rules read from it, and starting run.sh or job.sbatch.
// The job commands (cli/jobs.cpp, cli/resume_check.cpp) are argument handling over this.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "jobs/checkpoints.hpp"
#include "manifest/model.hpp"

namespace envpin::jobs {

struct Project {
  manifest::Manifest m;
  std::filesystem::path run_script;  // in the tree: what Slurm copies and a user may run by hand
  std::filesystem::path sbatch_script;
  std::filesystem::path logs;
  // What envpin itself runs on the host: run.sh as envpin rendered it, held in the project's private
  // state (io::project_state) by workflow::require_pinned, never the tree's file a container can write.
  std::filesystem::path held_run_script;
};

// The manifest (which must have a jobs section) and where its scripts and logs are.
Project load_project(const std::string& file);
// docker or podman (ENVPIN_ENGINE), or an error naming both. For podman, podman_session first.
std::string container_engine();
// Drops an XDG_RUNTIME_DIR that is not a writable directory of this user's (a Slurm job inherits
// the submitting session's): rootless podman fails on it, and uses its own directory without it.
void podman_session();
// Letters, digits, '.', '_' and '-', starting with a letter or digit (empty: none given).
void check_job_id(const std::string& id);

// A job's state as run.sh writes it to <logs>/<job>.status. The file is data that anyone with
// write access to the logs directory may have edited, so it is read with a grammar: at most
// 64 KiB, one `key=value` a line, only the keys run.sh writes, each at most once, each value in
// its own charset (numbers, an id, a path, printable text). The job name must be the file's own.
// A missing file is an empty status; one that breaks the grammar throws diag::Error at its
// file:line:col.
using Status = std::map<std::string, std::string>;
Status read_status(const std::filesystem::path& file);
// The same for text already read (`file` names it in errors); for tests and the fuzzer.
Status parse_status(const std::string& text, const std::filesystem::path& file);
Status job_status(const Project& p, const std::string& id);
std::string field(const Status& s, const std::string& key);
bool active(const std::string& state);
// Whether the job's supervisor ran on this machine (a Slurm job runs on a compute node).
bool on_this_host(const Status& s);
// When the process `pid` started, in clock ticks since boot (/proc/PID/stat, field 22); empty
// when there is no such process or it is a zombie.
std::string process_start(int pid);
// The first `most` words of process `pid`'s command line (/proc/PID/cmdline); none when it cannot
// be read.
std::vector<std::string> process_args(int pid, std::size_t most);
// Whether `pid` is verifiably this project's supervisor: it runs `sh RUN_SCRIPT ...` (argv[1],
// resolved against the process's working directory, is p.run_script) and started at `start`
// (a reused pid starts later). Only such a process is ever signalled.
bool is_supervisor(const Project& p, int pid, const std::string& start);
// Whether the supervisor (run.sh) recorded in the status still runs; unknown (true) for another
// host. A pid that is not verifiably the supervisor counts as gone.
bool supervisor_alive(const Project& p, const Status& s);
// The job's container as the engine (ENVPIN_ENGINE, else docker or podman on PATH) sees it:
// its status ("running", "exited", ...) and exit code; none when there is no such container or
// no engine answers. Under ch-run, from the job's record: "exited" with ch-run's exit status,
// "running" while its session has a process here, else none.
struct ContainerState {
  std::string status;
  int exit = 0;
};
std::optional<ContainerState> container_state(const Project& p, const std::string& id);
// Every container of a project as the engine lists them, asked once, at the first of(), with one
// `ps`: `envpin jobs` asked the engine once per job whose supervisor was gone (200 lost jobs, 200
// programs; issue 48). Names outside the project and lines that do not parse are no answer; no
// answer from the engine (no daemon) is nullopt for every job, as a failed inspect is. Under
// ch-run, each job's own record.
class ContainerSnapshot {
 public:
  explicit ContainerSnapshot(const Project& p);
  std::optional<ContainerState> of(const std::string& id) const;

 private:
  const std::map<std::string, ContainerState>* all() const;
  const Project& p_;
  mutable bool asked_ = false;
  mutable bool answered_ = false;
  mutable std::map<std::string, ContainerState> containers_;
};
// Removes job `id`'s container where the engine still has one (a job whose supervisor died leaves
// it): true when one was removed. Nothing under ch-run, which has no container object.
bool remove_container(const Project& p, const std::string& id);
// Under Charliecloud (ENVPIN_ENGINE=ch-run) there is no container object: run.sh starts the job in
// a session of its own and records it in <logs>/<job>.ch-run (templates/lib/run.sh, ch_wrapper):
// pid=, start= and host= of the session's leader, and exit= once ch-run ended. The file is data:
// at most 4 KiB, those keys only, each at most once, in their charsets; anything else is none.
struct ChRecord {
  int pid = 0;
  std::string start;
  std::string host;
  std::optional<int> exit;
};
std::optional<ChRecord> parse_ch_record(const std::string& text);
// Whether the recorded session still has a process here, as run.sh's ch_running judges it: its
// leader (same pid and start, running run.sh's wrapper for `container`), or, the leader gone, any
// process in the session (the kernel does not reuse a pid that names a session).
bool ch_session_alive(const ChRecord& r, const std::string& container);
// SIGTERM to the job's ch-run session (its process group), SIGKILL after `timeout_s` to its
// processes but the wrapper (which then records 137); whether a live session of this job was found.
bool stop_ch_session(const Project& p, const std::string& id, int timeout_s);
// container_state under ch-run (tool/jobs/ch_run.cpp).
std::optional<ContainerState> ch_container_state(const Project& p, const std::string& id);

// A Slurm job as Slurm reports it: its state (RUNNING, COMPLETED, CANCELLED, ...) and exit code
// ("0:9", exit status and signal). Parsed from `scontrol show job -o ID` (KEY=VALUE words) or
// `sacct -n -X -P -o State,ExitCode -j ID` ("CANCELLED by 0|0:9"); none for anything else.
struct SlurmJobState {
  std::string state;
  std::string exit;
  bool ended() const;
};
std::optional<SlurmJobState> parse_scontrol_job(const std::string& text);
std::optional<SlurmJobState> parse_sacct_job(const std::string& text);
// Asks scontrol, then sacct (scontrol forgets a job MinJobAge after it ended); none when neither
// answers or `id` is not a job number. At most 64 questions a process, none after one without
// an answer.
std::optional<SlurmJobState> slurm_job_state(const std::string& id);
// What to show for a job: the status file's state, exit and reason while its supervisor runs
// (or it ended); when the supervisor vanished while running, what the engine says of the
// container: still "running" (unsupervised), "exited" with its exit code, or else "lost". A job
// run under Slurm (slurm_job= in its status) whose supervisor is gone or on another node, and
// whose container this host cannot see, is what Slurm says: a Slurm job that ended makes it
// "exited" (COMPLETED, exit 0:0) or "lost", with the reason.
struct Shown {
  std::string state;
  std::string exit;
  std::string reason;
};
// With `containers`, what the engine says of the job comes from that one listing (a list of many
// jobs); without, from one question about this job.
Shown shown(const Project& p, const Status& s, const ContainerSnapshot* containers = nullptr);
std::string shown_state(const Project& p, const Status& s);
// Sends `sig` to the recorded supervisor when it is verifiably this project's (is_supervisor,
// through a pidfd so a pid reused meanwhile is never hit); whether it was sent.
bool signal_supervisor(const Project& p, const Status& s, int sig);
// The job's container name as run.sh makes it (envpin-<name>-<job>), never taken from the status.
std::string container_name(const Project& p, const std::string& id);
// The newest complete checkpoint in `dir` (its sha256 sidecar verified when there is one: a file
// cut off mid-write is not the last checkpoint) and its age in seconds; empty when none.
std::pair<std::string, long> last_checkpoint(const std::string& dir, const Patterns& patterns = {});
// jobs.checkpoints.pattern's globs.
Patterns checkpoint_patterns(const Project& p);

// SIGTERM to the job's supervisor (verified as is_supervisor says), then its status once it left
// the running states, waiting up to `timeout_s`; throws when it is still running then.
Status stop_supervisor(const Project& p, const std::string& id, int timeout_s);

// A job with no live supervisor (killed, or run by another machine's Slurm): its container (or
// ch-run session) stopped, the engine and the name from the project and PATH, never the status.
// What was stopped ("container envpin-x-7", "the ch-run session"), or none when nothing ran.
std::optional<std::string> stop_unsupervised(const Project& p, const std::string& id);
// The job's log to `out`: what it holds, then, with `follow`, what is appended while the job runs.
void print_log(const Project& p, const std::string& id, std::ostream& out, bool follow);

// Runs .envpin/run.sh with `args` attached to this terminal; its exit status.
int exec_run_script(const Project& p, std::vector<std::string> args);
// The command line that runs the held run.sh (p.held_run_script) for the project: the project's
// directory reaches it as ENVPIN_PROJECT, since the held copy does not sit in the tree.
std::vector<std::string> run_script_argv(const Project& p);
// sbatch on PATH, or an error naming the fix.
std::string find_sbatch();
// Submits .envpin/job.sbatch with the command as envpin job `job_id`; the Slurm job id.
std::string sbatch_submit(const Project& p, const std::string& sbatch, const std::string& job_id,
                          const std::vector<std::string>& command);
// Submits .envpin/job.sbatch through slurmrestd at `rest` (an URL as `envpin jobs --rest` takes it)
// with the job's environment; the names of secrets held back (not sent to slurmrestd) are added to
// `withheld`. The Slurm job id.
std::string rest_submit_job(const Project& p, const std::string& rest, const std::string& job_id,
                            const std::vector<std::string>& command, std::vector<std::string>& withheld);

}  // namespace envpin::jobs

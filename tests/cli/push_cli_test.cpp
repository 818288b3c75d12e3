// SPDX-License-Identifier: Apache-2.0
// envpin push's record in generate and the jobs' check: the tree the image holds, the files that
// name the pushed digest (written from a current record, refusing with a stale or missing one), and
// push's refusals before anything is built. The push itself, to a real registry: tests/e2e/push.sh.
#include <sys/stat.h>

#include <cstdlib>
#include <optional>

#include "cli/cli_fixture.hpp"
#include "manifest/load.hpp"
#include "pin/sha256.hpp"
#include "workflow/generate.hpp"
#include "workflow/push.hpp"

namespace envpin {
namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');
const std::string kOther = "sha256:" + std::string(64, 'b');

class PushCli : public Cli {
 protected:
  // The test's own calls (record(), where push keeps its copy) see the state directory the runs
  // see: the fixture's, outside the project.
  void SetUp() override {
    Cli::SetUp();
    if (const char* was = std::getenv("XDG_STATE_HOME")) saved_state_ = was;
    ::setenv("XDG_STATE_HOME", state_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_state_)
      ::setenv("XDG_STATE_HOME", saved_state_->c_str(), 1);
    else
      ::unsetenv("XDG_STATE_HOME");
    Cli::TearDown();
  }
  void project() {
    write("envpin.yaml",
          "envpin: 1\nname: shipped\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: debian12\n"
          "context: {exclude: [.out, .err, bin]}\n"  // the fixture's output capture, the stand-in sbatch
          "jobs:\n  push: reg.example.com/team/shipped\n  gpus: none\n"
          "  kubernetes: {command: [python3, train.py], claim: ckpt}\n");
    write("envpin.lock", lock::to_toml(image_only_lock(manifest())));
    write("train.py", "print('train')\n");
  }
  manifest::Manifest manifest() { return manifest::load((dir_ / "envpin.yaml").string()); }
  std::string tree() {
    const manifest::Manifest m = manifest();
    return workflow::push_tree(m, workflow::plan(m).artifacts);
  }
  std::string read(const std::string& rel) { return io::read_file(dir_ / rel).value_or(""); }
  // The record a push of the project as it is now would write: its own copy outside the project,
  // then .envpin/push.json.
  void record(const std::string& digest, const std::string& repository = "reg.example.com/team/shipped") {
    const std::string t = tree();
    const workflow::PushRecord r{repository + ":" + t.substr(7, 16), digest, "envpin/shipped:0123456789abcdef", t};
    workflow::keep_push_record(manifest(), r);
    write(".envpin/push.json", workflow::push_record_json(r));
  }
  std::optional<std::string> saved_state_;
};

TEST_F(PushCli, TheTreeIsWhatTheImageHolds) {
  project();
  ASSERT_EQ(run("generate").code, 0);
  const std::string t = tree();
  EXPECT_EQ(tree(), t);
  // envpin push's record and the files that name its digest are not in the image.
  record(kDigest);
  write(".envpin/kubernetes.yaml", "edited\n");
  write(".envpin/generated.json", "{}");
  EXPECT_EQ(tree(), t);
  // A secret file never goes, so it changes nothing either; a project file does.
  write(".env", "TOKEN=x\n");
  EXPECT_EQ(tree(), t);
  write("train.py", "print('train 2')\n");
  EXPECT_NE(tree(), t);
  write("train.py", "print('train')\n");
  EXPECT_EQ(tree(), t);
  // A generated file counts as generate will write it, not as it is on disk.
  write("Dockerfile", "FROM scratch\n");
  EXPECT_EQ(tree(), t);
}

TEST_F(PushCli, GenerateWritesTheDigestOnlyFromACurrentRecord) {
  project();
  // Before the first push: the files refuse, generate says so and succeeds.
  Result r = run("generate");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: envpin push has not recorded an image for this project yet"), std::string::npos)
      << r.err;
  EXPECT_NE(read(".envpin/kubernetes.yaml").find("finds no object"), std::string::npos);
  EXPECT_NE(read(".envpin/enroot.sbatch").find("exit 2"), std::string::npos);
  EXPECT_EQ(run("run -- true", "ENVPIN_ENGINE=envpin-no-engine").err.find("out of date"), std::string::npos);

  record(kDigest);
  r = run("generate");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("push"), std::string::npos) << r.err;
  EXPECT_NE(read(".envpin/kubernetes.yaml").find("image: reg.example.com/team/shipped@" + kDigest), std::string::npos);
  EXPECT_NE(read(".envpin/enroot.sbatch").find("docker://reg.example.com#team/shipped@" + kDigest), std::string::npos);
  EXPECT_NE(read(".envpin/apptainer.sh").find("docker://reg.example.com/team/shipped@" + kDigest), std::string::npos);
  EXPECT_EQ(run("generate --check").code, 0);

  // One edited project file: the record is stale; generate fails, and no file names its digest.
  write("train.py", "print('edited')\n");
  r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin: error: .envpin/push.json: the project or the lock changed since it was pushed as "
                       "reg.example.com/team/shipped:"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("hint: run 'envpin push --manifest envpin.yaml', then 'envpin generate' again"),
            std::string::npos)
      << r.err;
  for (const char* f : {".envpin/kubernetes.yaml", ".envpin/enroot.sbatch", ".envpin/apptainer.sh"})
    EXPECT_EQ(read(f).find(kDigest), std::string::npos) << f;
  // CI's check (generate --check) does not count a stale push as an edited file; an edit is one.
  EXPECT_EQ(run("generate --check").code, 0);
  const std::string dockerfile = read("Dockerfile");
  write("Dockerfile", dockerfile + "# edited\n");
  r = run("generate --check");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "stale Dockerfile\n");
  write("Dockerfile", dockerfile);
  // A job here does not depend on the push: its pinned check passes over those files.
  EXPECT_EQ(run("run -- true", "ENVPIN_ENGINE=envpin-no-engine").err.find("out of date"), std::string::npos);

  // A record for another repository than jobs.push names is stale too.
  record(kOther, "reg.example.com/team/elsewhere");
  r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("and jobs.push is now reg.example.com/team/shipped"), std::string::npos) << r.err;

  // A record that is not envpin's: one line naming it, nothing written.
  write(".envpin/push.json", "{\"reference\": \"x\"}");
  const std::string before = read(".envpin/kubernetes.yaml");
  r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is not envpin push's record"), std::string::npos) << r.err;
  EXPECT_EQ(read(".envpin/kubernetes.yaml"), before);
}

// submit --pushed hands Slurm .envpin/enroot.sbatch only while the push holds this project: the
// judgement is made again at submit time, so an edit since the last generate counts. sbatch here
// is a script that records what it was given (Slurm's own run of this path: not in this suite).
TEST_F(PushCli, SubmitPushedOnlyWhileThePushHoldsTheProject) {
  project();
  fs::create_directories(dir_ / "bin");
  write("bin/sbatch", "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\necho 42\n");
  fs::permissions(dir_ / "bin/sbatch", fs::perms::owner_all);
  const std::string path = "PATH=" + (dir_ / "bin").string() + ":/usr/bin:/bin";
  ASSERT_EQ(run("generate").code, 0);
  Result r = run("submit --pushed -- python3 train.py", path);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin push has not recorded an image for this project yet"), std::string::npos) << r.err;
  record(kDigest);
  r = run("submit --pushed -- python3 train.py", path);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(".envpin/enroot.sbatch does not name the pushed image"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: run 'envpin generate"), std::string::npos) << r.err;
  ASSERT_EQ(run("generate").code, 0);
  r = run("submit --pushed -- python3 train.py", path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 23), "submitted slurm job 42 ");
  const std::string args = read("bin/args");
  EXPECT_NE(args.find("/.envpin/enroot.sbatch\npython3\ntrain.py\n"), std::string::npos) << args;
  fs::remove(dir_ / "bin/args");
  // Edited after generate: the digest is judged again, and nothing reaches Slurm.
  write("train.py", "print('edited')\n");
  r = run("submit --pushed -- python3 train.py", path);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("changed since it was pushed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "bin/args"));
}

// Issue 61: a digest swapped by hand in .envpin/push.json (the tree every job and container can
// write) went into all three cluster files, and submit --pushed submitted it. The tree's record
// is believed only when the copy envpin push kept outside the project, in the user's state
// directory, is the same record.
TEST_F(PushCli, ARecordOnlyTheTreeHoldsIsNotBelieved) {
  project();
  fs::create_directories(dir_ / "bin");
  write("bin/sbatch", "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\necho 42\n");
  fs::permissions(dir_ / "bin/sbatch", fs::perms::owner_all);
  const std::string path = "PATH=" + (dir_ / "bin").string() + ":/usr/bin:/bin";
  ASSERT_EQ(run("generate").code, 0);
  record(kDigest);
  ASSERT_EQ(run("generate").code, 0);
  // envpin's own copy: outside the project, in directories only this user can enter.
  const fs::path kept = workflow::private_record_path(manifest());
  EXPECT_EQ(kept.parent_path(), state_ / "envpin" / "push");
  for (const fs::path& d : {kept.parent_path(), kept.parent_path().parent_path()}) {
    struct stat st {};
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << d;
  }
  EXPECT_EQ(read(".envpin/push.json"), io::read_file(kept).value_or(""));

  // The digest swapped in the tree: generate names no digest and fails with one line.
  std::string text = read(".envpin/push.json");
  text.replace(text.find(kDigest), kDigest.size(), kOther);
  write(".envpin/push.json", text);
  Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin: error: .envpin/push.json: its digest is not the one envpin push recorded on this "
                       "machine"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\nenvpin: hint: run 'envpin push --manifest envpin.yaml', then 'envpin generate' again\n"),
            std::string::npos)
      << r.err;
  for (const char* f : {".envpin/kubernetes.yaml", ".envpin/enroot.sbatch", ".envpin/apptainer.sh"}) {
    EXPECT_EQ(read(f).find(kOther), std::string::npos) << f;
    EXPECT_EQ(read(f).find(kDigest), std::string::npos) << f;
  }
  // submit --pushed hands Slurm nothing.
  r = run("submit --pushed -- python3 train.py", path);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("its digest is not the one envpin push recorded on this machine"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "bin/args"));

  // The genuine record back in the tree, but no copy kept (another machine's push, or a record
  // written by hand): the registry decides, asked by digest (a stand-in skopeo here). One that
  // does not serve it: not believed.
  text.replace(text.find(kOther), kOther.size(), kDigest);
  write(".envpin/push.json", text);
  fs::remove(kept);
  const auto skopeo = [&](const std::string& body) {
    write("bin/skopeo", "#!/bin/sh\n" + body + "\n");
    fs::permissions(dir_ / "bin/skopeo", fs::perms::owner_all);
  };
  skopeo("echo 'manifest unknown' >&2; exit 1");
  r = run("generate", path);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin: error: .envpin/push.json: envpin push did not record it on this machine"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("and the registry does not serve its digest in reg.example.com/team/shipped (skopeo: "
                       "manifest unknown)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read(".envpin/kubernetes.yaml").find(kDigest), std::string::npos);
  // A registry that serves the manifest of that digest (its bytes hash to it): believed without a
  // copy here, as on a cluster's login node after a push from the laptop.
  const std::string served = "{\"schemaVersion\": 2}\n";
  const std::string genuine = "sha256:" + pin::sha256_hex(served);
  record(genuine);
  fs::remove(kept);
  skopeo("printf '%s' '" + served + "'");
  r = run("generate", path);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(read(".envpin/kubernetes.yaml").find("image: reg.example.com/team/shipped@" + genuine), std::string::npos);
  // Serving other bytes under that digest is no answer.
  skopeo("echo '{}'");
  EXPECT_EQ(run("generate", path).code, 1);
  // The copy kept again: believed, and submitted.
  record(kDigest);
  ASSERT_EQ(run("generate").code, 0);
  EXPECT_NE(read(".envpin/kubernetes.yaml").find("image: reg.example.com/team/shipped@" + kDigest), std::string::npos);
  r = run("submit --pushed -- python3 train.py", path);
  EXPECT_EQ(r.code, 0) << r.err;
}

// Issue 61: with .envpin a link to a directory outside the project, generate and push wrote
// there. A link where envpin writes (.envpin/, an output's directory) is refused, nothing written.
TEST_F(PushCli, ALinkWhereEnvpinWritesIsRefused) {
  project();
  const fs::path outside =
      test_dir("cli-outside-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
  fs::remove_all(outside);
  fs::create_directories(outside);
  fs::create_directory_symlink(outside, dir_ / ".envpin");
  const std::string refused =
      "envpin: error: '.envpin' is a symbolic link; envpin writes into its own files and directories in a project, "
      "never through a link\n"
      "envpin: hint: remove '.envpin' (envpin creates it again) and run the command again\n";
  Result r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, refused);
  EXPECT_TRUE(fs::is_empty(outside));
  r = run("push");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, refused);
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_EQ(listing(), (std::vector<std::string>{"envpin.lock", "envpin.yaml", "train.py"}));

  // A link at an output's directory: refused, and none of the other files is written.
  fs::remove(dir_ / ".envpin");
  fs::create_directory_symlink(outside, dir_ / ".devcontainer");
  r = run("generate");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin: error: '.devcontainer' is a symbolic link"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_FALSE(fs::exists(dir_ / "Dockerfile"));
  EXPECT_FALSE(fs::exists(dir_ / ".envpin"));
  fs::remove(dir_ / ".devcontainer");
  EXPECT_EQ(run("generate").code, 0);
  fs::remove_all(outside);
}

TEST_F(PushCli, RefusedBeforeAnythingIsBuilt) {
  project();
  ASSERT_EQ(run("generate").code, 0);
  Result r = run("push -- 'reg.example.com/x;id'");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("envpin: error: invalid push reference 'reg.example.com/x;id'"), std::string::npos) << r.err;
  r = run("push reg.example.com/x@" + kDigest);
  EXPECT_NE(r.err.find("hint: leave the digest out"), std::string::npos) << r.err;
  // Without jobs.push and without a reference: where to push is asked for.
  write("envpin.yaml", "envpin: 1\nname: shipped\nbase: 127.0.0.1:5000/envpin/bookworm:12\nos: debian12\njobs: {}\n");
  write("envpin.lock", lock::to_toml(image_only_lock(manifest())));
  ASSERT_EQ(run("generate").code, 0);
  r = run("push");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("there is no registry to push to"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / ".envpin/push.json"));
}

}  // namespace
}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
// `envpin init` through the binary: the draft it writes is one `envpin validate` and
// `envpin generate` accept, it never replaces a file without --force, and a CUDA environment
// without the fleet's GPUs is refused before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "cli/cli_fixture.hpp"
#include "init/init.hpp"

namespace envpin {
namespace {

class InitCli : public Cli {};

TEST_F(InitCli, WritesAManifestGenerateAccepts) {
  write("requirements.txt", "numpy==1.26.4\nrequests>=2.31\n");
  Result r = run("init");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote envpin.yaml from"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Python 3.11, 2 packages"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("next: envpin lock -f envpin.yaml"), std::string::npos) << r.out;
  EXPECT_EQ(run("validate").code, 0);
  EXPECT_EQ(run("generate").code, 0);
  // The name is the project directory's (init ran in it: the directory is "."), not "project".
  std::string dir_name = dir_.filename().string();
  std::transform(dir_name.begin(), dir_name.end(), dir_name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  EXPECT_NE(io::read_file(dir_ / "envpin.yaml")->find("\nname: \"" + dir_name + "\"\n"), std::string::npos)
      << *io::read_file(dir_ / "envpin.yaml");
  // An existing manifest stays unless --force.
  const std::string before = *io::read_file(dir_ / "envpin.yaml");
  write("requirements.txt", "numpy==2.0.0\n");
  r = run("init");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: envpin.yaml already exists\n"
            "envpin: hint: pass --force to replace it, or -o to write the draft elsewhere\n");
  EXPECT_EQ(*io::read_file(dir_ / "envpin.yaml"), before);
  ASSERT_EQ(run("init --force").code, 0);
  EXPECT_NE(io::read_file(dir_ / "envpin.yaml")->find("numpy==2.0.0"), std::string::npos);
}

TEST_F(InitCli, CudaNeedsTheFleetAndNothingIsWrittenOnError) {
  write("environment.yml", "dependencies:\n  - python=3.11\n  - pytorch=2.1.0\n  - pytorch-cuda=12.1\n");
  Result r = run("init");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: ./environment.yml:4:1: the environment uses CUDA 12.1 (environment.yml:4 "
            "(pytorch-cuda=12.1)): envpin needs the "
            "fleet's GPUs to choose the toolkit and arch list\n"
            "envpin: hint: name them with --gpu (repeat for a mixed fleet), e.g. --gpu A100\n");
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
  // A fleet the environment's torch has no kernels for: the CUDA decision refuses, nothing is written.
  r = run("init --gpu 'RTX 5090'");
  EXPECT_EQ(r.code, 1);
  // Located at the input line the refused value came from, not at a line of the unwritten draft.
  EXPECT_EQ(r.err.rfind("envpin: error: ./environment.yml:4:1: the inputs give a manifest envpin refuses: torch "
                        "2.1.0+cu121",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("carry no kernels for 'RTX 5090' (sm_120)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
  r = run("init --gpu A100 --gpu H100 --name research");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("CUDA 12.1.1 (nvidia/cuda:12.1.1-base-ubuntu22.04)"), std::string::npos) << r.out;
  EXPECT_EQ(run("cuda").code, 0);
}

// torch from a CUDA wheel index without --gpu was a CPU-only draft: the fleet is asked for, as for
// a conda environment with CUDA (issue 34, item 7).
TEST_F(InitCli, ACudaWheelIndexNeedsTheFleet) {
  write("requirements.txt", "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.4.1\nnumpy\n");
  Result r = run("init");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: ./requirements.txt:1:1: the inputs install torch from a CUDA wheel index "
            "(requirements.txt:1: "
            "download.pytorch.org/whl/cu121): envpin needs the fleet's GPUs to choose the toolkit, the arch list "
            "and the torch variant\n"
            "envpin: hint: name them with --gpu (repeat for a mixed fleet), e.g. --gpu A100\n");
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
  r = run("init --gpu A100");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(io::read_file(dir_ / "envpin.yaml")->find("cuda:\n"), std::string::npos);
}

// An --extra no input offers is refused, naming what they offer (issue 34, item 6).
TEST_F(InitCli, AnUnknownExtraIsRefused) {
  write("pyproject.toml", "[project]\nname = \"x\"\n[project.optional-dependencies]\ntrain = [\"numpy\"]\n");
  const Result r = run("init --extra trian");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: --extra trian names no optional dependencies, extra or group of the inputs\n"
            "envpin: hint: they offer: train\n");
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
  EXPECT_EQ(run("init --extra train").code, 0);
  // The help names every input kind and every kind of group (issue 34, item 9).
  const Result help = run("init --help");
  EXPECT_NE(help.out.find("pyproject.toml or a Dockerfile"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("dependency-groups"), std::string::npos) << help.out;
}

// A file with three problems took three edits and three runs: one run names them all, each at its
// input line, in reading order, and writes nothing (issue 34, item 5).
TEST_F(InitCli, EveryRefusalOfARunIsNamedAtOnce) {
  write("requirements.txt", "numpy==1.26.4\n-r missing.txt\ntorch==2.4.1\n-r ../outside.txt\nrequests\n");
  write("pyproject.toml", "[project]\nname = \"x\"\ndependencies = [\n  \"numpy==2.0.0\",\n  \"torch>=2.5\",\n]\n");
  Result r = run("init --extra nosuch");
  EXPECT_EQ(r.code, 1);
  // pyproject.toml is read first; the conflicts are found at requirements.txt's lines.
  EXPECT_EQ(r.err,
            "envpin: error: ./requirements.txt:1:1: numpy is 'numpy==2.0.0' in pyproject.toml:4 but "
            "'numpy==1.26.4' in requirements.txt:1\n"
            "envpin: hint: make the inputs agree, or pass --prefer FILE to take one file's version\n"
            "envpin: error: ./requirements.txt:2:1: the line includes 'missing.txt', which does not exist\n"
            "envpin: hint: a path in an -r line is relative to the file that holds it\n"
            "envpin: error: ./requirements.txt:3:1: torch is 'torch>=2.5' in pyproject.toml:5 but 'torch==2.4.1' in "
            "requirements.txt:3\n"
            "envpin: hint: make the inputs agree, or pass --prefer FILE to take one file's version\n"
            "envpin: error: ./requirements.txt:4:1: the line includes '../outside.txt', which is outside the "
            "project's directory\n"
            "envpin: hint: envpin init reads the project's own files only: copy it into the project\n"
            "envpin: error: --extra nosuch names no optional dependencies, extra or group of the inputs\n"
            "envpin: hint: the inputs have none: drop --extra\n");
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
  // At most kMaxRefusals are shown; the rest are counted.
  std::string many;
  for (int i = 0; i < 25; ++i) many += "-r missing" + std::to_string(i) + ".txt\n";
  write("requirements.txt", many);
  fs::remove(dir_ / "pyproject.toml");
  r = run("init");
  EXPECT_EQ(r.code, 1);
  std::size_t shown = 0;
  for (std::size_t at = r.err.find("envpin: error: ./requirements.txt:"); at != std::string::npos;
       at = r.err.find("envpin: error: ./requirements.txt:", at + 1))
    ++shown;
  EXPECT_EQ(shown, init::kMaxRefusals) << r.err;
  EXPECT_NE(r.err.find("envpin: error: and 5 more refusals in the inputs, not shown (envpin init shows 20)\n"),
            std::string::npos)
      << r.err;
}

// The hint "use Python 3.10" had no init option behind it: --python sets it, over the inputs.
TEST_F(InitCli, PythonOptionWinsOverTheInputs) {
  write("environment.yml", "dependencies:\n  - python=3.8\n  - numpy\n");
  Result r = run("init --python 3.10");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string yaml = *io::read_file(dir_ / "envpin.yaml");
  EXPECT_NE(yaml.find("  version: \"3.10\"  # --python\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("#   environment.yml:2 (python=3.8) names Python 3.8: --python 3.10 is used instead\n"),
            std::string::npos)
      << yaml;
  r = run("init --force --python 3.x");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: --python 3.x is not a Python version\n"
            "envpin: hint: give one like 3.10 or 3.10.14\n");
}

// A site without PyPI (issue 34, item 8): --source system takes what Debian 12 ships as python3-*
// at a version the requirement allows, keeps the rest as pip packages with the reason, and builds
// on Debian 12's own Python; without it, init says how many packages Debian has.
TEST_F(InitCli, SourceSystemTakesDebiansPackages) {
  write("requirements.txt", "numpy>=1.20\nscipy==1.13.0\ntorch\neinops==0.7.0\npyyaml\n");
  Result r = run("init");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 of the 5 packages are in Debian 12 as python3-*: for a site without PyPI, envpin init "
                       "--source system takes them from there\n"),
            std::string::npos)
      << r.out;
  r = run("init --force --source system");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string yaml = *io::read_file(dir_ / "envpin.yaml");
  EXPECT_NE(yaml.find("os: \"debian12\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  version: \"3.11\"  # --source system: Debian 12's python3 (3.11.2)\n"
                      "  source: \"system\""),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("  packages:\n    - \"scipy==1.13.0\"  # requirements.txt:2\n    - \"einops==0.7.0\"  # "
                      "requirements.txt:4\napt:\n"
                      "  - \"python3-numpy\"  # requirements.txt:1 (numpy>=1.20; Debian 12's 1.24.2)\n"
                      "  - \"python3-torch\"  # requirements.txt:3 (torch; Debian 12's 1.13.1)\n"
                      "  - \"python3-yaml\"  # requirements.txt:5 (pyyaml; Debian 12's 6.0)\n"
                      "  - \"python3-venv\""),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("#   requirements.txt:2: Debian 12's python3-scipy is 1.10.1, which 'scipy==1.13.0' does not "
                      "allow: kept as a pip package\n"),
            std::string::npos)
      << yaml;
  EXPECT_EQ(run("validate").code, 0);
  // Debian's python3-* have no CUDA builds: with a fleet, refused before anything is written.
  fs::remove(dir_ / "envpin.yaml");
  r = run("init --source system --gpu A100");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("python3-torch is CPU-only"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
}

// --from-python on a venv made with --system-site-packages: the OS's packages it sees are not the
// project's (they were pinned as if they were: python-apt, perf).
TEST_F(InitCli, FromPythonLeavesTheSystemsPackagesOut) {
  ASSERT_EQ(shell("python3 -m venv --without-pip --system-site-packages " + (dir_ / "venv").string() + " && echo ok"),
            "ok\n");
  const std::string site = shell("ls -d " + (dir_ / "venv/lib/python3*/site-packages").string() + " | tr -d '\\n'");
  io::write_atomic(fs::path(site) / "mylib2-0.3.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: mylib2\nVersion: 0.3\n", false);
  const std::string python = (dir_ / "venv/bin/python").string();
  const Result r = run("init --from-python " + python);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string yaml = *io::read_file(dir_ / "envpin.yaml");
  EXPECT_NE(yaml.find("  packages:\n    - \"mylib2==0.3\"  # " + python + "\n# Not carried over:\n"), std::string::npos)
      << yaml;
  // The base interpreter's own packages (pip at least, on Debian python3-yaml too) are named as the system's.
  EXPECT_NE(yaml.find("is the system's (outside the venv, seen through --system-site-packages): left out"),
            std::string::npos)
      << yaml;
}

TEST_F(InitCli, ProbeTakesThisMachinesGpusAndDriver) {
  write("requirements.txt", "torch==2.4.1\n");
  // The NVML-shaped fake answers for an H100 and an A100 on driver 550.54.15.
  Result r = run("init --probe", "ENVPIN_NVML_LIBRARY=" + std::string(ENVPIN_FAKE_NVML) + " PATH=/usr/bin:/bin");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string yaml = *io::read_file(dir_ / "envpin.yaml");
  EXPECT_NE(yaml.find("cuda:\n  version: \"auto\"  # --probe: envpin chooses the toolkit\n"
                      "  gpus: [\"NVIDIA H100 80GB HBM3\", \"NVIDIA A100-SXM4-80GB\"]  # --probe: this machine's\n"
                      "  driver: \">=550.54.15\"  # --probe: this machine's\n"),
            std::string::npos)
      << yaml;
  // Driver 550.54.15 runs CUDA 12.4 fully, and torch 2.4.1 has cu124 wheels (which bring the CUDA libraries: base).
  EXPECT_NE(r.out.find("CUDA 12.4.1 (nvidia/cuda:12.4.1-base-ubuntu22.04)"), std::string::npos) << r.out;
  fs::remove(dir_ / "envpin.yaml");
  r = run("init --probe", "ENVPIN_NVML_LIBRARY=/nonexistent ENVPIN_NVIDIA_PROC_VERSION=/nonexistent PATH=/nonexistent");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("envpin: error: --probe found no NVIDIA GPU on this machine", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
}

// A working environment: a venv built here, with distributions as installers leave them
// (dist-info METADATA, direct_url.json), asked through its own interpreter.
TEST_F(InitCli, FromAWorkingPythonEnvironment) {
  ASSERT_EQ(shell("python3 -m venv --without-pip " + (dir_ / "venv").string() + " && echo ok"), "ok\n");
  const std::string site = shell("ls -d " + (dir_ / "venv/lib/python3*/site-packages").string() + " | tr -d '\\n'");
  const auto dist = [&](const std::string& dir, const std::string& name, const std::string& version,
                        const std::string& direct_url = "") {
    io::write_atomic(fs::path(site) / dir / "METADATA",
                     "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n", false);
    if (!direct_url.empty()) io::write_atomic(fs::path(site) / dir / "direct_url.json", direct_url, false);
  };
  dist("numpy-1.26.4.dist-info", "numpy", "1.26.4");
  dist("torch-2.4.1+cu124.dist-info", "torch", "2.4.1+cu124");
  dist("pip-24.0.dist-info", "pip", "24.0");
  dist("mylib-0.1.dist-info", "mylib", "0.1", R"({"url": "file:///src/mylib", "dir_info": {"editable": true}})");
  dist("clip-1.0.dist-info", "clip", "1.0",
       R"({"url": "https://github.com/openai/CLIP.git", "vcs_info": {"vcs": "git"}})");
  const std::string python = (dir_ / "venv/bin/python").string();
  const Result r = run("init --from-python " + python + " --gpu A100");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string yaml = *io::read_file(dir_ / "envpin.yaml");
  const std::string minor = shell("python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2], end=\"\")'");
  EXPECT_NE(yaml.find("  version: \"" + minor + "\"  # " + python + " (the interpreter)\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  packages:\n    - \"numpy==1.26.4\"  # " + python + "\n    - \"torch==2.4.1+cu124\"  # " +
                      python + "\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("'pip' is pip's own tooling"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("'mylib' is installed from a local directory (editable)"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("'clip 1.0' came from a URL or VCS"), std::string::npos) << yaml;
  // The torch build's variant decides the toolkit: cu124 wheels, CUDA 12.4.
  EXPECT_NE(r.out.find("CUDA 12.4.1"), std::string::npos) << r.out;
  const Result bad = run("init --force --from-python /nonexistent/python");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("cannot ask the Python environment '/nonexistent/python' what it has"), std::string::npos)
      << bad.err;
}

TEST_F(InitCli, AHostileNameIsAValueNotYaml) {
  write("requirements.txt", "numpy\n");
  const Result r = run("init --name 'x\n  evil: 1'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("envpin: error: the inputs give a manifest envpin refuses:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "envpin.yaml"));
}

TEST_F(InitCli, NothingToReadIsAnError) {
  const Result r = run("init");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("there is no requirements.txt, environment.yml, pyproject.toml or Dockerfile in ."),
            std::string::npos)
      << r.err;
}

// Issue 31: the project is the directory init writes into; an input, an -r target or a link that
// leads out of it is one located refusal, and nothing is written or shown from outside.
TEST_F(InitCli, NothingOutsideTheProjectIsRead) {
  fs::create_directories(dir_ / "p");
  fs::create_directories(dir_ / "outside");
  write("outside/requirements.txt", "canary-outside-31==1.0\n");
  write("p/requirements.txt", "numpy==1.26.4\n-r ../outside/requirements.txt\n");
  Result r = run("init -o p/envpin.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: p/requirements.txt:2:1: the line includes '../outside/requirements.txt', which is outside "
            "the project's directory\n"
            "envpin: hint: envpin init reads the project's own files only: copy it into the project\n");
  EXPECT_FALSE(fs::exists(dir_ / "p/envpin.yaml"));
  // --from a file outside the project, and a link out of it.
  write("p/requirements.txt", "numpy==1.26.4\n");
  r = run("init -o p/envpin.yaml --from outside/requirements.txt");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("envpin: error: outside/requirements.txt: ", 0), 0u) << r.err;
  EXPECT_EQ((r.out + r.err).find("canary"), std::string::npos) << r.out << r.err;
  fs::remove(dir_ / "p/requirements.txt");
  fs::create_symlink("../outside/requirements.txt", dir_ / "p/requirements.txt");
  r = run("init -o p/envpin.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ((r.out + r.err).find("canary"), std::string::npos) << r.out << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "p/envpin.yaml"));
  // A requirements.txt that is a link to .env.
  fs::remove(dir_ / "p/requirements.txt");
  write("p/.env", "HF_TOKEN=canary-env-31\n");
  fs::create_symlink(".env", dir_ / "p/requirements.txt");
  r = run("init -o p/envpin.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: p/requirements.txt: requirements.txt leads to the secret file '.env'; envpin init does not "
            "read it\n"
            "envpin: hint: name the project's dependency file, not a link to a secret\n");
  EXPECT_FALSE(fs::exists(dir_ / "p/envpin.yaml"));
}

// Credentials never reach the draft, stdout or an error line; an index URL's token is not carried
// into python.index, so not into the Dockerfile's --index-url either.
TEST_F(InitCli, CredentialsReachNeitherDraftNorOutput) {
  write("requirements.txt",
        "--index-url https://pypi.example.org/simple?token=q-secret-1\n"
        "-e git+https://alice:gh-secret-2@git.example.com/org/repo.git#egg=repo\n"
        "numpy==1.26.4\n");
  Result r = run("init");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string yaml = *io::read_file(dir_ / "envpin.yaml");
  for (const std::string& text : {r.out, r.err, yaml}) {
    EXPECT_EQ(text.find("q-secret-1"), std::string::npos) << text;
    EXPECT_EQ(text.find("gh-secret-2"), std::string::npos) << text;
  }
  ASSERT_EQ(run("generate").code, 0);
  const std::string dockerfile = *io::read_file(dir_ / "Dockerfile");
  EXPECT_EQ(dockerfile.find("q-secret-1"), std::string::npos) << dockerfile;
  EXPECT_NE(dockerfile.find("https://pypi.example.org/simple"), std::string::npos) << dockerfile;
  // A refusal quotes the URL without its password.
  write("requirements.txt", "--index-url 'https://ci:pw-secret-3@pypi.example.org/simple'\n");
  r = run("init --force");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: ./requirements.txt:1:1: the index URL ''https://<credential>@pypi.example.org/simple'' is "
            "not one envpin accepts\n"
            "envpin: hint: use an http(s) URL without quotes, spaces or '$'\n");
}

// Real projects' dependency files (tests/init/corpus/<case>: the inputs, SOURCE citing where
// they come from, ARGS for init): the manifest init writes (expected.yaml), or its refusal
// (expected.err). ENVPIN_UPDATE_GOLDEN=1 rewrites them; review the diff.
TEST_F(InitCli, Corpus) {
  const fs::path corpus = fs::path(ENVPIN_SOURCE_DIR) / "tests/init/corpus";
  const bool update = std::getenv("ENVPIN_UPDATE_GOLDEN") != nullptr;
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    ++cases;
    const std::string name = entry.path().filename().string();
    const fs::path work = dir_ / name;
    fs::create_directories(work);
    std::string args;
    for (const auto& f : fs::directory_iterator(entry.path())) {
      const std::string file = f.path().filename().string();
      if (file == "ARGS")
        args = *io::read_file(f.path());
      else if (file != "SOURCE" && !file.starts_with("expected"))
        fs::copy_file(f.path(), work / file);
    }
    while (!args.empty() && args.back() == '\n') args.pop_back();
    // "{case}" in ARGS is the case's directory (an input named with --from).
    for (std::size_t at = args.find("{case}"); at != std::string::npos; at = args.find("{case}"))
      args.replace(at, 6, name);
    const Result r = run("init -o " + name + "/envpin.yaml --name " + name + " " + args);
    const fs::path yaml = entry.path() / "expected.yaml", err = entry.path() / "expected.err";
    if (update) {
      fs::remove(yaml);
      fs::remove(err);
      if (r.code == 0)
        io::write_atomic(yaml, *io::read_file(work / "envpin.yaml"), false);
      else
        io::write_atomic(err, r.err, false);
      continue;
    }
    if (fs::exists(err)) {
      EXPECT_EQ(r.code, 1) << name;
      EXPECT_EQ(r.err, *io::read_file(err)) << name;
      EXPECT_FALSE(fs::exists(work / "envpin.yaml")) << name;
      continue;
    }
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(*io::read_file(work / "envpin.yaml"), *io::read_file(yaml)) << name;
    // What init wrote is a manifest envpin takes.
    EXPECT_EQ(run("validate -f " + name + "/envpin.yaml").code, 0) << name;
    if (io::read_file(yaml)->find("\ncuda:\n") != std::string::npos) {
      const Result cuda = run("cuda -f " + name + "/envpin.yaml");
      EXPECT_EQ(cuda.code, 0) << name << ": " << cuda.err;
    }
  }
  EXPECT_GE(cases, 40);
}

// The corpus's promise (issue 34): every entry of every input either becomes a value of the draft
// (its comment cites the entry's line) or is listed under "Not carried over" (a note cites it), and
// a pinned version that does not reach its value is a note. The entries are found here by the
// inputs' own syntax, independently of init's readers: requirement lines, a conda environment's
// dependencies, a pyproject's dependency arrays and Poetry tables, a Dockerfile's installs.
struct Entry {
  int line;
  std::string version;  // "==1.2.3" or conda's "=1.2.3" as written, without the operator
  std::string group;    // a pyproject group: an entry of a group not included is covered by its note
};

std::vector<Entry> entries_of(const std::string& file, const std::string& text) {
  std::vector<Entry> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  const auto trim = [](std::string t) {
    const auto b = t.find_first_not_of(" \t\r");
    return b == std::string::npos ? std::string() : t.substr(b, t.find_last_not_of(" \t\r") - b + 1);
  };
  const auto pinned = [](const std::string& t) {
    const auto eq = t.find("==");
    if (eq == std::string::npos) return std::string();
    const std::string v = t.substr(eq + 2);
    return v.substr(0, v.find_first_of(" ,;#'\"\\]"));
  };
  if (file.ends_with(".txt")) {
    bool continued = false;
    while (std::getline(in, line)) {
      ++number;
      const std::string t = trim(line.substr(0, line.find(" #")));
      const bool starts = !continued;
      continued = !t.empty() && t.back() == '\\';
      // An -r line's entries are those of the file it includes, which the case holds too.
      if (starts && !t.empty() && t.front() != '#' && !t.starts_with("-r ") && !t.starts_with("--requirement"))
        out.push_back({number, pinned(t), ""});
    }
  } else if (file.ends_with(".yml")) {
    bool dependencies = false;
    while (std::getline(in, line)) {
      ++number;
      const std::string t = trim(line.substr(0, line.find(" #")));
      if (!line.empty() && line.front() != ' ' && line.front() != '-') dependencies = line.starts_with("dependencies:");
      if (!dependencies || !t.starts_with("-") || t.ends_with(":") || trim(t.substr(1)).empty()) continue;
      std::string v = pinned(t);
      if (v.empty() && t.find('=') != std::string::npos && t.find_first_of("<>!~") == std::string::npos) {
        v = t.substr(t.find('=') + 1);
        v = v.substr(0, v.find('='));
      }
      out.push_back({number, trim(v), ""});
    }
  } else if (file == "pyproject.toml") {
    std::string section, group;
    bool in_array = false;
    while (std::getline(in, line)) {
      ++number;
      const std::string t = trim(line.substr(0, line.find(" #")));
      if (t.starts_with("[")) {
        section = t;
        group.clear();
        in_array = false;
        continue;
      }
      const bool poetry = section.starts_with("[tool.poetry.") && section.ends_with("dependencies]");
      const bool arrays =
          section == "[project]" || section == "[project.optional-dependencies]" || section == "[dependency-groups]";
      if (poetry) {
        if (section.starts_with("[tool.poetry.group.")) group = section.substr(19, section.find('.', 19) - 19);
        // "name = [" opens several constraints, each on its own line.
        if (t.find('=') != std::string::npos && !t.starts_with("python ") && !t.starts_with("python=") &&
            !t.ends_with("["))
          out.push_back({number, "", group});
        continue;
      }
      if (!arrays) continue;
      if (const auto eq = t.find('=');
          eq != std::string::npos && t.find('[') != std::string::npos && !in_array && t.front() != '"') {
        const std::string key = trim(t.substr(0, eq));
        if (section == "[project]" && key != "dependencies") continue;
        group = section == "[project]" ? "" : key;
        in_array = t.find(']') == std::string::npos || t.find(']') < t.find('[');
        // A one-line array: its items are on this line (their versions, one each, are not told apart).
        if (!in_array && (t.find("[\"") != std::string::npos || t.find("['") != std::string::npos))
          out.push_back({number, "", group});
        continue;
      }
      if (in_array && (t.starts_with("\"") || t.starts_with("'")) && !t.starts_with("\"#"))
        out.push_back({number, pinned(t), group});
      if (in_array && t.find(']') != std::string::npos && !t.starts_with("\"") && !t.starts_with("'")) in_array = false;
    }
  } else if (file == "Dockerfile") {
    int start = 0;
    std::string instruction;
    while (std::getline(in, line)) {
      ++number;
      const std::string t = trim(line);
      if (instruction.empty()) start = number;
      if (t.starts_with("#") && instruction.empty()) continue;
      instruction += " " + t;
      if (!t.empty() && t.back() == '\\') continue;
      const std::string i = trim(instruction);
      instruction.clear();
      if (!i.starts_with("RUN ")) continue;
      for (const char* install : {"pip install", "pip3 install", "apt-get install", "apt install"}) {
        const auto at = i.find(install);
        if (at == std::string::npos) continue;
        // "pip install -r requirements.txt": the entries are the requirements file's, in the case.
        std::istringstream words(i.substr(at + std::string_view(install).size()));
        bool only_files = true;
        std::string previous;
        for (std::string w; words >> w; previous = w) {
          if (w == "&&" || w == ";") break;
          if (!w.starts_with("-") && w != "\\" && previous != "-r" && previous != "--requirement") only_files = false;
        }
        if (!only_files) out.push_back({start, "", ""});
        break;
      }
    }
  }
  return out;
}

TEST(InitCorpus, NothingChangesSilently) {
  const fs::path corpus = fs::path(ENVPIN_SOURCE_DIR) / "tests/init/corpus";
  int drafts = 0, checked = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    const fs::path yaml = entry.path() / "expected.yaml";
    if (!fs::exists(yaml)) continue;  // a refusal: expected.err, checked by InitCli.Corpus
    ++drafts;
    const std::string manifest = *io::read_file(yaml);
    // "requirements.txt:12" cited, not "requirements.txt:123".
    const auto cites = [&](const std::string& origin) {
      for (std::size_t at = manifest.find(origin); at != std::string::npos; at = manifest.find(origin, at + 1)) {
        const std::size_t end = at + origin.size();
        if ((at == 0 || !std::isalnum(static_cast<unsigned char>(manifest[at - 1]))) &&
            (end == manifest.size() || !std::isdigit(static_cast<unsigned char>(manifest[end]))))
          return true;
      }
      return false;
    };
    const std::string notes = manifest.substr(std::min(manifest.find("# Not carried over:"), manifest.size()));
    for (const auto& f : fs::directory_iterator(entry.path())) {
      const std::string file = f.path().filename().string();
      if (file == "SOURCE" || file == "ARGS" || file.starts_with("expected")) continue;
      for (const Entry& e : entries_of(file, *io::read_file(f.path()))) {
        ++checked;
        const std::string origin = file + ":" + std::to_string(e.line);
        const bool group_noted =
            !e.group.empty() && notes.find("'" + e.group + "' is not included") != std::string::npos;
        EXPECT_TRUE(cites(origin) || group_noted)
            << entry.path().filename() << ": " << origin << " is in no value or note";
        if (e.version.empty() || e.version.find('*') != std::string::npos) continue;
        // A value that came from the entry keeps its version, or a note says why not.
        std::istringstream lines(manifest);
        bool valued = false, kept = false;
        for (std::string l; std::getline(lines, l);) {
          if (l.starts_with("#")) continue;
          const auto hash = l.find("  # ");
          if (hash == std::string::npos) continue;
          for (std::size_t at = l.find(origin, hash); at != std::string::npos; at = l.find(origin, at + 1)) {
            const std::size_t end = at + origin.size();
            if (end < l.size() && std::isdigit(static_cast<unsigned char>(l[end]))) continue;
            valued = true;
            kept = kept || l.substr(0, hash).find(e.version) != std::string::npos;
          }
        }
        const std::string cited = "#   " + origin;
        EXPECT_TRUE(!valued || kept || notes.find(cited + ":") != std::string::npos ||
                    notes.find(cited + " (") != std::string::npos)
            << entry.path().filename() << ": " << origin << " pins " << e.version << " but no value from it keeps it";
      }
    }
  }
  EXPECT_GE(drafts, 40);
  EXPECT_GE(checked, 1000);
}

}  // namespace
}  // namespace envpin

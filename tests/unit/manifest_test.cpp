// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "diag/error.hpp"
#include "manifest/load.hpp"
#include "resolve/environment.hpp"
#include "test_dir.hpp"

namespace envpin::manifest {
namespace {

namespace fs = std::filesystem;

// Parses `yaml` as envpin.yaml in `dir` and resolves it; returns the formatted error, or "" if none.
std::string error_of(const std::string& yaml, const fs::path& dir = ".") {
  try {
    Manifest m = parse(yaml, "envpin.yaml", dir);
    resolve::resolve(m);
  } catch (const diag::Error& e) {
    return diag::format(e);
  }
  return {};
}

TEST(Manifest, ReadsEveryKeyWithLocations) {
  const Manifest m = parse(R"(envpin: 1
name: demo
platforms: [linux/arm64]
os: ubuntu24.04
cuda:
  version: "12.8"
  flavor: devel
  cudnn: yes
  gpus: [H100, "8.0"]
  driver: ">=570.86.10"
python:
  version: 3.12
  packages: ["Torch[Extra]==2.6.0", numpy]
  index: https://pypi.example/simple
  extra_index: [https://download.pytorch.org/whl/cu128]
apt: [git, curl=7.88.1-10+deb12u14]
env: {DATA_DIR: /data, PORT: 8080}
secrets: [HF_TOKEN]
paths: {data: "${DATA_DIR}/raw"}
workdir: /src
user: {name: ml, uid: 2000}
context: {exclude: [data/raw]}
devcontainer: {extensions: [ms-python.python], forward_ports: [8888], gpu: required}
outputs: {check_env: tools/check.sh}
)",
                           "envpin.yaml", ".");
  EXPECT_EQ(m.name.value, "demo");
  EXPECT_EQ(m.name.where.line, 2);
  EXPECT_EQ(m.name.where.column, 7);
  ASSERT_EQ(m.platforms.size(), 1u);
  EXPECT_EQ(m.platforms[0].value.text(), "linux/arm64");
  ASSERT_TRUE(m.cuda);
  EXPECT_EQ(m.cuda->version.value, "12.8");
  EXPECT_EQ(m.cuda->flavor.value, CudaFlavor::devel);
  EXPECT_TRUE(m.cuda->cudnn.value);
  EXPECT_EQ(m.cuda->driver->value, "570.86.10");
  ASSERT_EQ(m.cuda->gpus.size(), 2u);
  EXPECT_EQ(m.cuda->gpus[1].where.line, 9);
  ASSERT_TRUE(m.python);
  EXPECT_EQ(m.python->version.value, "3.12");
  ASSERT_EQ(m.python->packages.size(), 2u);
  EXPECT_EQ(m.python->packages[0].value.text(), "torch[extra]==2.6.0");
  EXPECT_EQ(m.python->packages[1].value.text(), "numpy");
  EXPECT_EQ(m.python->extra_index.size(), 1u);
  ASSERT_EQ(m.apt.size(), 2u);
  EXPECT_EQ(m.apt[1].value.name, "curl");
  EXPECT_EQ(m.apt[1].value.version, "7.88.1-10+deb12u14");
  ASSERT_EQ(m.env.size(), 2u);
  EXPECT_EQ(m.env[1].value.value, "8080");
  EXPECT_EQ(m.secrets[0].value, "HF_TOKEN");
  EXPECT_EQ(m.paths[0].value.value, "${DATA_DIR}/raw");
  EXPECT_EQ(m.workdir.value, "/src");
  EXPECT_EQ(m.user.name.value, "ml");
  EXPECT_EQ(m.user.uid.value, 2000);
  EXPECT_EQ(m.context_exclude[0].value, "data/raw");
  EXPECT_EQ(m.devcontainer.gpu.value, GpuRequirement::required);
  EXPECT_EQ(m.devcontainer.forward_ports[0].value, 8888);
  EXPECT_EQ(m.outputs.check_env.value, "tools/check.sh");
  EXPECT_EQ(m.outputs.dockerfile.value, "Dockerfile");
}

TEST(Manifest, Defaults) {
  const Manifest m = parse("envpin: 1\nname: x\n", "envpin.yaml", ".");
  ASSERT_EQ(m.platforms.size(), 1u);
  EXPECT_EQ(m.platforms[0].value.text(), "linux/amd64");
  EXPECT_EQ(m.workdir.value, "/workspace");
  EXPECT_EQ(m.user.name.value, "dev");
  EXPECT_EQ(m.user.uid.value, 1000);
  EXPECT_EQ(m.devcontainer.gpu.value, GpuRequirement::none);
  EXPECT_EQ(m.outputs.devcontainer.value, ".devcontainer/devcontainer.json");
  EXPECT_EQ(m.outputs.check_env.value, ".envpin/check_env.sh");
  EXPECT_FALSE(m.cuda);
  EXPECT_FALSE(m.python);
}

TEST(Manifest, JobsDefaultsAndValues) {
  const Manifest plain = parse("envpin: 1\nname: x\njobs: {}\n", "envpin.yaml", ".");
  ASSERT_TRUE(plain.jobs);
  EXPECT_EQ(plain.jobs->checkpoints.value, "/checkpoints");
  EXPECT_EQ(plain.jobs->checkpoints_host.value, "checkpoints");
  EXPECT_EQ(plain.jobs->logs.value, "logs");
  EXPECT_EQ(plain.jobs->max_restarts.value, 3);
  EXPECT_EQ(plain.jobs->backoff.value, 10);
  EXPECT_EQ(plain.jobs->gpus.value, "");  // no cuda section: no GPUs unless asked
  EXPECT_TRUE(plain.jobs->resume.empty());
  EXPECT_FALSE(parse("envpin: 1\nname: x\n", "envpin.yaml", ".").jobs);
  const Manifest gpu =
      parse("envpin: 1\nname: x\ncuda: {version: '12.4', gpus: [H100]}\njobs: {}\n", "envpin.yaml", ".");
  EXPECT_EQ(gpu.jobs->gpus.value, "all");
  // Whatever the order of the sections: jobs was read as it came, so a cuda section after it left
  // the job without GPUs.
  const Manifest jobs_first =
      parse("envpin: 1\nname: x\njobs: {}\ncuda: {version: '12.4', gpus: [H100]}\n", "envpin.yaml", ".");
  EXPECT_EQ(jobs_first.jobs->gpus.value, "all");
  const Manifest full = parse(
      "envpin: 1\nname: x\njobs:\n  checkpoints: {path: /ck, host: /mnt/ck/}\n  logs: out/./logs\n"
      "  restart: {max: 0, backoff: 2}\n  resume: --resume  auto\n  gpus: none\n"
      "  slurm: {time: '2:00:00', partition: gpu}\n",
      "envpin.yaml", ".");
  EXPECT_EQ(full.jobs->checkpoints.value, "/ck");
  EXPECT_EQ(full.jobs->checkpoints_host.value, "/mnt/ck/");
  EXPECT_EQ(full.jobs->logs.value, "out/logs");
  EXPECT_EQ(full.jobs->max_restarts.value, 0);
  ASSERT_EQ(full.jobs->resume.size(), 2u);
  EXPECT_EQ(full.jobs->resume[1].value, "auto");
  EXPECT_EQ(full.jobs->gpus.value, "");
  EXPECT_EQ(full.jobs->slurm_time->value, "2:00:00");
  EXPECT_EQ(full.jobs->slurm_partition->where.line, 9);
}

TEST(Manifest, DevServersDefaultsAndKinds) {
  const Manifest m = parse(
      "envpin: 1\nname: x\ndev:\n  servers:\n    - {name: nb}\n    - {name: lab, port: 8889, command: [jupyter-lab]}\n"
      "    - {name: tb, command: [tensorboard]}\n    - {name: app, port: 7860, command: [app, '{host}', '{port}']}\n",
      "envpin.yaml", ".");
  ASSERT_TRUE(m.dev);
  ASSERT_EQ(m.dev->servers.size(), 4u);
  EXPECT_EQ(m.dev->servers[0].kind.value, "jupyter");
  EXPECT_EQ(m.dev->servers[0].port.value, 8888);
  EXPECT_TRUE(m.dev->servers[0].command.empty());
  EXPECT_EQ(m.dev->servers[1].kind.value, "jupyter");
  EXPECT_EQ(m.dev->servers[2].kind.value, "tensorboard");
  EXPECT_EQ(m.dev->servers[2].port.value, 6006);
  ASSERT_TRUE(m.dev->servers[2].logdir);
  EXPECT_EQ(m.dev->servers[2].logdir->value, "runs");
  EXPECT_EQ(m.dev->servers[3].kind.value, "command");
  EXPECT_EQ(m.dev->servers[3].port.where.line, 8);
  EXPECT_FALSE(parse("envpin: 1\nname: x\n", "envpin.yaml", ".").dev);
  // An empty section: the container and its shell, no server.
  const Manifest bare = parse("envpin: 1\nname: x\ndev:\n", "envpin.yaml", ".");
  ASSERT_TRUE(bare.dev);
  EXPECT_TRUE(bare.dev->servers.empty());
}

TEST(Manifest, GpuDefaultsToOptionalWithCuda) {
  const Manifest m = parse("envpin: 1\nname: x\ncuda: {version: '12.4'}\n", "envpin.yaml", ".");
  EXPECT_EQ(m.devcontainer.gpu.value, GpuRequirement::optional);
}

// Long names, as literals a row can hold: X16 is 16 bytes, X240 240.
#define X16 "xxxxxxxxxxxxxxxx"
#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define X240 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16
// 16 directories of 240 bytes: D3856 X240 is a path of 4096 bytes, none of its names too long.
#define D240 X240 "/"
#define D3856 D240 D240 D240 D240 D240 D240 D240 D240 D240 D240 D240 D240 D240 D240 D240 D240

struct ErrorCase {
  const char* name;
  const char* yaml;
  const char* expected;
};

class ManifestError : public testing::TestWithParam<ErrorCase> {};

TEST_P(ManifestError, WholeMessage) { EXPECT_EQ(error_of(GetParam().yaml), GetParam().expected); }

// Each invalid input and the exact lines envpin prints for it.
const ErrorCase kErrors[] = {
    {"empty", "# nothing here\n",
     "envpin: error: envpin.yaml: the manifest is empty\n"
     "envpin: hint: start it with 'envpin: 1' and a 'name:' (see examples/)\n"},
    {"not_a_mapping", "- a\n- b\n",
     "envpin: error: envpin.yaml:1:1: the manifest must be a mapping of keys, found a list\n"
     "envpin: hint: start it with 'envpin: 1' and a 'name:' (see examples/)\n"},
    {"yaml_syntax", "envpin: 1\nname: [a, b\n",
     "envpin: error: envpin.yaml:3:1: invalid YAML: '[' is not closed by ']'\n"
     "envpin: hint: fix the YAML syntax at this position\n"},
    {"yaml_colon_in_value", "envpin: 1\nname: x: y\n",
     "envpin: error: envpin.yaml:2:8: invalid YAML: a ':' where no value may start (quote the value if it contains ': ')\n"
     "envpin: hint: fix the YAML syntax at this position\n"},
    {"yaml_bad_indentation", "envpin: 1\n- a\n",
     "envpin: error: envpin.yaml:2:1: invalid YAML: a mapping is not closed: check the indentation of this line\n"
     "envpin: hint: fix the YAML syntax at this position\n"},
    {"tab_indentation", "envpin: 1\nname: x\ncuda:\n\tversion: '12.4'\n",
     "envpin: error: envpin.yaml:4:1: tab character in indentation\n"
     "envpin: hint: indent with spaces; YAML does not allow tabs\n"},
    {"duplicate_key", "envpin: 1\nname: x\nname: y\n",
     "envpin: error: envpin.yaml:3:1: duplicate key 'name' (first set at line 2)\n"
     "envpin: hint: remove one of the two 'name' entries\n"},
    {"unknown_key", "envpin: 1\nname: x\ncuda_vesion: 12.4\n",
     "envpin: error: envpin.yaml:3:1: unknown key 'cuda_vesion' (did you mean 'cuda'?)\n"
     "envpin: hint: valid keys: envpin, name, platforms, os, base, cuda, python, apt, env, secrets, "
     "paths, workdir, user, context, devcontainer, jobs, dev, outputs\n"},
    {"unknown_nested_key", "envpin: 1\nname: x\ncuda:\n  verison: '12.4'\n",
     "envpin: error: envpin.yaml:4:3: unknown key 'verison' in cuda (did you mean 'version'?)\n"
     "envpin: hint: valid keys in cuda: version, flavor, cudnn, gpus, driver, forward_compat, repository, "
     "require_check\n"},
    {"wrong_type_list", "envpin: 1\nname: x\napt: git\n",
     "envpin: error: envpin.yaml:3:6: 'apt' must be a list, found 'git'\n"},
    {"wrong_type_string", "envpin: 1\nname: [x]\n",
     "envpin: error: envpin.yaml:2:7: 'name' must be a string, found a list\n"},
    {"wrong_type_bool", "envpin: 1\nname: x\ncuda: {version: '12.4', cudnn: maybe}\n",
     "envpin: error: envpin.yaml:3:32: 'cuda.cudnn' must be true or false, found 'maybe'\n"},
    {"schema_version", "envpin: 2\nname: x\n",
     "envpin: error: envpin.yaml:1:9: unsupported schema version '2'\n"
     "envpin: hint: this envpin reads schema version 1: write 'envpin: 1'\n"},
    {"missing_schema", "name: x\n",
     "envpin: error: envpin.yaml:1:1: missing 'envpin' (the schema version)\n"
     "envpin: hint: add 'envpin: 1' as the first line\n"},
    {"missing_name", "envpin: 1\n",
     "envpin: error: envpin.yaml:1:1: missing 'name'\n"
     "envpin: hint: add 'name: my-project' (it names the image and the devcontainer)\n"},
    {"python_version", "envpin: 1\nname: x\npython: {version: '3.x'}\n",
     "envpin: error: envpin.yaml:3:19: invalid Python version '3.x'\n"
     "envpin: hint: write it as '3.11' or '3.11.9' (quote it: YAML reads 3.10 as 3.1)\n"},
    {"python2", "envpin: 1\nname: x\npython: {version: '2.7'}\n",
     "envpin: error: envpin.yaml:3:19: invalid Python version '2.7'\n"
     "envpin: hint: write it as '3.11' or '3.11.9' (quote it: YAML reads 3.10 as 3.1)\n"},
    {"package_spec_operator", "envpin: 1\nname: x\npython:\n  version: '3.11'\n  packages: [numpy=1.26]\n",
     "envpin: error: envpin.yaml:5:19: invalid package spec 'numpy=1.26': '=' is not a version operator; use '=='\n"
     "envpin: hint: write it as pip does, e.g. 'numpy==1.26.4' or 'torch>=2.4,<2.5'\n"},
    {"package_spec_version", "envpin: 1\nname: x\npython:\n  version: '3.11'\n  packages: ['torch==2.4.x']\n",
     "envpin: error: envpin.yaml:5:22: invalid package spec 'torch==2.4.x': invalid version '2.4.x' for 'torch'\n"
     "envpin: hint: write it as pip does, e.g. 'numpy==1.26.4' or 'torch>=2.4,<2.5'\n"},
    {"package_twice", "envpin: 1\nname: x\npython:\n  version: '3.11'\n  packages: [numpy, NumPy==1.26]\n",
     "envpin: error: envpin.yaml:5:21: 'NumPy' is listed twice in python.packages (first at line 5)\n"},
    {"driver_version", "envpin: 1\nname: x\ncuda: {version: '12.4', driver: '>=latest'}\n",
     "envpin: error: envpin.yaml:3:33: invalid driver version '>=latest'\n"
     "envpin: hint: write the fleet's driver floor as '>=535.104.05' (what nvidia-smi prints)\n"},
    {"cuda_version", "envpin: 1\nname: x\ncuda: {version: twelve}\n",
     "envpin: error: envpin.yaml:3:17: invalid CUDA version 'twelve'\n"
     "envpin: hint: write the toolkit as 'major.minor' or 'major.minor.patch', e.g. '12.4'\n"},
    {"platform", "envpin: 1\nname: x\nplatforms: [linux/amd65]\n",
     "envpin: error: envpin.yaml:3:13: 'linux/amd65' is not a valid platform (did you mean 'linux/amd64'?)\n"
     "envpin: hint: use one of: linux/amd64, linux/arm64\n"},
    {"platform_twice", "envpin: 1\nname: x\nplatforms: [linux/amd64, linux/amd64]\n",
     "envpin: error: envpin.yaml:3:26: platform 'linux/amd64' is listed twice\n"},
    {"secret_in_env", "envpin: 1\nname: x\nenv: {HF_TOKEN: abc}\nsecrets: [HF_TOKEN]\n",
     "envpin: error: envpin.yaml:4:11: secret 'HF_TOKEN' is also set in env (line 3), which would bake it into the image\n"
     "envpin: hint: remove 'HF_TOKEN' from env; secrets are passed at run time\n"},
    {"output_parent", "envpin: 1\nname: x\noutputs: {dockerfile: ../Dockerfile}\n",
     "envpin: error: envpin.yaml:3:23: 'outputs.dockerfile' points outside the project: '../Dockerfile'\n"
     "envpin: hint: write a path inside the directory holding the manifest\n"},
    {"output_absolute", "envpin: 1\nname: x\noutputs: {check_env: /tmp/check.sh}\n",
     "envpin: error: envpin.yaml:3:22: 'outputs.check_env' must be relative to the project, found absolute path '/tmp/check.sh'\n"
     "envpin: hint: write it relative to the directory holding the manifest\n"},
    {"output_same_path", "envpin: 1\nname: x\noutputs: {check_env: Dockerfile}\n",
     "envpin: error: envpin.yaml:3:22: two outputs are written to the same path 'Dockerfile'\n"
     "envpin: hint: give each artifact its own path under outputs\n"},
    {"requirements_missing", "envpin: 1\nname: x\npython: {version: '3.11', requirements: no-such.txt}\n",
     "envpin: error: envpin.yaml:3:41: requirements file 'no-such.txt' does not exist\n"
     "envpin: hint: create it, or list packages under python.packages instead\n"},
    {"root_user", "envpin: 1\nname: x\nuser: root\n",
     "envpin: error: envpin.yaml:3:7: the container user must not be root\n"
     "envpin: hint: choose a non-root name such as 'dev'; root in an image is a security finding\n"},
    {"env_name", "envpin: 1\nname: x\nenv: {1X: a}\n",
     "envpin: error: envpin.yaml:3:7: invalid environment variable name '1X'\n"
     "envpin: hint: use letters, digits and '_', not starting with a digit\n"},
    {"path_unknown_var", "envpin: 1\nname: x\npaths: {data: '${DATA}/x'}\n",
     "envpin: error: envpin.yaml:3:15: path 'data' refers to '${DATA}', which is not set in env\n"
     "envpin: hint: add DATA to env, or write the path out\n"},
    {"base_and_cuda", "envpin: 1\nname: x\nbase: debian:bookworm\ncuda: {version: '12.4'}\n",
     "envpin: error: envpin.yaml:3:7: 'base' conflicts with 'cuda' (line 4), which picks the nvidia/cuda base image\n"
     "envpin: hint: remove 'base', or remove the cuda section\n"},
    {"cuda_on_debian", "envpin: 1\nname: x\nos: debian12\ncuda: {version: '12.4'}\n",
     "envpin: error: envpin.yaml:3:5: nvidia/cuda images are built on Ubuntu, not 'debian12'\n"
     "envpin: hint: set os to 'ubuntu22.04' or 'ubuntu24.04'\n"},
    {"cuda_no_tag", "envpin: 1\nname: x\ncuda: {version: '12.7'}\n",
     "envpin: error: envpin.yaml:3:17: nvidia/cuda has no supported image for CUDA 12.7\n"
     "envpin: hint: CUDA 12 images exist for 12.0, 12.1, 12.2, 12.3, 12.4, 12.5, 12.6, 12.8, 12.9\n"},
    {"cuda_no_major", "envpin: 1\nname: x\ncuda: {version: '10.2'}\n",
     "envpin: error: envpin.yaml:3:17: nvidia/cuda has no supported image for CUDA 10.2\n"
     "envpin: hint: supported CUDA lines: 11.x, 12.x, 13.x\n"},
    {"cuda_old_patch", "envpin: 1\nname: x\ncuda: {version: '12.4.0'}\n",
     "envpin: error: envpin.yaml:3:17: nvidia/cuda publishes no tag for CUDA 12.4.0 (kept: 12.4.1)\n"
     "envpin: hint: write 'version: \"12.4\"' to get the newest published patch release\n"},
    {"cuda_os_missing", "envpin: 1\nname: x\nos: ubuntu24.04\ncuda: {version: '12.4', gpus: [A100]}\n",
     "envpin: error: envpin.yaml:3:5: nvidia/cuda has no CUDA 12.4.1 image for ubuntu24.04\n"
     "envpin: hint: set os to one of: ubuntu20.04, ubuntu22.04\n"},
    {"unknown_gpu", "envpin: 1\nname: x\ncuda: {version: '12.4', gpus: [H10O]}\n",
     "envpin: error: envpin.yaml:3:32: unknown GPU 'H10O' (did you mean 'H100'?)\n"
     "envpin: hint: name a product such as 'H100' or give its compute capability, e.g. '9.0'\n"},
    {"v100_on_cuda13", "envpin: 1\nname: x\ncuda: {version: '13.0', gpus: [V100]}\n",
     "envpin: error: envpin.yaml:3:32: CUDA 13.0.3 (cuda.version at line 3) cannot build code for 'V100' (sm_70); CUDA 11.0 to 12.9 can\n"
     "envpin: hint: set cuda.version to 12.9 or older, or drop 'V100'\n"},
    {"blackwell_on_cuda124", "envpin: 1\nname: x\ncuda: {version: '12.4', gpus: [RTX 5090]}\n",
     "envpin: error: envpin.yaml:3:32: CUDA 12.4.1 (cuda.version at line 3) cannot build code for 'RTX 5090' (sm_120); CUDA 12.8 to 13.2 can\n"
     "envpin: hint: set cuda.version to 12.8 or newer, or drop 'RTX 5090'\n"},
    {"torch_cpu_index_with_cuda",
     "envpin: 1\nname: x\ncuda: {version: '12.4', gpus: [H100]}\npython:\n  version: '3.11'\n"
     "  extra_index: [https://download.pytorch.org/whl/cpu]\n",
     "envpin: error: envpin.yaml:6:17: python.extra_index selects CPU-only torch wheels, but the manifest has a cuda section\n"
     "envpin: hint: remove it and let envpin choose the CUDA variant, or name one such as "
     "https://download.pytorch.org/whl/cu124\n"},
    {"torch_without_wheels_for_python",
     "envpin: 1\nname: x\ncuda: {version: '12.4', gpus: [H100]}\npython:\n  version: '3.13'\n"
     "  packages: [torch==2.4.1]\n",
     "envpin: error: envpin.yaml:6:14: torch 2.4.1 (python.packages at line 6) has no wheels for Python 3.13 "
     "(python.version at line 5): torch 2.4 supports Python 3.8 to 3.12\n"
     "envpin: hint: use Python 3.12, or pin torch 2.5 or newer\n"},
    {"torch_local_variant_conflicts_with_cuda",
     "envpin: 1\nname: x\ncuda: {version: '12.8', gpus: [H100]}\npython:\n  version: '3.11'\n"
     "  packages: ['torch==2.7.0+cu118']\n",
     "envpin: error: envpin.yaml:6:14: python.packages at line 6 selects torch cu118 wheels, but CUDA 12.8.1 "
     "(cuda.version at line 3) needs a CUDA 12.x variant at or below 12.8\n"
     "envpin: hint: change the torch index, or cuda.version\n"},
    {"cudnn_base", "envpin: 1\nname: x\ncuda: {version: '12.4', flavor: base, cudnn: true}\n",
     "envpin: error: envpin.yaml:3:46: cuDNN images exist only for the runtime and devel flavors\n"
     "envpin: hint: set cuda.flavor to 'runtime' or 'devel'\n"},
    {"gpu_without_cuda", "envpin: 1\nname: x\ndevcontainer: {gpu: required}\n",
     "envpin: error: envpin.yaml:3:21: devcontainer.gpu asks for a GPU but the manifest has no cuda section\n"
     "envpin: hint: add a cuda section, or set devcontainer.gpu to 'none'\n"},
    {"port_range", "envpin: 1\nname: x\ndevcontainer: {forward_ports: [70000]}\n",
     "envpin: error: envpin.yaml:3:32: 'devcontainer.forward_ports item' must be between 1 and 65535, found 70000\n"},
    {"apt_version", "envpin: 1\nname: x\napt: ['git=latest']\n",
     "envpin: error: envpin.yaml:3:7: invalid Debian version 'latest' for 'git'\n"
     "envpin: hint: write 'name=version' as apt-cache policy prints it, e.g. 'git=1:2.39.5-0+deb12u2'\n"},
    {"workdir_relative", "envpin: 1\nname: x\nworkdir: src\n",
     "envpin: error: envpin.yaml:3:10: workdir must be an absolute path inside the container, found 'src'\n"
     "envpin: hint: write it as '/workspace'\n"},
    {"jobs_checkpoints_relative", "envpin: 1\nname: x\njobs: {checkpoints: ckpt}\n",
     "envpin: error: envpin.yaml:3:21: jobs.checkpoints must be an absolute path inside the container, found 'ckpt'\n"
     "envpin: hint: write it as '/checkpoints'\n"},
    {"jobs_gpus", "envpin: 1\nname: x\njobs: {gpus: nine}\n",
     "envpin: error: envpin.yaml:3:14: jobs.gpus must be 'all', a number of GPUs or 'none', found 'nine'\n"
     "envpin: hint: write 'all', a count such as 2, or 'none'\n"},
    {"jobs_restart_max", "envpin: 1\nname: x\njobs: {restart: {max: 500}}\n",
     "envpin: error: envpin.yaml:3:23: 'jobs.restart.max' must be between 0 and 100, found 500\n"},
    {"jobs_resume_shell", "envpin: 1\nname: x\njobs: {resume: \"--resume $(id)\"}\n",
     "envpin: error: envpin.yaml:3:16: jobs.resume word '$(id)' has characters a shell would read\n"
     "envpin: hint: use plain words such as '--resume auto', and {checkpoint} for the newest checkpoint's path\n"},
    {"jobs_resume_two_checkpoints", "envpin: 1\nname: x\njobs: {resume: \"--a={checkpoint}{checkpoint}\"}\n",
     "envpin: error: envpin.yaml:3:16: jobs.resume word '--a={checkpoint}{checkpoint}' names {checkpoint} more than once\n"
     "envpin: hint: write {checkpoint} at most once a word, e.g. '--resume={checkpoint}'\n"},
    {"jobs_slurm_time", "envpin: 1\nname: x\njobs: {slurm: {time: 4h}}\n",
     "envpin: error: envpin.yaml:3:22: jobs.slurm.time must be Slurm's [D-]HH:MM:SS or minutes, found '4h'\n"
     "envpin: hint: write it as '04:00:00' or '1-00:00:00'\n"},
    {"jobs_slurm_checkpoints", "envpin: 1\nname: x\njobs: {slurm: {checkpoints: shared/ckpt}}\n",
     "envpin: error: envpin.yaml:3:29: jobs.slurm.checkpoints must be an absolute path on the cluster's shared storage\n"
     "envpin: hint: write it as '/shared/checkpoints/my-project'\n"},
    {"jobs_unknown_key", "envpin: 1\nname: x\njobs: {checkpoint: /c}\n",
     "envpin: error: envpin.yaml:3:8: unknown key 'checkpoint' in jobs (did you mean 'checkpoints'?)\n"
     "envpin: hint: valid keys in jobs: checkpoints, logs, restart, resume, env, gpus, stop_timeout, slurm, launch, "
     "nodes, gpus_per_node, notify, idle, data, push, kubernetes\n"},
    {"jobs_nodes_without_launch", "envpin: 1\nname: x\njobs: {nodes: 2}\n",
     "envpin: error: envpin.yaml:3:15: jobs.nodes is 2 but jobs.launch is 'none': the command would run on the first node "
     "only, the other nodes idle\n"
     "envpin: hint: set jobs.launch: torchrun (one torchrun per node, one process per GPU), or srun (your command once per "
     "node, reading ENVPIN_NODE_RANK)\n"},
    {"kubernetes_image_by_tag",
     "envpin: 1\nname: x\njobs:\n  kubernetes: {image: 'reg.example.com/x:latest', command: [python], claim: c}\n",
     "envpin: error: envpin.yaml:4:23: jobs.kubernetes.image must name the job image by digest, found "
     "'reg.example.com/x:latest'\n"
     "envpin: hint: push the image built from the Dockerfile (with the project in it) and write what the registry "
     "answers: 'registry.example.com/team/train@sha256:<64 hex>' (docker inspect --format '{{index .RepoDigests 0}}' "
     "IMAGE prints it)\n"},
    {"push_with_digest", "envpin: 1\nname: x\njobs: {push: 'reg.example.com/x@sha256:" H64 "'}\n",
     "envpin: error: envpin.yaml:3:14: jobs.push must be a registry repository, REGISTRY/REPOSITORY[:TAG], found "
     "'reg.example.com/x@sha256:" H64 "'\n"
     "envpin: hint: leave the digest out: the registry answers it when envpin push sends the image\n"},
    {"push_without_registry", "envpin: 1\nname: x\njobs: {push: team/x}\n",
     "envpin: error: envpin.yaml:3:14: jobs.push must be a registry repository, REGISTRY/REPOSITORY[:TAG], found "
     "'team/x'\n"
     "envpin: hint: name the registry and a lower-case repository, e.g. 'registry.example.com/team/train'\n"},
    {"push_shell_words", "envpin: 1\nname: x\njobs: {push: 'reg.example.com/x;rm -rf /'}\n",
     "envpin: error: envpin.yaml:3:14: jobs.push must be a registry repository, REGISTRY/REPOSITORY[:TAG], found "
     "'reg.example.com/x;rm -rf /'\n"
     "envpin: hint: name the registry and a lower-case repository, e.g. 'registry.example.com/team/train'\n"},
    {"kubernetes_no_image", "envpin: 1\nname: x\njobs:\n  kubernetes: {command: [python], claim: c}\n",
     "envpin: error: envpin.yaml:4:15: jobs.kubernetes needs image: the job image by digest\n"
     "envpin: hint: set jobs.push to a registry repository (envpin push sends the image there and generate writes its "
     "digest), or add 'image: registry.example.com/team/train@sha256:<64 hex>'\n"},
    {"kubernetes_no_command", "envpin: 1\nname: x\njobs:\n  kubernetes: {image: 'r/x@sha256:" H64 "', claim: c}\n",
     "envpin: error: envpin.yaml:4:15: jobs.kubernetes needs command: a Job runs no caller's command\n"
     "envpin: hint: add 'command: [python, train.py]'\n"},
    {"kubernetes_no_claim",
     "envpin: 1\nname: x\njobs:\n  kubernetes: {image: 'r/x@sha256:" H64 "', command: [python]}\n",
     "envpin: error: envpin.yaml:4:15: jobs.kubernetes needs claim: the PersistentVolumeClaim its checkpoints live on\n"
     "envpin: hint: add 'claim: train-checkpoints' (a claim every pod of the Job can mount; ReadWriteMany for several "
     "nodes)\n"},
    {"kubernetes_all_gpus",
     "envpin: 1\nname: x\ncuda: {version: '12.4'}\njobs:\n  kubernetes: {image: 'r/x@sha256:" H64
     "', command: [python], claim: c}\n",
     "envpin: error: envpin.yaml:5:15: jobs.gpus is 'all' (the default with a cuda section), but a Kubernetes pod asks "
     "for a number of GPUs\n"
     "envpin: hint: set jobs.gpus_per_node to the GPUs each pod gets, e.g. 8 (or jobs.gpus: none for a CPU job)\n"},
    {"kubernetes_secret_without_secret",
     "envpin: 1\nname: x\nsecrets: [TOKEN]\njobs:\n  env: [HF_HOME]\n"
     "  kubernetes: {image: 'r/x@sha256:" H64 "', command: [python], claim: c}\n",
     "envpin: error: envpin.yaml:6:15: the job is passed TOKEN, HF_HOME by name (secrets, jobs.env), and a Kubernetes "
     "pod can take them only from a Secret\n"
     "envpin: hint: add 'secret: NAME' to jobs.kubernetes: a Secret with one key per variable (kubectl create secret "
     "generic NAME --from-literal=VAR=...)\n"},
    {"kubernetes_derived_name",
     "envpin: 1\nname: train_\njobs:\n  kubernetes: {image: 'r/x@sha256:" H64 "', command: [python], claim: c}\n",
     "envpin: error: envpin.yaml:2:7: the project's name 'train_' gives the Kubernetes Job name 'train-', which is not a "
     "DNS-1123 label of at most 63 characters\n"
     "envpin: hint: set jobs.kubernetes.name to lower-case letters, digits and '-', starting and ending with a letter or "
     "digit, e.g. 'train'\n"},
    {"kubernetes_name_too_long_for_indexed_pods",
     "envpin: 1\nname: x\njobs:\n  launch: srun\n  nodes: 12\n"
     "  kubernetes: {name: " X16 X16 X16 "abcdefghijklmn, image: 'r/x@sha256:" H64 "', command: [python], claim: c}\n",
     "envpin: error: envpin.yaml:6:22: jobs.kubernetes.name '" X16 X16 X16 "abcdefghijklmn', which is not a DNS-1123 "
     "label of at most 60 characters\n"
     "envpin: hint: set jobs.kubernetes.name to lower-case letters, digits and '-', starting and ending with a letter or "
     "digit, e.g. 'train'\n"},
    {"kubernetes_command_control",
     "envpin: 1\nname: x\njobs:\n  kubernetes: {image: 'r/x@sha256:" H64 "', command: [python, \"a\\tb\"], claim: c}\n",
     "envpin: error: envpin.yaml:4:120: 'jobs.kubernetes.command item' holds a tab at byte 2\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    {"kubernetes_command_empty_word",
     "envpin: 1\nname: x\njobs:\n  kubernetes: {image: 'r/x@sha256:" H64 "', command: [python, ''], claim: c}\n",
     "envpin: error: envpin.yaml:4:120: 'jobs.kubernetes.command item' must not be empty\n"},
    {"jobs_launch_unknown", "envpin: 1\nname: x\njobs: {launch: torchrn}\n",
     "envpin: error: envpin.yaml:3:16: 'torchrn' is not a valid jobs.launch (did you mean 'torchrun'?)\n"
     "envpin: hint: use one of: none, torchrun, srun\n"},
    {"jobs_gpus_per_node_conflict", "envpin: 1\nname: x\njobs: {gpus: 2, gpus_per_node: 4}\n",
     "envpin: error: envpin.yaml:3:32: jobs.gpus_per_node is 4 but jobs.gpus (line 3) is '2'\n"
     "envpin: hint: keep one of them: jobs.gpus is the GPUs of each node\n"},
    {"jobs_idle_window_short", "envpin: 1\nname: x\njobs: {gpus: all, idle: {for: 20s, every: 1m}}\n",
     "envpin: error: envpin.yaml:3:31: jobs.idle.for (20 s) is shorter than the sampling interval jobs.idle.every (60 s): "
     "the guard could never see the window\n"
     "envpin: hint: make jobs.idle.for at least jobs.idle.every (e.g. for: 10m, every: 30s)\n"},
    {"jobs_idle_without_gpus", "envpin: 1\nname: x\njobs: {idle: {for: 10m}}\n",
     "envpin: error: envpin.yaml:3:14: jobs.idle watches the job's GPUs, but the job has none (jobs.gpus)\n"
     "envpin: hint: set jobs.gpus (or a cuda section), or remove jobs.idle\n"},
    {"jobs_idle_bad_duration", "envpin: 1\nname: x\njobs: {gpus: all, idle: {for: 10 minutes}}\n",
     "envpin: error: envpin.yaml:3:31: 'jobs.idle.for' must be a duration from 1 s to 168 h, found '10 minutes'\n"
     "envpin: hint: write it as seconds or with a unit: 30s, 10m, 1h\n"},
    {"jobs_notify_credentials", "envpin: 1\nname: x\njobs: {notify: {url: 'https://bot:s3cret@hooks.example.com/x'}}\n",
     "envpin: error: envpin.yaml:3:22: jobs.notify.url holds credentials (the part before '@'): .envpin/run.sh would carry "
     "them\n"
     "envpin: hint: name the variable that holds the URL instead: url_secret: NOTIFY_URL\n"},
    {"jobs_notify_no_url", "envpin: 1\nname: x\njobs: {notify: {on: [failed]}}\n",
     "envpin: error: envpin.yaml:3:16: jobs.notify needs url or url_secret\n"
     "envpin: hint: add 'url: https://hooks.example.com/envpin', or 'url_secret: NOTIFY_URL' to read it from the "
     "environment\n"},
    {"jobs_notify_code_in_url", "envpin: 1\nname: x\njobs: {notify: {url: 'https://x.example/$(reboot)'}}\n",
     "envpin: error: envpin.yaml:3:22: jobs.notify.url must be an http(s) URL, found 'https://x.example/$(reboot)'\n"
     "envpin: hint: write it as 'https://hooks.example.com/envpin' (percent-encode other characters)\n"},
    {"jobs_notify_event", "envpin: 1\nname: x\njobs: {notify: {url_secret: HOOK, on: [done]}}\n",
     "envpin: error: envpin.yaml:3:40: 'done' is not a valid jobs.notify.on event\n"
     "envpin: hint: use one of: started, checkpoint, restarted, failed, finished, stopped, idle\n"},
    {"jobs_logs_outside", "envpin: 1\nname: x\njobs: {logs: ../logs}\n",
     "envpin: error: envpin.yaml:3:14: 'jobs.logs' points outside the project: '../logs'\n"
     "envpin: hint: write a path inside the directory holding the manifest\n"},
    {"jobs_env_name", "envpin: 1\nname: x\njobs: {env: [1BAD]}\n",
     "envpin: error: envpin.yaml:3:14: '1BAD' is not a variable name\n"
     "envpin: hint: use letters, digits and '_'\n"},
    // Hostile values (issue 12): refused at load, located, one printable line.
    {"workdir_shell", "envpin: 1\nname: x\nworkdir: \"/w; touch /x\"\n",
     "envpin: error: envpin.yaml:3:10: 'workdir' '/w; touch /x' has characters other than letters, digits and ._-+@/\n"
     "envpin: hint: rename it with those characters only; paths reach shell scripts and the Dockerfile\n"},
    {"workdir_newline", "envpin: 1\nname: x\nworkdir: \"/w\\nRUN touch /x\"\n",
     "envpin: error: envpin.yaml:3:10: 'workdir' holds a newline at byte 3\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    {"workdir_comma", "envpin: 1\nname: x\nworkdir: \"/w,source=/,target=/host\"\n",
     "envpin: error: envpin.yaml:3:10: 'workdir' '/w,source=/,target=/host' has characters other than letters, digits "
     "and ._-+@/\n"
     "envpin: hint: rename it with those characters only; paths reach shell scripts and the Dockerfile\n"},
    {"workdir_system", "envpin: 1\nname: x\nworkdir: /etc/app\n",
     "envpin: error: envpin.yaml:3:10: 'workdir' must not be the system directory '/etc/app' or under it\n"
     "envpin: hint: use a directory of the project's own, such as '/workspace'\n"},
    {"workdir_root", "envpin: 1\nname: x\nworkdir: /usr/../\n",
     "envpin: error: envpin.yaml:3:10: 'workdir' '/usr/../' climbs with '..'\n"
     "envpin: hint: write the path out\n"},
    {"workdir_slash", "envpin: 1\nname: x\nworkdir: //\n",
     "envpin: error: envpin.yaml:3:10: 'workdir' must not be the system directory '/' or under it\n"
     "envpin: hint: use a directory of the project's own, such as '/workspace'\n"},
    {"env_escape", "envpin: 1\nname: x\nenv: {A: \"x\\e[31mred\"}\n",
     "envpin: error: envpin.yaml:3:10: 'env.A' holds an escape character at byte 2\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    {"env_nul", "envpin: 1\nname: x\nenv: {A: \"x\\0y\"}\n",
     "envpin: error: envpin.yaml:3:10: 'env.A' holds a NUL byte at byte 2\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    {"gpu_line_separator", "envpin: 1\nname: x\ncuda: {version: '12.4', gpus: [\"A100\\L\"]}\n",
     "envpin: error: envpin.yaml:3:32: 'cuda.gpus item' holds the character U+2028 at byte 5\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    // A right-to-left override hides what the Dockerfile's RUN line really says.
    {"env_bidi_override", "envpin: 1\nname: x\nenv: {A: \"x\\u202Ey\"}\n",
     "envpin: error: envpin.yaml:3:10: 'env.A' holds the bidirectional control U+202E at byte 2\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    {"apt_bidi_isolate", "envpin: 1\nname: x\napt: [\"curl\\u2066\"]\n",
     "envpin: error: envpin.yaml:3:7: 'apt item' holds the bidirectional control U+2066 at byte 5\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    // Found by the libFuzzer run: yaml-cpp makes "\N" (NEL) a bare 0x85 byte, not UTF-8.
    {"yaml_escape_not_utf8", "envpin: 1\nname: x\nenv: {A: \"a\\Nb\"}\n",
     "envpin: error: envpin.yaml:3:10: 'env.A' holds the byte 0x85 at byte 2, which is not UTF-8\n"
     "envpin: hint: write the character itself, or remove the escape that makes it\n"},
    {"key_newline", "envpin: 1\nname: x\n\"a\\nb\": 1\n",
     "envpin: error: envpin.yaml:3:1: 'a key in the manifest' holds a newline at byte 2\n"
     "envpin: hint: manifest values are single lines of printable text; remove it\n"},
    {"exclude_space", "envpin: 1\nname: x\ncontext: {exclude: [\" !.env\"]}\n",
     "envpin: error: envpin.yaml:3:21: context.exclude pattern ' !.env' starts or ends with a space\n"
     "envpin: hint: remove the spaces: docker trims them, so the pattern would not mean what it says\n"},
    {"exclude_reinclude_secret", "envpin: 1\nname: x\ncontext: {exclude: ['!.ENV']}\n",
     "envpin: error: envpin.yaml:3:21: context.exclude pattern '!.ENV' would bring the secret file '.ENV' into the "
     "build context\n"
     "envpin: hint: remove that '!' pattern, or list the file under context.allow_secrets\n"},
    {"output_manifest", "envpin: 1\nname: x\noutputs: {dockerfile: envpin.yaml}\n",
     "envpin: error: envpin.yaml:3:23: outputs.dockerfile must not be 'envpin.yaml', a file envpin reads or keeps\n"
     "envpin: hint: choose another path, e.g. the default (remove outputs.dockerfile)\n"},
    {"output_git", "envpin: 1\nname: x\noutputs: {dockerignore: .git/config}\n",
     "envpin: error: envpin.yaml:3:25: outputs.dockerignore must not be inside .git\n"
     "envpin: hint: choose a path outside version control's own directory\n"},
    {"output_secret", "envpin: 1\nname: x\noutputs: {check_env: .Env}\n",
     "envpin: error: envpin.yaml:3:22: outputs.check_env '.Env' is named like a secret file\n"
     "envpin: hint: choose a name that .dockerignore does not treat as a secret\n"},
    {"output_generated", "envpin: 1\nname: x\noutputs: {dockerfile: .envpin/run.sh}\n",
     "envpin: error: envpin.yaml:3:23: two outputs are written to the same path '.envpin/run.sh'\n"
     "envpin: hint: give each artifact its own path under outputs\n"},
    {"output_directory_of_another", "envpin: 1\nname: x\noutputs: {dockerfile: .envpin}\n",
     "envpin: error: envpin.yaml:3:23: outputs '.envpin/check_env.sh' and '.envpin' collide: one is a directory of the "
     "other\n"
     "envpin: hint: give each artifact its own path under outputs\n"},
    {"index_shell", "envpin: 1\nname: x\npython: {version: '3.11', index: \"https://x/simple' $(id) '\"}\n",
     "envpin: error: envpin.yaml:3:34: python.index must be an http(s) URL, found 'https://x/simple' $(id) ''\n"
     "envpin: hint: write it as 'https://host/simple' (percent-encode other characters)\n"},
    {"index_credentials",
     "envpin: 1\nname: x\npython:\n  version: '3.11'\n  extra_index: [https://pypi.example.org/simple, \"https://ci:s3cr3t@pypi.example.org/simple\"]\n",
     "envpin: error: envpin.yaml:5:50: the package index URL holds credentials (the part before '@'): they would be written "
     "into the Dockerfile, envpin.lock and the image's history\n"
     "envpin: hint: remove them from the URL and give pip its credentials on the build machine (a netrc or keyring), not in "
     "the manifest\n"},
    {"index_token_query",
     "envpin: 1\nname: x\npython:\n  version: '3.11'\n  index: \"https://pypi.example.org/simple?token=s3cr3t\"\n",
     "envpin: error: envpin.yaml:5:10: the package index URL holds a credential in its query ('token='): it would be "
     "written into the Dockerfile, envpin.lock and the image's history\n"
     "envpin: hint: remove it from the URL and give pip its credentials on the build machine (a netrc or keyring), not "
     "in the manifest\n"},
    {"package_marker_not_pep508", "envpin: 1\nname: x\npython:\n  version: '3.11'\n  packages: [\"numpy; rm -rf /\"]\n",
     "envpin: error: envpin.yaml:5:22: invalid package spec 'numpy; rm -rf /': unknown marker variable 'rm'\n"
     "envpin: hint: write it as pip does, e.g. 'numpy==1.26.4' or 'torch>=2.4,<2.5'\n"},
    {"slurm_checkpoints_shell", "envpin: 1\nname: x\njobs: {slurm: {checkpoints: \"/s/$(id)\"}}\n",
     "envpin: error: envpin.yaml:3:29: 'jobs.slurm.checkpoints' '/s/$(id)' has characters other than letters, digits "
     "and ._-+@/\n"
     "envpin: hint: rename it with those characters only; paths reach shell scripts and the Dockerfile\n"},
    // Names and paths the system cannot hold (NAME_MAX, PATH_MAX), refused at load rather than
    // as an unlocated "File name too long" when a file is written.
    {"output_name_too_long", "envpin: 1\nname: x\noutputs: {dockerfile: " X240 "x}\n",
     "envpin: error: envpin.yaml:3:23: 'outputs.dockerfile' names a file of 241 bytes, longer than envpin can write "
     "(240: a name holds at most 255 bytes, and the temporary it is written through 15 more)\n"
     "envpin: hint: shorten the file name\n"},
    {"output_directory_name_too_long", "envpin: 1\nname: x\noutputs: {check_env: " X240 X16 "/check.sh}\n",
     "envpin: error: envpin.yaml:3:22: 'outputs.check_env' holds a name of 256 bytes, longer than a file name may be "
     "(255 bytes)\n"
     "envpin: hint: shorten that part of the path\n"},
    {"output_path_too_long", "envpin: 1\nname: x\noutputs: {dockerfile: " D3856 X240 "}\n",
     "envpin: error: envpin.yaml:3:23: 'outputs.dockerfile' gives a path longer than 4080 bytes inside the project "
     "directory (4095 bytes at most, and the temporary it is written through 15 more)\n"
     "envpin: hint: shorten it, or move the project to a directory with a shorter path\n"},
    {"workdir_name_too_long", "envpin: 1\nname: x\nworkdir: /w/" X240 X16 "\n",
     "envpin: error: envpin.yaml:3:10: 'workdir' holds a name of 256 bytes, longer than a file name may be (255 "
     "bytes)\n"
     "envpin: hint: shorten that part of the path\n"},
    {"jobs_logs_name_too_long", "envpin: 1\nname: x\njobs: {logs: /data/" X240 X16 "}\n",
     "envpin: error: envpin.yaml:3:14: 'jobs.logs' holds a name of 256 bytes, longer than a file name may be (255 "
     "bytes)\n"
     "envpin: hint: shorten that part of the path\n"},
    {"jobs_checkpoints_host_path_too_long", "envpin: 1\nname: x\njobs: {checkpoints: {host: " D3856 X240 "}}\n",
     "envpin: error: envpin.yaml:3:28: 'jobs.checkpoints.host' gives a path longer than 4095 bytes inside the project "
     "directory\n"
     "envpin: hint: shorten it, or move the project to a directory with a shorter path\n"},
    {"slurm_checkpoints_name_too_long", "envpin: 1\nname: x\njobs: {slurm: {checkpoints: /s/" X240 X16 "}}\n",
     "envpin: error: envpin.yaml:3:29: 'jobs.slurm.checkpoints' holds a name of 256 bytes, longer than a file name may "
     "be (255 bytes)\n"
     "envpin: hint: shorten that part of the path\n"},
    {"allow_secrets_name_too_long", "envpin: 1\nname: x\ncontext: {allow_secrets: [" X240 X16 ".env]}\n",
     "envpin: error: envpin.yaml:3:27: 'context.allow_secrets item' holds a name of 260 bytes, longer than a file name "
     "may be (255 bytes)\n"
     "envpin: hint: shorten that part of the path\n"},
    {"paths_name_too_long", "envpin: 1\nname: x\npaths: {data: /d/" X240 X16 "}\n",
     "envpin: error: envpin.yaml:3:15: 'paths.data' holds a name of 256 bytes, longer than a file name may be (255 "
     "bytes)\n"
     "envpin: hint: shorten that part of the path\n"},
    // Host directories the jobs write into: never the root or a system directory, however spelt.
    {"jobs_logs_root", "envpin: 1\nname: x\njobs: {logs: /}\n",
     "envpin: error: envpin.yaml:3:14: 'jobs.logs' must not be the system directory '/' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'logs'\n"},
    {"jobs_logs_etc_dot", "envpin: 1\nname: x\njobs: {logs: /./etc}\n",
     "envpin: error: envpin.yaml:3:14: 'jobs.logs' must not be the system directory '/etc' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'logs'\n"},
    {"jobs_logs_usr_slashes", "envpin: 1\nname: x\njobs: {logs: //usr/}\n",
     "envpin: error: envpin.yaml:3:14: 'jobs.logs' must not be the system directory '/usr' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'logs'\n"},
    {"jobs_logs_climbs_to_root", "envpin: 1\nname: x\njobs: {logs: /etc/..}\n",
     "envpin: error: envpin.yaml:3:14: 'jobs.logs' must not be the system directory '/' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'logs'\n"},
    {"jobs_logs_under_proc", "envpin: 1\nname: x\njobs: {logs: /proc/self/fd}\n",
     "envpin: error: envpin.yaml:3:14: 'jobs.logs' must not be the system directory '/proc/self/fd' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'logs'\n"},
    {"jobs_checkpoints_host_var", "envpin: 1\nname: x\njobs: {checkpoints: {host: /var/}}\n",
     "envpin: error: envpin.yaml:3:28: 'jobs.checkpoints.host' must not be the system directory '/var' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'checkpoints'\n"},
    {"jobs_checkpoints_host_home", "envpin: 1\nname: x\njobs: {checkpoints: {host: //home/.}}\n",
     "envpin: error: envpin.yaml:3:28: 'jobs.checkpoints.host' must not be the system directory '/home' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'checkpoints'\n"},
    {"jobs_checkpoints_host_boot", "envpin: 1\nname: x\njobs: {checkpoints: {host: /boot/ck}}\n",
     "envpin: error: envpin.yaml:3:28: 'jobs.checkpoints.host' must not be the system directory '/boot/ck' or under it\n"
     "envpin: hint: use a directory of the project's own, such as 'checkpoints'\n"},
    // dev.servers (issue 51): nothing may bind another address than 127.0.0.1, take the port or the
    // token out of envpin's hands, or hide a word envpin does not fill.
    {"dev_idle_stop_not_a_duration", "envpin: 1\nname: x\ndev: {idle_stop: soon, servers: []}\n",
     "envpin: error: envpin.yaml:3:18: 'dev.idle_stop' must be a duration from 1 s to 168 h, found 'soon'\n"
     "envpin: hint: write it as seconds or with a unit: 30s, 10m, 1h\n"},
    {"dev_binds_every_address",
     "envpin: 1\nname: x\ndev: {servers: [{name: nb, kind: jupyter, command: [jupyter, notebook, \"--ip=0.0.0.0\"]}]}\n",
     "envpin: error: envpin.yaml:3:72: dev.servers 'nb' command binds '--ip=0.0.0.0', another address than 127.0.0.1\n"
     "envpin: hint: leave the address to envpin (it binds 127.0.0.1; reach it from elsewhere through an SSH forward); for kind command write {host}\n"},
    {"dev_binds_ipv6_any",
     "envpin: 1\nname: x\ndev: {servers: [{name: web, port: 9000, command: [x, \"[::]\", \"{host}\", \"{port}\"]}]}\n",
     "envpin: error: envpin.yaml:3:54: dev.servers 'web' command binds '[::]', another address than 127.0.0.1\n"
     "envpin: hint: leave the address to envpin (it binds 127.0.0.1; reach it from elsewhere through an SSH forward); for kind command write {host}\n"},
    {"dev_jupyter_token_flag",
     "envpin: 1\nname: x\ndev: {servers: [{name: nb, command: [jupyter, notebook, --NotebookApp.token=abc]}]}\n",
     "envpin: error: envpin.yaml:3:57: dev.servers 'nb' command sets '--NotebookApp.token=abc', which envpin sets for a jupyter server\n"
     "envpin: hint: remove it: envpin binds 127.0.0.1 on dev.servers.port and hands Jupyter a token of its own\n"},
    {"dev_jupyter_remote_access",
     "envpin: 1\nname: x\ndev: {servers: [{name: nb, kind: jupyter, command: [jupyter, lab, --ServerApp.allow_remote_access=True]}]}\n",
     "envpin: error: envpin.yaml:3:67: dev.servers 'nb' command sets '--ServerApp.allow_remote_access=True', which envpin sets for a jupyter server\n"
     "envpin: hint: remove it: envpin binds 127.0.0.1 on dev.servers.port and hands Jupyter a token of its own\n"},
    // Issue 61: by rule, a trait of these names on any class, and a config file, which could set them.
    {"dev_jupyter_kernel_ip",
     "envpin: 1\nname: x\ndev: {servers: [{name: nb, kind: jupyter, command: [jupyter, lab, --KernelManager.ip=0]}]}\n",
     "envpin: error: envpin.yaml:3:67: dev.servers 'nb' command sets '--KernelManager.ip=0', which envpin sets for a jupyter server\n"
     "envpin: hint: remove it: envpin binds 127.0.0.1 on dev.servers.port and hands Jupyter a token of its own\n"},
    {"dev_jupyter_config_file",
     "envpin: 1\nname: x\ndev: {servers: [{name: nb, kind: jupyter, command: [jupyter, lab, --config=c.py]}]}\n",
     "envpin: error: envpin.yaml:3:67: dev.servers 'nb' command sets '--config=c.py', which envpin sets for a jupyter server\n"
     "envpin: hint: remove it: envpin binds 127.0.0.1 on dev.servers.port and hands Jupyter a token of its own\n"},
    {"dev_tensorboard_bind_all",
     "envpin: 1\nname: x\ndev: {servers: [{name: tb, kind: tensorboard, command: [tensorboard, --bind_all]}]}\n",
     "envpin: error: envpin.yaml:3:70: dev.servers 'tb' command sets '--bind_all', which envpin sets for a tensorboard server\n"
     "envpin: hint: remove it: envpin binds 127.0.0.1 on dev.servers.port and passes dev.servers.logdir\n"},
    {"dev_command_without_host",
     "envpin: 1\nname: x\ndev: {servers: [{name: web, port: 8000, command: [python3, -m, http.server, \"{port}\"]}]}\n",
     "envpin: error: envpin.yaml:3:51: dev.servers 'web' command does not name {host}: envpin could not make it listen on 127.0.0.1 at dev.servers.port\n"
     "envpin: hint: pass both to the program, e.g. [python3, -m, http.server, --bind, '{host}', '{port}']\n"},
    {"dev_command_unknown_word",
     "envpin: 1\nname: x\ndev: {servers: [{name: web, port: 8000, command: [python3, app.py, \"{host}\", \"{port}\", \"{cmd}\"]}]}\n",
     "envpin: error: envpin.yaml:3:88: dev.servers 'web' command has '{cmd}', which envpin does not fill\n"
     "envpin: hint: write {host}, {port} or {token_file}, or quote the braces another way\n"},
    {"dev_command_without_port",
     "envpin: 1\nname: x\ndev: {servers: [{name: web, command: [python3, app.py, \"{host}\", \"{port}\"]}]}\n",
     "envpin: error: envpin.yaml:3:17: dev.servers 'web' has no port\n"
     "envpin: hint: add 'port: 8000' (the port its {port} word gets on the host's 127.0.0.1)\n"},
    {"dev_jupyter_through_a_shell",
     "envpin: 1\nname: x\ndev: {servers: [{name: nb, kind: jupyter, command: [sh, -c, \"jupyter notebook\"]}]}\n",
     "envpin: error: envpin.yaml:3:53: dev.servers 'nb' command starts with 'sh', not a Jupyter server\n"
     "envpin: hint: write [jupyter, notebook], [jupyter, lab] or [jupyter-lab]; for another program use kind: command\n"},
    {"dev_server_name", "envpin: 1\nname: x\ndev: {servers: [{name: \"a b\", kind: jupyter}]}\n",
     "envpin: error: envpin.yaml:3:24: dev.servers.name 'a b' is not a name of letters, digits, '-' and '_'\n"
     "envpin: hint: name it e.g. 'notebook' (at most 32 characters, starting with a letter or digit)\n"},
    {"dev_same_port", "envpin: 1\nname: x\ndev: {servers: [{name: nb, kind: jupyter}, {name: nb2, kind: jupyter}]}\n",
     "envpin: error: envpin.yaml:3:44: dev.servers 'nb2' and 'nb' both take port 8888\n"
     "envpin: hint: give each server its own port\n"},
    {"dev_same_name", "envpin: 1\nname: x\ndev: {servers: [{name: nb}, {name: nb, port: 8889}]}\n",
     "envpin: error: envpin.yaml:3:36: dev.servers has two servers named 'nb' (the first at line 3)\n"
     "envpin: hint: rename one of them\n"},
    {"dev_privileged_port",
     "envpin: 1\nname: x\ndev: {servers: [{name: web, port: 80, command: [\"{host}\", \"{port}\"]}]}\n",
     "envpin: error: envpin.yaml:3:35: 'dev.servers.port' must be between 1024 and 65535, found 80\n"},
    {"dev_logdir_not_tensorboard", "envpin: 1\nname: x\ndev: {servers: [{name: nb, kind: jupyter, logdir: runs}]}\n",
     "envpin: error: envpin.yaml:3:51: dev.servers.logdir is for kind tensorboard, not jupyter\n"
     "envpin: hint: remove it, or set kind: tensorboard\n"},
    {"dev_server_without_name", "envpin: 1\nname: x\ndev: {servers: [{kind: jupyter}]}\n",
     "envpin: error: envpin.yaml:3:17: a dev.servers item has no name\n"
     "envpin: hint: add 'name: notebook' (it names the server in envpin dev)\n"},
};

INSTANTIATE_TEST_SUITE_P(All, ManifestError, testing::ValuesIn(kErrors),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Manifest, HugeAndBrokenInputIsALocatedErrorNotACrash) {
  // 30 KB in a field that std::regex used to match recursively (a segfault).
  EXPECT_EQ(error_of("envpin: 1\nname: x\napt: [" + std::string(30000, 'a') + "]\n"),
            "envpin: error: envpin.yaml:3:7: 'apt item' is 30000 bytes long, more than 4096\n"
            "envpin: hint: shorten it; no manifest value needs that much\n");
  // A 1 MB GPU name: refused by size before any did-you-mean.
  EXPECT_EQ(error_of("envpin: 1\nname: x\nos: " + std::string(1 << 16, 'u') + "\n").substr(0, 52),
            "envpin: error: envpin.yaml:3:5: 'os' is 65536 bytes ");
  std::string list = "envpin: 1\nname: x\nsecrets: [";
  for (int i = 0; i < 10001; ++i) list += "S" + std::to_string(i) + ",";
  EXPECT_EQ(error_of(list + "]\n"), "envpin: error: envpin.yaml:3:10: 'secrets' has 10001 items, more than 10000\n");
  EXPECT_EQ(error_of("envpin: 1\nname: \"caf\xc3\"\n"),
            "envpin: error: envpin.yaml:2:11: the manifest is not valid UTF-8 (the byte 0xc3)\n"
            "envpin: hint: save the manifest as UTF-8 text\n");
  EXPECT_EQ(error_of(std::string("envpin: 1\nname: x\0\n", 20)),
            "envpin: error: envpin.yaml:2:8: a NUL byte in the manifest\n"
            "envpin: hint: save the manifest as UTF-8 text\n");
}

TEST(Manifest, SpecialFilesAreNeverRead) {
  const fs::path dir = test_dir("fifo-test");
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir / "envpin.yaml").c_str(), 0644), 0);
  ASSERT_EQ(::mkfifo((dir / "req.txt").c_str(), 0644), 0);
  try {
    load((dir / "envpin.yaml").string());
    FAIL() << "expected an error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "cannot read manifest: not a regular file");
  }
  EXPECT_EQ(error_of("envpin: 1\nname: x\npython: {version: '3.11', requirements: req.txt}\n", dir),
            "envpin: error: envpin.yaml:3:41: requirements file 'req.txt' is not a regular file\n"
            "envpin: hint: point it at a requirements.txt\n");
  fs::remove_all(dir);
}

TEST(Manifest, ContainerPathsAreNormalised) {
  const Manifest m =
      parse("envpin: 1\nname: x\nworkdir: /srv/app//./x/\njobs: {checkpoints: /ck/}\n", "envpin.yaml", ".");
  EXPECT_EQ(m.workdir.value, "/srv/app/x");
  EXPECT_EQ(m.jobs->checkpoints.value, "/ck");
}

TEST(Manifest, MissingFile) {
  try {
    load("/nonexistent/envpin.yaml");
    FAIL() << "expected an error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(diag::format(e),
              "envpin: error: /nonexistent/envpin.yaml: cannot read manifest: no such file\n"
              "envpin: hint: create it (see examples/) or pass its path with --manifest\n");
  }
}

TEST(Manifest, RequirementsFileErrorsNameTheirLine) {
  const fs::path dir = test_dir("req-test");
  fs::create_directories(dir);
  std::ofstream(dir / "req.txt") << "# pinned\nnumpy==1.26.4\ntorch=2.4\n";
  EXPECT_EQ(error_of("envpin: 1\nname: x\npython: {version: '3.11', requirements: req.txt}\n", dir),
            "envpin: error: req.txt:3:6: invalid package spec 'torch=2.4': '=' is not a version operator; use '=='\n"
            "envpin: hint: write it as pip does, e.g. 'numpy==1.26.4'\n");
  std::ofstream(dir / "req.txt") << "--index-url https://x\nnumpy\n";
  EXPECT_EQ(
      error_of("envpin: 1\nname: x\npython: {version: '3.11', requirements: req.txt}\n", dir),
      "envpin: error: req.txt:1:1: pip options in a requirements file are not supported: '--index-url https://x'\n"
      "envpin: hint: set the index with python.index in the manifest and list only packages here\n");
  std::ofstream(dir / "req.txt") << "numpy==1.26.4  # inline comment\nrich ; python_version < '3.12'\n";
  const Manifest m =
      parse("envpin: 1\nname: x\npython: {version: '3.11', requirements: req.txt}\n", "envpin.yaml", dir);
  ASSERT_EQ(m.python->requirement_lines.size(), 2u);
  EXPECT_EQ(m.python->requirement_lines[0].value.pinned(), "1.26.4");
  EXPECT_EQ(m.python->requirement_lines[1].value.marker, "python_version < '3.12'");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace envpin::manifest

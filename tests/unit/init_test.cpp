// SPDX-License-Identifier: Apache-2.0
// envpin init's readers, each input translated whole and compared with the manifest it gives.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/conda_pypi.hpp"
#include "init/init.hpp"
#include "manifest/load.hpp"
#include "manifest/requirement.hpp"
#include "secrets/rules.hpp"
#include "test_dir.hpp"

namespace envpin::init {
namespace {

namespace fs = std::filesystem;

class Init : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir("init-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  // The manifest, which must also be one envpin reads.
  std::string manifest(const Draft& d, std::vector<std::string> gpus = {}) {
    const std::string text = write_manifest(d, {"demo", std::move(gpus), std::nullopt});
    EXPECT_NO_THROW(manifest::parse(text, "envpin.yaml", dir_)) << text;
    return text;
  }
  fs::path dir_;
};

// A reader records a line's refusal and goes on: the first one, thrown, for the tests that look at it.
void raise_first(const Draft& d) {
  if (!d.refusals.empty()) throw d.refusals.front();
}

TEST_F(Init, RequirementsInPipsOwnSyntax) {
  write("base.txt", "numpy>=1.26,<2.1  # arrays\nrequests[socks]==2.32.3\n");
  const fs::path req = write("requirements.txt",
                             "--index-url https://pypi.example.org/simple\n"
                             "--extra-index-url https://download.pytorch.org/whl/cu121\n"
                             "-r base.txt\n"
                             "-c constraints.txt\n"
                             "torch==2.4.1 \\\n    --hash=sha256:0123\n"
                             "tomli; python_version < \"3.11\"\n"
                             "-e .\n"
                             "mylib @ https://example.org/mylib-1.0.tar.gz\n"
                             "\n# a comment\n");
  Draft d;
  read_requirements(req, d);
  EXPECT_EQ(
      manifest(d),
      "# Written by `envpin init` from requirements.txt, base.txt.\n"
      "# Each value says where it came from. Review it, then run `envpin lock` (pins every version)\n"
      "# and `envpin generate`.\n"
      "envpin: 1\n"
      "name: \"demo\"\n"
      "python:\n"
      "  version: \"3.11\"  # none of the inputs names a Python version: envpin's default, change it if needed\n"
      "  index: \"https://pypi.example.org/simple\"  # requirements.txt:1\n"
      "  extra_index:\n"
      "    - \"https://download.pytorch.org/whl/cu121\"  # requirements.txt:2\n"
      "  packages:\n"
      "    - \"numpy>=1.26,<2.1\"  # base.txt:1\n"
      "    - \"requests[socks]==2.32.3\"  # base.txt:2\n"
      "    - \"torch==2.4.1\"  # requirements.txt:5\n"
      "    - \"tomli; python_version < \\\"3.11\\\"\"  # requirements.txt:7\n"
      "# Not carried over:\n"
      "#   requirements.txt:4: the constraints file 'constraints.txt' is not carried: envpin lock pins every version "
      "the listed packages resolve to\n"
      "#   requirements.txt:5: '--hash=sha256:0123' dropped: envpin lock records hashes itself\n"
      "#   requirements.txt:8: '-e .' is local code installed editable: not a package envpin pins (envpin's "
      "containers mount the project at its workdir); install it there if it must be installed\n"
      "#   requirements.txt:9: 'mylib @ https://example.org/mylib-1.0.tar.gz' is a URL or path requirement: left "
      "out (envpin pins from package indexes)\n");
}

TEST_F(Init, RequirementsIncludeCycleIsAnError) {
  write("a.txt", "-r b.txt\nnumpy\n");
  write("b.txt", "-r a.txt\n");
  Draft d;
  try {
    read_requirements(dir_ / "a.txt", d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "requirements files include each other: a.txt -> b.txt -> a.txt");
  }
}

TEST_F(Init, CondaEnvironmentIsTranslated) {
  // The shape of a typical ML team's environment.yml (conda channels, CUDA from conda, a pip
  // section), as the issue describes it.
  const fs::path env = write("environment.yml",
                             "name: research\n"
                             "channels: [pytorch, nvidia, conda-forge, defaults]\n"
                             "dependencies:\n"
                             "  - python=3.11\n"
                             "  - pytorch::pytorch=2.1.0\n"
                             "  - pytorch-cuda=12.1\n"
                             "  - torchvision=0.16\n"
                             "  - numpy>=1.26,<2\n"
                             "  - scikit-learn 1.3.2\n"
                             "  - cudnn\n"
                             "  - ffmpeg\n"
                             "  - r-base\n"
                             "  - mkl\n"
                             "  - pip\n"
                             "  - pip:\n"
                             "      - transformers>=4.30\n"
                             "      - wandb\n"
                             "      - -e .\n");
  Draft d;
  read_conda(env, d);
  EXPECT_EQ(
      manifest(d, {"A100"}),
      "# Written by `envpin init` from environment.yml.\n"
      "# Each value says where it came from. Review it, then run `envpin lock` (pins every version)\n"
      "# and `envpin generate`.\n"
      "envpin: 1\n"
      "name: \"demo\"\n"
      "cuda:\n"
      "  version: \"12.1\"  # environment.yml:6 (pytorch-cuda=12.1)\n"
      "  cudnn: true  # environment.yml:10 (cudnn)\n"
      "  gpus: [\"A100\"]  # --gpu\n"
      "python:\n"
      "  version: \"3.11\"  # environment.yml:4 (python=3.11)\n"
      "  extra_index:\n"
      "    - \"https://download.pytorch.org/whl/cu121\"  # environment.yml:6 (pytorch-cuda=12.1)\n"
      "  packages:\n"
      "    - \"torch==2.1.0\"  # environment.yml:5 (pytorch::pytorch=2.1.0)\n"
      "    - \"torchvision==0.16.*\"  # environment.yml:7 (torchvision=0.16)\n"
      "    - \"numpy>=1.26,<2\"  # environment.yml:8 (numpy>=1.26,<2)\n"
      "    - \"scikit-learn==1.3.2\"  # environment.yml:9 (scikit-learn 1.3.2)\n"
      "    - \"transformers>=4.30\"  # environment.yml:16 (pip)\n"
      "    - \"wandb\"  # environment.yml:17 (pip)\n"
      "apt:\n"
      "  - \"ffmpeg\"  # environment.yml:11 (ffmpeg)\n"
      "# Not carried over:\n"
      "#   environment.yml:12 (r-base): 'r-base' is a conda package with no PyPI or Debian name envpin knows: left out\n"
      "#   environment.yml:13 (mkl): left out: the wheels bring their own BLAS\n"
      "#   environment.yml:14 (pip): left out: pip comes with the Python envpin installs\n"
      "#   environment.yml:18 (pip): '-e .' is local code installed editable: not a package envpin pins (envpin's containers mount the project at its workdir); install it there if it must be installed\n");
}

// Issue 34, item 2: an exact Python keeps its patch; a range's lowest Python is said to be that,
// and a dead one is named.
TEST_F(Init, PythonKeepsItsPrecision) {
  Draft exact;
  read_conda(write("environment.yml", "dependencies:\n  - python=3.8.18\n"), exact);
  ASSERT_TRUE(exact.python);
  EXPECT_EQ(exact.python->value, "3.8.18");
  EXPECT_TRUE(exact.notes.empty());
  Draft range;
  read_conda(write("environment.yml", "dependencies:\n  - python>=3.8\n"), range);
  ASSERT_TRUE(range.python);
  EXPECT_EQ(range.python->value, "3.8");
  EXPECT_EQ(range.python->from, "environment.yml:2 (python>=3.8), the lowest it allows");
  ASSERT_EQ(range.notes.size(), 1u);
  EXPECT_NE(range.notes[0].find("Python 3.8 reached its end of life in October 2024"), std::string::npos);
  // A bounded range, as facebookresearch/demucs's environment-cuda.yml and NVlabs/edm's
  // environment.yml write it: its lowest minor, never the default 3.11 it excludes.
  for (const auto& [spec, lowest] : std::vector<std::pair<std::string, std::string>>{
           {"python>=3.8,<3.10", "3.8"}, {"python >=3.9, < 3.12", "3.9"}, {"python>=3.10,!=3.10.2,<3.13", "3.10"}}) {
    Draft bounded;
    read_conda(write("environment.yml", "dependencies:\n  - " + spec + "\n"), bounded);
    ASSERT_TRUE(bounded.python) << spec;
    EXPECT_EQ(bounded.python->value, lowest) << spec;
    EXPECT_EQ(bounded.python->from, "environment.yml:2 (" + spec + "), the lowest it allows");
  }
  Draft alive;
  read_pyproject(write("pyproject.toml", "[project]\nname = \"x\"\nrequires-python = \">=3.11\"\n"), alive, {});
  ASSERT_TRUE(alive.python);
  EXPECT_EQ(alive.python->value, "3.11");
  EXPECT_TRUE(alive.notes.empty());
}

// No input names a Python and the pinned torch has no wheels for envpin's default (torch 1.13.1 stops
// at 3.10: DiffBIR's and AudioGPT's requirements.txt): the newest Python that torch serves, said so.
TEST_F(Init, DefaultPythonFollowsThePinnedTorch) {
  Draft old;
  read_requirements(write("requirements.txt", "numpy\ntorch==1.13.1+cu116\n"), old);
  settle(old);
  ASSERT_TRUE(old.python);
  EXPECT_EQ(old.python->value, "3.10");
  EXPECT_EQ(old.python->from,
            "none of the inputs names a Python version: 3.10, the newest torch 1.13.1+cu116 has wheels for "
            "(requirements.txt:2)");
  Draft seven;
  read_requirements(write("requirements.txt", "torch==1.7.0\n"), seven);
  settle(seven);
  ASSERT_TRUE(seven.python);
  EXPECT_EQ(seven.python->value, "3.8");
  // A torch that serves the default, or none pinned: no input names one, and the default stays.
  for (const std::string text : {"torch==2.4.1\n", "torch>=1.8\n", "numpy\n"}) {
    Draft d;
    read_requirements(write("requirements.txt", text), d);
    settle(d);
    EXPECT_FALSE(d.python) << text;
  }
}

// Patterns from real Dockerfiles (issue 34, item 4): DeepSpeed's docker/Dockerfile (ENV
// PYTORCH_VERSION then pip install torch==${PYTORCH_VERSION}, OpenMPI built with make, useradd),
// Grounded-Segment-Anything's (apt ffmpeg=7:* git=1:*), kohya_ss's (ENV UV_INDEX), detectron2's
// (a shell comment after pip install, -f .../cu111/torch_stable.html), stable-diffusion-webui-docker's
// (a build stage FROM alpine/git). Nothing is dropped silently, and nothing invented.
TEST_F(Init, DockerfileBuildStepsVariablesAndStages) {
  const fs::path file =
      write("Dockerfile",
            "FROM alpine/git AS download\n"
            "RUN apk add --no-cache git && git clone https://example.org/repo /repo\n"
            "FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\n"
            "ARG TORCH=2.1.2\n"
            "ENV PYTORCH_VERSION=${TORCH} UV_INDEX=pytorch=https://download.pytorch.org/whl/cu121\n"
            "RUN apt-get update && apt-get install -y ffmpeg=7:* git=1:* wget \\\n"
            "    && rm -rf /var/lib/apt/lists/*\n"
            "RUN pip install torch==${PYTORCH_VERSION} tensorboard cmake  # cmake from apt is too old\n"
            "RUN pip install torchvision==0.16.2 -f https://download.pytorch.org/whl/cu121/torch_stable.html\n"
            "RUN cd /tmp && wget -q https://example.org/openmpi.tar.gz && tar xzf openmpi.tar.gz && \\\n"
            "    ./configure && make -j && make install\n"
            "RUN useradd --create-home dev && pip install ${UNSET_THING}\n");
  Draft d;
  read_dockerfile(file, d);
  EXPECT_TRUE(d.refusals.empty());
  std::vector<std::string> packages, apt;
  for (const Value& v : d.packages) packages.push_back(v.value);
  for (const Value& v : d.apt) apt.push_back(v.value);
  EXPECT_EQ(packages, (std::vector<std::string>{"torch==2.1.2", "tensorboard", "cmake", "torchvision==0.16.2"}));
  EXPECT_EQ(apt, (std::vector<std::string>{"ffmpeg", "git", "wget"}));
  ASSERT_EQ(d.extra_index.size(), 1u);
  EXPECT_EQ(d.extra_index[0].value, "https://download.pytorch.org/whl/cu121");
  const auto noted = [&](const std::string& text) {
    return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return n.find(text) != n.npos; });
  };
  EXPECT_TRUE(noted("Dockerfile:1: the build stage 'alpine/git AS download' is not the final image's")) << d.notes[0];
  EXPECT_TRUE(noted("Dockerfile:6: the apt version pattern 'ffmpeg=7:*' is not carried: 'ffmpeg' is kept"));
  EXPECT_TRUE(noted("Dockerfile:6: the apt version pattern 'git=1:*' is not carried"));
  EXPECT_TRUE(
      noted("Dockerfile:9: the find-links page 'https://download.pytorch.org/whl/cu121/torch_stable.html' is "
            "carried as its index"));
  EXPECT_TRUE(noted("Dockerfile:10: RUN 'wget', 'tar xzf', './configure', 'make', 'make install' not carried"));
  EXPECT_TRUE(noted("Dockerfile:12: RUN 'useradd' not carried"));
  EXPECT_TRUE(noted("(envpin's image has its own non-root user: user: in envpin.yaml)"));
  EXPECT_TRUE(noted("Dockerfile:12: '${UNSET_THING}' holds a shell expansion the Dockerfile gives no value"));
  // The build stage's git clone, the apt cleanup and the cd are no notes of the final image.
  EXPECT_FALSE(noted("'apk add'"));
  EXPECT_FALSE(noted("'cd"));
  EXPECT_FALSE(noted("'rm"));
  for (const std::string& n : d.notes) EXPECT_EQ(n.find("too old"), std::string::npos) << n;
}

// Patterns from real conda files (issue 34, item 4): aqlaboratory/openfold's environment.yml (cuda
// without a version beside pytorch-cuda=12.4, aria2, bioconda's hmmer, hhsuite and kalign2, gcc=12.4),
// facebookresearch/esm's (bioconda::hmmer==3.3.2) and RosettaCommons/RFdiffusion's SE3nv.yml
// (dgl-cuda11.1 from the dglteam channel). A tool becomes its Debian package or is left out with
// the reason: never a PyPI pin of a name that is no PyPI project.
TEST_F(Init, CondaToolsAreDebianPackagesOrLeftOut) {
  Draft d;
  read_conda(write("environment.yml",
                   "channels: [conda-forge, bioconda, pytorch, nvidia]\n"
                   "dependencies:\n"
                   "  - python=3.10\n"
                   "  - cuda\n"
                   "  - gcc=12.4\n"
                   "  - aria2\n"
                   "  - bioconda::hmmer==3.3.2\n"
                   "  - bioconda::hhsuite\n"
                   "  - bioconda::kalign2==2.04\n"
                   "  - bioconda::some-aligner=1.0\n"
                   "  - dglteam::dgl-cuda11.1\n"
                   "  - pytorch=2.5.1\n"
                   "  - pytorch-cuda=12.4\n"
                   "  - numpy\n"),
             d);
  EXPECT_TRUE(d.refusals.empty());
  std::vector<std::string> packages, apt;
  for (const Value& v : d.packages) packages.push_back(v.value);
  for (const Value& v : d.apt) apt.push_back(v.value);
  EXPECT_EQ(packages, (std::vector<std::string>{"torch==2.5.1", "numpy"}));
  EXPECT_EQ(apt, (std::vector<std::string>{"gcc", "aria2", "hmmer", "hhsuite"}));
  ASSERT_TRUE(d.cuda);
  EXPECT_EQ(d.cuda->value, "12.4");  // pytorch-cuda's; the bare cuda line names none
  ASSERT_TRUE(d.flavor);
  EXPECT_EQ(d.flavor->value, "devel");
  EXPECT_EQ(d.flavor->from, "environment.yml:4 (cuda), which brings nvcc");
  const auto noted = [&](const std::string& text) {
    return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return n.find(text) != n.npos; });
  };
  EXPECT_TRUE(noted("environment.yml:5 (gcc=12.4): conda's version '=12.4' is not carried: apt installs the OS's gcc"));
  EXPECT_TRUE(noted("environment.yml:7 (bioconda::hmmer==3.3.2): conda's version '==3.3.2' is not carried"));
  EXPECT_TRUE(noted("environment.yml:9 (bioconda::kalign2==2.04): left out: Debian's kalign is Kalign 3"));
  EXPECT_TRUE(
      noted("environment.yml:10 (bioconda::some-aligner=1.0): 'some-aligner' is a bioconda package envpin "
            "knows no Debian or PyPI name for: left out"));
  EXPECT_TRUE(
      noted("environment.yml:11 (dglteam::dgl-cuda11.1): 'dgl-cuda11.1' is a conda build for one CUDA "
            "version"));
  for (const std::string& n : d.notes) EXPECT_EQ(n.find("no CUDA version in it"), std::string::npos) << n;
  // The bare cuda line alone: the environment uses CUDA, the version is envpin's choice.
  Draft bare;
  read_conda(write("environment.yml", "dependencies:\n  - cuda-nvcc\n  - numpy\n"), bare);
  ASSERT_TRUE(bare.cuda);
  EXPECT_EQ(bare.cuda->value, "auto");
  EXPECT_EQ(bare.cuda->from, "environment.yml:2 (cuda-nvcc), no version: envpin chooses the toolkit for the fleet");
}

// Issue 50, item 4: a conda name reaches PyPI only through the table or the shipped list of names
// that are the same project on both (init/conda_pypi.cpp). torchtriton is pytorch-nightly's conda
// package whose PyPI name was taken over in the December 2022 dependency-confusion attack (PyTorch's
// advisory "Compromised PyTorch-nightly dependency chain between December 25th and December 30th,
// 2022"); backports is conda-forge's namespace package; lmdb and blosc are conda's C libraries.
TEST_F(Init, CondaNamesReachPyPIOnlyWhenKnownToBeTheSameProject) {
  Draft d;
  read_conda(write("environment.yml",
                   "channels: [pytorch-nightly, conda-forge]\n"
                   "dependencies:\n"
                   "  - pytorch-nightly::torchtriton\n"
                   "  - backports\n"
                   "  - lmdb=0.9.31\n"
                   "  - python-lmdb=1.4.1\n"
                   "  - scipy=1.11.4\n"
                   "  - seaborn\n"
                   "  - huggingface_hub\n"
                   "  - bioconda::pysam=0.22.0\n"
                   "  - pyg::pyg\n"
                   "  - dask-core\n"),
             d);
  EXPECT_TRUE(d.refusals.empty());
  std::vector<std::string> packages;
  for (const Value& v : d.packages) packages.push_back(v.value);
  EXPECT_EQ(packages, (std::vector<std::string>{"lmdb==1.4.1", "scipy==1.11.4", "seaborn", "huggingface-hub",
                                                "pysam==0.22.0", "torch-geometric", "dask"}));
  const auto noted = [&](const std::string& text) {
    return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return n.find(text) != n.npos; });
  };
  EXPECT_TRUE(
      noted("environment.yml:3 (pytorch-nightly::torchtriton): 'torchtriton' is a conda package envpin "
            "cannot match to a PyPI project"));
  EXPECT_TRUE(noted("environment.yml:4 (backports): 'backports' is a conda package envpin cannot match"));
  EXPECT_TRUE(noted("environment.yml:5 (lmdb=0.9.31): left out: conda's lmdb is the C library"));
}

TEST(CondaPyPI, TheListsAreSortedNormalizedAndDisjoint) {
  for (const auto list : {envpin::init::detail::conda_same_grayskull(), envpin::init::detail::conda_same_feedstock()}) {
    EXPECT_TRUE(std::is_sorted(list.begin(), list.end()));
    EXPECT_EQ(std::adjacent_find(list.begin(), list.end()), list.end());
    for (const std::string_view n : list) EXPECT_EQ(envpin::manifest::normalize_name(n), n);
  }
  for (const std::string_view n : envpin::init::detail::conda_same_feedstock())
    EXPECT_FALSE(std::binary_search(envpin::init::detail::conda_same_grayskull().begin(),
                                    envpin::init::detail::conda_same_grayskull().end(), n))
        << n;
  // Spelled as conda-forge spells them (underscores, capitals): the same name.
  EXPECT_TRUE(envpin::init::detail::same_project_on_pypi("typing_extensions"));
  EXPECT_TRUE(envpin::init::detail::same_project_on_pypi("PyYAML"));
  EXPECT_FALSE(envpin::init::detail::same_project_on_pypi("torchtriton"));
}

// uv and Poetry say which index serves which package, and for which extra and platform (issue 34):
// fish-speech's [tool.uv.sources] (one explicit cu index per extra), WhisperX's (cpu on macOS, cu128
// on linux), SimpleTuner's Poetry source "pytorch", TransformerLens's Poetry alternatives
// ([{version, python}, ...]). Only the index that applies is carried; each version bound keeps
// its Python as a marker; uv's overrides are named.
TEST_F(Init, UvAndPoetrySourcesAndAlternatives) {
  const std::string uv =
      "[project]\nname = \"x\"\nrequires-python = \">=3.10\"\ndependencies = [\"torch==2.8.0\", \"numpy\"]\n"
      "[project.optional-dependencies]\ncpu = []\ncu128 = []\n"
      "[tool.uv]\noverride-dependencies = [\"protobuf>=3.20.0,<6.0.0\"]\n"
      "[tool.uv.sources]\n"
      "torch = [\n"
      "  { index = \"pytorch-cpu\", extra = \"cpu\" },\n"
      "  { index = \"pytorch-cu128\", extra = \"cu128\" },\n"
      "  { index = \"pytorch-mac\", marker = \"sys_platform == 'darwin'\" },\n"
      "]\n"
      "[[tool.uv.index]]\nname = \"pytorch-cpu\"\nurl = \"https://download.pytorch.org/whl/cpu\"\nexplicit = true\n"
      "[[tool.uv.index]]\nname = \"pytorch-cu128\"\nurl = \"https://download.pytorch.org/whl/cu128\"\n"
      "explicit = true\n"
      "[[tool.uv.index]]\nname = \"pytorch-mac\"\nurl = \"https://download.pytorch.org/whl/cpu\"\nexplicit = true\n";
  Draft d;
  read_pyproject(write("pyproject.toml", uv), d, {"cu128"});
  EXPECT_TRUE(d.refusals.empty());
  ASSERT_EQ(d.extra_index.size(), 1u);
  EXPECT_EQ(d.extra_index[0].value, "https://download.pytorch.org/whl/cu128");
  const auto noted = [&](const Draft& draft, const std::string& text) {
    return std::any_of(draft.notes.begin(), draft.notes.end(),
                       [&](const std::string& n) { return n.find(text) != n.npos; });
  };
  EXPECT_TRUE(noted(d,
                    "([[tool.uv.index]] pytorch-cpu): 'https://download.pytorch.org/whl/cpu' is used by no source "
                    "of the included groups and extras on linux/amd64: left out"));
  EXPECT_TRUE(noted(d,
                    "([[tool.uv.index]] pytorch-cu128) is explicit (only for torch): kept as an extra index, which "
                    "pip consults for every package"));
  EXPECT_TRUE(noted(d, "[tool.uv] override-dependencies is not carried"));
  Draft cpu;
  read_pyproject(write("pyproject.toml", uv), cpu, {"cpu"});
  ASSERT_EQ(cpu.extra_index.size(), 1u);
  EXPECT_EQ(cpu.extra_index[0].value, "https://download.pytorch.org/whl/cpu");

  const std::string poetry =
      "[tool.poetry.dependencies]\n"
      "python = \">=3.8,<4.0\"\n"
      "torch = [{version = \"<2.6\", python = \">=3.8,<3.9\"}, {version = \">=2.6\", python = \">=3.9\"}]\n"
      "gradio = {version = \">=4.0.0\", python = \">=3.10\"}\n"
      "torchvision = {version = \"^0.22\", source = \"pytorch\"}\n"
      "[[tool.poetry.source]]\nname = \"pytorch\"\nurl = \"https://download.pytorch.org/whl/cu128\"\n"
      "priority = \"explicit\"\n";
  Draft p;
  read_pyproject(write("pyproject.toml", poetry), p, {});
  settle(p);
  std::vector<std::string> packages;
  for (const Value& v : p.packages) packages.push_back(v.value);
  // Python 3.8 (the lowest the range allows): torch's first alternative holds; gradio keeps its
  // marker, which pip evaluates as Poetry did.
  EXPECT_EQ(packages,
            (std::vector<std::string>{"torch<2.6; python_version >= \"3.8\" and python_version < \"3.9\"",
                                      "gradio>=4.0.0; python_version >= \"3.10\"", "torchvision>=0.22,<0.23"}));
  EXPECT_TRUE(noted(p, "'torch>=2.6; python_version >= \"3.9\"' left out: envpin.yaml lists torch once"));
  ASSERT_EQ(p.extra_index.size(), 1u);
  EXPECT_EQ(p.extra_index[0].value, "https://download.pytorch.org/whl/cu128");
  EXPECT_TRUE(noted(p, "([[tool.poetry.source]] pytorch) is explicit (only for torchvision)"));
}

// kohya_ss's Dockerfile builds its virtual environment in a build stage and copies it into the
// final one: that stage's pip installs are the image's, its apt packages (compilers) are not.
TEST_F(Init, DockerfileVenvBuiltInAStageTheFinalImageCopies) {
  Draft d;
  read_dockerfile(write("Dockerfile",
                        "FROM python:3.11-slim-bookworm AS base\n"
                        "FROM base AS build\n"
                        "RUN apt-get update && apt-get install -y build-essential\n"
                        "RUN uv pip install torch==2.7.0 numpy==2.1.0\n"
                        "FROM base AS final\n"
                        "RUN apt-get update && apt-get install -y libgl1\n"
                        "COPY --from=build /venv /venv\n"),
                  d);
  std::vector<std::string> packages, apt;
  for (const Value& v : d.packages) packages.push_back(v.value);
  for (const Value& v : d.apt) apt.push_back(v.value);
  EXPECT_EQ(packages, (std::vector<std::string>{"torch==2.7.0", "numpy==2.1.0"}));
  EXPECT_EQ(apt, (std::vector<std::string>{"libgl1"}));
  EXPECT_NE(std::find(d.notes.begin(), d.notes.end(),
                      "Dockerfile:3: apt installs in a build stage are not carried: the final image copies only files "
                      "from it"),
            d.notes.end());
}

// Lines pip itself refuses are refused, located; an index option after a requirement, which pip
// ignores there, is said to be ignored (Open-Sora's requirements/requirements-cu121.txt, kohya_ss's
// torch line, DiffBIR's pasted pip command).
TEST_F(Init, RequirementLinesAsPipReadsThem) {
  Draft d;
  read_requirements(write("requirements.txt",
                          "pip3 install torch==2.1.0 --index-url https://download.pytorch.org/whl/cu118\n"
                          "torch==1.12.1+cu116 torchvision==0.13.1+cu116\n"
                          "xformers==0.0.23 --index-url https://download.pytorch.org/whl/cu121\n"
                          "numpy >= 1.26 ; python_version >= \"3.9\"\n"
                          "scipy==1.13.0 -U --no-deps\n"),
                    d);
  ASSERT_EQ(d.refusals.size(), 3u);
  EXPECT_EQ(d.refusals[2].message(), "pip has no option '-U' on a requirement line and refuses the file at it");
  EXPECT_EQ(d.refusals[2].where()->line, 5);
  EXPECT_EQ(d.refusals[0].message(), "the line is a shell command, not a requirement: pip refuses the file at it");
  EXPECT_EQ(d.refusals[0].where()->line, 1);
  EXPECT_EQ(d.refusals[1].message(),
            "the line holds more than one requirement: pip reads one per line and refuses the file at it");
  EXPECT_EQ(d.refusals[1].where()->line, 2);
  ASSERT_EQ(d.packages.size(), 2u);
  EXPECT_EQ(d.packages[0].value, "xformers==0.0.23");
  EXPECT_EQ(d.packages[1].value, "numpy>=1.26; python_version >= \"3.9\"");
  EXPECT_TRUE(d.extra_index.empty());
  EXPECT_EQ(d.notes, (std::vector<std::string>{
                         "requirements.txt:3: '--index-url https://download.pytorch.org/whl/cu121' not carried: pip "
                         "ignores an index option on a requirement line, so it never chose the index; put it on a "
                         "line of its own if it should"}));
}

// facebookresearch/ImageBind's requirements.txt: --extra-index-url .../cu113 with torch==1.13.0,
// which never had cu113 wheels: pip takes PyPI's build, and so does the draft, said so.
TEST_F(Init, ATorchIndexWithoutThePinnedTorchIsLeftOut) {
  Draft d;
  read_requirements(
      write("requirements.txt", "--extra-index-url https://download.pytorch.org/whl/cu113\ntorch==1.13.0\n"), d);
  settle(d);
  EXPECT_TRUE(d.extra_index.empty());
  EXPECT_EQ(d.notes, (std::vector<std::string>{
                         "requirements.txt:1: the index 'https://download.pytorch.org/whl/cu113' has no torch 1.13.0 "
                         "(its variants are cu116, cu117): pip installs PyPI's build instead, so the index is left "
                         "out and envpin picks the variant"}));
  Draft kept;  // an index that has the pinned torch stays
  read_requirements(
      write("requirements.txt", "--extra-index-url https://download.pytorch.org/whl/cu117\ntorch==1.13.0\n"), kept);
  settle(kept);
  EXPECT_EQ(kept.extra_index.size(), 1u);
}

// conda had builds pip never had: NVlabs/eg3d's pytorch=1.11.0 with cudatoolkit=11.1 (PyPI's index
// has cu102, cu113, cu115) takes the nearest newer CUDA's wheels, said so; facebookresearch/esm's
// openmm=7.5.1 is a conda build, and PyPI's pdbfixer, built for PyPI's OpenMM 8, goes with it.
TEST_F(Init, CondaBuildsPipNeverHad) {
  Draft d;
  read_conda(write("environment.yml",
                   "dependencies:\n  - python=3.8\n  - pytorch=1.11.0\n  - cudatoolkit=11.1\n"
                   "  - conda-forge::openmm=7.5.1\n  - conda-forge::pdbfixer\n  - numpy\n"),
             d);
  EXPECT_TRUE(d.refusals.empty());
  ASSERT_EQ(d.extra_index.size(), 1u);
  EXPECT_EQ(d.extra_index[0].value, "https://download.pytorch.org/whl/cu113");
  ASSERT_TRUE(d.cuda);
  EXPECT_EQ(d.cuda->value, "auto");  // no nvidia/cuda image of 11.3 envpin supports: the fleet decides
  std::vector<std::string> packages;
  for (const Value& v : d.packages) packages.push_back(v.value);
  EXPECT_EQ(packages, (std::vector<std::string>{"torch==1.11.0", "numpy"}));
  const auto noted = [&](const std::string& text) {
    return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return n.find(text) != n.npos; });
  };
  EXPECT_TRUE(
      noted("environment.yml:4 (cudatoolkit=11.1): torch 1.11.0 has no CUDA 11.1 wheels on "
            "download.pytorch.org (conda's build for it has no pip form): its cu113 wheels, the nearest newer "
            "CUDA 11.3, are taken"));
  EXPECT_TRUE(noted("OpenMM '=7.5.1' is a conda build"));
  EXPECT_TRUE(noted("'pdbfixer' left out: PyPI's pdbfixer is built for PyPI's OpenMM 8"));
}

TEST_F(Init, CondaRefusals) {
  Draft a;
  read_conda(write("py2.yml", "dependencies:\n  - python=2.7\n"), a);
  EXPECT_EQ(a.refusals.size(), 1u);
  Draft b;
  try {
    read_conda(write("cu.yml", "dependencies:\n  - pytorch=2.1.0\n  - pytorch-cuda=12.4\n"), b);
    raise_first(b);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(),
              "torch 2.1.0 (cu.yml:2 (pytorch=2.1.0)) never had CUDA 12.4 wheels (cu.yml:3 (pytorch-cuda=12.4)); "
              "its variants are cu118, cu121");
  }
  Draft c;
  try {
    read_conda(write("bad.yml", "dependencies:\n  - [unclosed\n"), c);
    raise_first(c);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    ASSERT_TRUE(e.where().has_value());
    EXPECT_EQ(e.where()->line, 3);
  }
}

TEST_F(Init, PyprojectPep621AndPoetry) {
  const fs::path py = write("pyproject.toml",
                            "[project]\n"
                            "name = \"demo\"\n"
                            "requires-python = \">=3.10\"\n"
                            "dependencies = [\n"
                            "  \"torch>=2.7\",\n"
                            "  \"einops\",\n"
                            "]\n"
                            "[project.optional-dependencies]\n"
                            "dev = [\"pytest>=8\"]\n"
                            "docs = [\"sphinx\"]\n"
                            "[[tool.uv.index]]\n"
                            "name = \"pytorch-cu128\"\n"
                            "url = \"https://download.pytorch.org/whl/cu128\"\n");
  Draft d;
  read_pyproject(py, d, {"dev"});
  EXPECT_EQ(manifest(d),
            "# Written by `envpin init` from pyproject.toml.\n"
            "# Each value says where it came from. Review it, then run `envpin lock` (pins every version)\n"
            "# and `envpin generate`.\n"
            "envpin: 1\n"
            "name: \"demo\"\n"
            "python:\n"
            "  version: \"3.10\"  # pyproject.toml:3 (requires-python >=3.10, the lowest it allows)\n"
            "  extra_index:\n"
            "    - \"https://download.pytorch.org/whl/cu128\"  # pyproject.toml:11 ([[tool.uv.index]] pytorch-cu128)\n"
            "  packages:\n"
            "    - \"torch>=2.7\"  # pyproject.toml:5\n"
            "    - \"einops\"  # pyproject.toml:6\n"
            "    - \"pytest>=8\"  # pyproject.toml:9 (dev)\n"
            "# Not carried over:\n"
            "#   pyproject.toml:3 (requires-python >=3.10): python.version is 3.10, the lowest the range allows, and "
            "Python 3.10 reached its end of life in October 2026; the range allows newer ones: set python.version to "
            "one the pinned packages have wheels for\n"
            "#   pyproject.toml: the optional group 'docs' is not included (add it with --extra docs)\n");
  const fs::path poetry = write("poetry.toml",
                                "[tool.poetry.dependencies]\n"
                                "python = \"^3.10\"\n"
                                "numpy = \"^1.26.4\"\n"
                                "scipy = \"~1.11\"\n"
                                "rich = \"13.7.1\"\n"
                                "zero = \"^0.2.3\"\n"
                                "local = { path = \"../local\" }\n");
  Draft p;
  read_pyproject(poetry, p, {});
  ASSERT_EQ(p.packages.size(), 4u);
  EXPECT_EQ(p.python->value, "3.10");
  EXPECT_EQ(p.packages[0].value, "numpy>=1.26.4,<2.0");
  EXPECT_EQ(p.packages[1].value, "scipy>=1.11,<1.12");  // in the file's order, not toml++'s sorted keys
  EXPECT_EQ(p.packages[2].value, "rich==13.7.1");
  EXPECT_EQ(p.packages[3].value, "zero>=0.2.3,<0.3");
  // Poetry's python range is named as the lowest it allows, past its end of life, as requires-python's is.
  EXPECT_NE(p.notes[0].find("poetry.toml:2 (python ^3.10): python.version is 3.10"), std::string::npos) << p.notes[0];
  EXPECT_NE(p.notes[1].find("'local' comes from a path, git or URL"), std::string::npos) << p.notes[1];
}

TEST_F(Init, ConflictingInputsNameBothOrPrefer) {
  write("requirements.txt", "torch==2.1.0\n");
  write("environment.yml", "dependencies:\n  - pytorch=2.3.0\n");
  Draft d;
  read_requirements(dir_ / "requirements.txt", d);
  try {
    read_conda(dir_ / "environment.yml", d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(),
              "torch is 'torch==2.1.0' in requirements.txt:1 but 'torch==2.3.0' in environment.yml:2 (pytorch=2.3.0)");
  }
  Draft p;
  p.prefer = "environment.yml";
  read_requirements(dir_ / "requirements.txt", p);
  read_conda(dir_ / "environment.yml", p);
  ASSERT_EQ(p.packages.size(), 1u);
  EXPECT_EQ(p.packages[0].value, "torch==2.3.0");
  // What --prefer overrode is named (issue 34, item 9), whichever file was read first.
  EXPECT_EQ(p.notes, (std::vector<std::string>{"requirements.txt:1: 'torch==2.1.0' gives way to 'torch==2.3.0' "
                                               "(environment.yml:2 (pytorch=2.3.0)): --prefer environment.yml"}));
  Draft q;
  q.prefer = "requirements.txt";
  read_requirements(dir_ / "requirements.txt", q);
  read_conda(dir_ / "environment.yml", q);
  EXPECT_EQ(q.packages[0].value, "torch==2.1.0");
  EXPECT_EQ(q.notes, (std::vector<std::string>{"environment.yml:2 (pytorch=2.3.0): 'torch==2.3.0' gives way to "
                                               "'torch==2.1.0' (requirements.txt:1): --prefer requirements.txt"}));
}

TEST_F(Init, OneDistributionTwiceInOneFileIsCombined) {
  // As haotian-liu/LLaVA's pyproject.toml lists sentencepiece and einops: once bare, once pinned.
  const fs::path py = write(
      "pyproject.toml", "[project]\ndependencies = [\"einops\", \"numpy>=1.24\", \"einops==0.6.1\", \"numpy<2\"]\n");
  Draft d;
  read_pyproject(py, d, {});
  ASSERT_EQ(d.packages.size(), 2u);
  EXPECT_EQ(d.packages[0].value, "einops==0.6.1");
  EXPECT_EQ(d.packages[1].value, "numpy>=1.24,<2");
  EXPECT_EQ(d.packages[1].from, "pyproject.toml:2, pyproject.toml:2");
}

TEST_F(Init, DockerfileFinalStageAptAndPip) {
  write("requirements.txt", "transformers>=4.36\n");
  const fs::path df = write("Dockerfile",
                            "# syntax=docker/dockerfile:1\n"
                            "ARG CUDA=12.1.1\n"
                            "FROM --platform=linux/amd64 nvidia/cuda:${CUDA}-cudnn8-devel-ubuntu22.04 AS build\n"
                            "ENV DEBIAN_FRONTEND=noninteractive \\\n"
                            "    HF_TOKEN=hf_"
                            "abcdefghijklmnopqrstuvwxyzABCDEFGH\n"
                            "RUN apt-get update && apt-get install -y --no-install-recommends \\\n"
                            "      git \\\n"
                            "      # a comment inside the continuation\n"
                            "      ffmpeg=7:4.4.2-0ubuntu0.22.04.1 \"libgl1\" $EXTRA \\\n"
                            "    && rm -rf /var/lib/apt/lists/*\n"
                            "COPY requirements.txt .\n"
                            "RUN pip install --no-cache-dir -r requirements.txt\n"
                            "RUN python3 -m pip install -U 'numpy<2' -e . ; conda install -y faiss-gpu\n"
                            "COPY .env config/ /app/\n"
                            "FROM build\n"
                            "CMD [\"python3\", \"train.py\"]\n");
  Draft d;
  read_dockerfile(df, d);
  settle(d);
  EXPECT_EQ(
      manifest(d, {"A100"}),
      "# Written by `envpin init` from Dockerfile, requirements.txt.\n"
      "# Each value says where it came from. Review it, then run `envpin lock` (pins every version)\n"
      "# and `envpin generate`.\n"
      "envpin: 1\n"
      "name: \"demo\"\n"
      "os: \"ubuntu22.04\"  # Dockerfile:3 (FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04)\n"
      "cuda:\n"
      "  version: \"12.1\"  # Dockerfile:3 (FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04)\n"
      "  flavor: \"devel\"  # Dockerfile:3 (FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04)\n"
      "  cudnn: true  # Dockerfile:3 (FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04)\n"
      "  gpus: [\"A100\"]  # --gpu\n"
      "python:\n"
      "  version: \"3.11\"  # none of the inputs names a Python version: envpin's default, change it if needed\n"
      "  packages:\n"
      "    - \"transformers>=4.36\"  # requirements.txt:1\n"
      "    - \"numpy<2\"  # Dockerfile:13\n"
      "apt:\n"
      "  - \"git\"  # Dockerfile:6\n"
      "  - \"ffmpeg=7:4.4.2-0ubuntu0.22.04.1\"  # Dockerfile:6\n"
      "  - \"libgl1\"  # Dockerfile:6\n"
      "# Not carried over:\n"
      "#   Dockerfile:4: ENV DEBIAN_FRONTEND, HF_TOKEN not carried: set them under env: in envpin.yaml (secrets: for a "
      "credential); values are not copied. It holds what looks like a credential: rotate it, it is in the image's history\n"
      "#   Dockerfile:6: the apt package '$EXTRA' is not a Debian package name envpin can pin (an expansion, a release or a pattern): left out\n"
      "#   Dockerfile:13: '-e .' is local code installed editable: not a package envpin pins (envpin's containers mount the project at its workdir); install it there if it must be installed\n"
      "#   Dockerfile:13: conda installs in the Dockerfile are not read: export the environment ('conda env export "
      "--from-history') and pass it with --from\n"
      "#   Dockerfile:14: COPY '.env' puts a secret file into the image; envpin keeps secrets out of the context: declare it "
      "under secrets: for run time\n"
      "#   Dockerfile:16: CMD not carried: what runs is envpin run's command or jobs: in envpin.yaml\n");
  // The credential itself is never written anywhere.
  for (const std::string& n : d.notes) EXPECT_EQ(n.find("hf_abc"), std::string::npos) << n;
}

// Issue 50, item 5: a requirements file the Dockerfile COPYs from its context into the image is
// read from the context (it was "not beside the Dockerfile: pass it with --from", and its packages
// were missing), a glob included; one a COPY --from another stage brings is not; and pip flags
// that change what is installed are named, never dropped silently.
TEST_F(Init, DockerfileFollowsCopiesAndNamesPipFlags) {
  write("requirements_a.txt", "numpy==1.26.4\n");
  write("requirements_b.txt", "requests==2.31.0\n");
  fs::create_directories(dir_ / "deps");
  write("deps/extra.txt", "six==1.16.0\n");
  write("other.txt", "rich==13.7.0\n");
  const fs::path df =
      write("Dockerfile",
            "FROM python:3.11-slim AS base\n"
            "COPY other.txt /stage/other.txt\n"
            "FROM python:3.11-slim\n"
            "COPY requirements_*.txt /tmp/\n"
            "RUN pip install -r /tmp/requirements_*.txt\n"
            "COPY deps/extra.txt /opt/x.txt\n"
            "COPY --from=base /stage/other.txt /opt/other.txt\n"
            "RUN pip install -r /opt/x.txt -r /opt/other.txt && pip install foo==1.0 --no-deps --pre\n");
  Draft d;
  read_dockerfile(df, d);
  settle(d);
  const std::string m = manifest(d, {});
  EXPECT_NE(m.find("    - \"numpy==1.26.4\"  # requirements_a.txt:1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("    - \"requests==2.31.0\"  # requirements_b.txt:1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("    - \"six==1.16.0\"  # extra.txt:1\n"), std::string::npos) << m;
  EXPECT_EQ(m.find("rich"), std::string::npos) << "another stage's file is not the context's: " << m;
  EXPECT_NE(m.find("#   Dockerfile:8: pip installs '/opt/other.txt', which is not beside the Dockerfile: pass it "
                   "with --from\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("#   Dockerfile:8: pip's --no-deps is not carried: envpin lock resolves the packages of this line "
                   "with their dependencies"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("#   Dockerfile:8: pip's --pre is not carried: envpin lock takes a pre-release only where a pin "
                   "names one"),
            std::string::npos)
      << m;
}

// Issue 50, item 5: options that change what pip installs are named in one word too
// (--only-binary=:all: was dropped without a word), and one install's --index-url carried as the
// project's index says that its scope grew.
TEST_F(Init, DockerfilePipOptionsInOneWordAndAnIndexsScopeAreNamed) {
  Draft d;
  read_dockerfile(write("Dockerfile",
                        "FROM python:3.11-slim\n"
                        "RUN pip install --only-binary=:all: numpy==1.26.4 && \\\n"
                        "    pip install --index-url=https://mirror.example/simple foo==1.0\n"),
                  d);
  settle(d);
  const std::string m = manifest(d, {});
  EXPECT_NE(m.find("#   Dockerfile:2: the pip option '--only-binary' is not carried"), std::string::npos) << m;
  EXPECT_EQ(m.find(":all:"), std::string::npos) << m;
  EXPECT_NE(m.find("#   Dockerfile:2: the index 'https://mirror.example/simple' was this pip install's only index; "
                   "carried as python.index, which envpin lock uses for every package"),
            std::string::npos)
      << m;
}

// Issue 34, item 3: the --index-url of one `pip install torch` line is that line's, not the
// project's only index (the generated Dockerfile installed every package from download.pytorch.org).
TEST_F(Init, DockerfileTorchIndexKeepsItsScope) {
  Draft d;
  read_dockerfile(write("Dockerfile",
                        "FROM python:3.11-slim\n"
                        "RUN pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/cu121 && \\\n"
                        "    pip install numpy==1.26.4\n"),
                  d);
  EXPECT_FALSE(d.index);
  ASSERT_EQ(d.extra_index.size(), 1u);
  EXPECT_EQ(d.extra_index[0].value, "https://download.pytorch.org/whl/cu121");
  ASSERT_EQ(d.packages.size(), 2u);
  EXPECT_NE(d.notes.front().find("is this pip install's only (for torch): kept as an extra index"), std::string::npos)
      << d.notes.front();
}

// Issue 34, item 6: PEP 735 dependency groups are read by name (and include each other) or
// named as left out; a path without a leading '.' or '/' is a path, not a bad version.
TEST_F(Init, DependencyGroupsAndPathsAreNotSilent) {
  const fs::path py = write("pyproject.toml",
                            "[project]\nname = \"x\"\ndependencies = [\"numpy==1.26.4\"]\n"
                            "[dependency-groups]\ntest = [\"pytest==8.3.3\"]\n"
                            "dev = [{include-group = \"test\"}, \"ruff==0.6.9\"]\n");
  Draft without;
  read_pyproject(py, without, {});
  EXPECT_EQ(without.packages.size(), 1u);
  EXPECT_EQ(without.groups, (std::set<std::string>{"dev", "test"}));
  bool noted = false;
  for (const auto& n : without.notes)
    noted =
        noted || n.find("the dependency group 'dev' is not included (add it with --extra dev)") != std::string::npos;
  EXPECT_TRUE(noted);
  Draft with;
  read_pyproject(py, with, {"dev"});
  std::vector<std::string> names;
  for (const auto& p : with.packages) names.push_back(p.value);
  EXPECT_EQ(names, (std::vector<std::string>{"numpy==1.26.4", "pytest==8.3.3", "ruff==0.6.9"}));
  Draft paths;
  read_requirements(write("requirements.txt", "src/pkg\ndist/tool-1.0-py3-none-any.whl\nnumpy\n"), paths);
  ASSERT_EQ(paths.notes.size(), 2u);
  for (const auto& n : paths.notes) EXPECT_NE(n.find("is a URL or path requirement"), std::string::npos) << n;
}

// Issue 34, item 2: a plain OS image whose apt installs python3 runs that OS's Python, not
// envpin's default (Ubuntu 22.04's python3 is 3.10).
TEST_F(Init, DockerfileOsPythonIsTheProjects) {
  Draft d;
  read_dockerfile(write("Dockerfile",
                        "FROM ubuntu:22.04\nRUN apt-get update && apt-get install -y python3 python3-pip\n"
                        "RUN pip3 install numpy==1.26.4\n"),
                  d);
  ASSERT_TRUE(d.python);
  EXPECT_EQ(d.python->value, "3.10");
  EXPECT_EQ(d.python->from, "Dockerfile:2 (ubuntu22.04's python3)");
  Draft bookworm;
  read_dockerfile(write("Dockerfile", "FROM debian:12\nRUN apt-get install -y python3-venv\n"), bookworm);
  ASSERT_TRUE(bookworm.python);
  EXPECT_EQ(bookworm.python->value, "3.11");
  Draft no_python;  // no python3 from apt: nothing is claimed
  read_dockerfile(write("Dockerfile", "FROM ubuntu:24.04\nRUN apt-get install -y curl\n"), no_python);
  EXPECT_FALSE(no_python.python);
}

TEST_F(Init, DockerfileGivesWayToTheOtherInputs) {
  write("environment.yml", "dependencies:\n  - python=3.10\n  - pytorch=2.3.0\n  - pytorch-cuda=12.1\n");
  const fs::path df =
      write("Dockerfile", "FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime\nRUN pip install torch==2.1.0\n");
  Draft d;
  read_conda(dir_ / "environment.yml", d);
  read_dockerfile(df, d);
  settle(d);
  ASSERT_EQ(d.packages.size(), 1u);
  EXPECT_EQ(d.packages[0].value, "torch==2.3.0");
  EXPECT_EQ(d.cuda->value, "12.1");
  EXPECT_EQ(d.python->value, "3.10");
  EXPECT_EQ(d.cudnn->from,
            "Dockerfile:1 (FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime)");  // no other input names it
  const std::vector<std::string> expected = {
      "Dockerfile:1 (FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime) suggests torch==2.1.0; the other inputs' torch is kept",
      "Dockerfile:1 (FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime) suggests cuda.version '11.8'; kept '12.1' from "
      "environment.yml:4 (pytorch-cuda=12.1)",
      "Dockerfile:1 (FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime): the image also ships the torchvision and "
      "torchaudio built for its torch: not carried; list them under python.packages if the project imports them",
      "Dockerfile:2: 'torch==2.1.0' conflicts with the other inputs: left out (they win over a Dockerfile)"};
  EXPECT_EQ(d.notes, expected);

  // A python image, with CUDA from another input: the OS stays nvidia/cuda's.
  Draft p;
  read_conda(dir_ / "environment.yml", p);
  read_dockerfile(write("Dockerfile.py", "FROM python:3.12-slim-bookworm\n"), p);
  settle(p);
  EXPECT_EQ(p.python->value, "3.10");
  EXPECT_FALSE(p.os);
  EXPECT_EQ(p.notes.back(),
            "Dockerfile.py:1 (FROM python:3.12-slim-bookworm) suggests os 'debian12'; with CUDA (environment.yml:4 "
            "(pytorch-cuda=12.1)) envpin builds on nvidia/cuda's Ubuntu image instead");
}

TEST_F(Init, EnvpinsOwnDockerfileIsNotAnInput) {
  // `envpin init --force` in a project envpin already generated must not read its own output.
  write("Dockerfile",
        "# syntax=docker/dockerfile:1\n# Generated by `envpin generate` from envpin.yaml; do not edit, regenerate "
        "instead.\nFROM --platform=linux/amd64 python:3.11-slim-bookworm\n");
  write("requirements.txt", "numpy\n");
  EXPECT_EQ(inputs_in(dir_), std::vector<fs::path>{dir_ / "requirements.txt"});
  Draft d;
  try {
    read_dockerfile(dir_ / "Dockerfile", d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "Dockerfile was written by envpin generate: it is the manifest's output, not an input");
  }
  write("Dockerfile", "FROM python:3.12-slim\n");
  EXPECT_EQ(inputs_in(dir_), (std::vector<fs::path>{dir_ / "requirements.txt", dir_ / "Dockerfile"}));
}

TEST_F(Init, DockerfileBasesAndRefusals) {
  const auto from = [&](const std::string& line) {
    Draft d;
    read_dockerfile(write("Dockerfile", line + "\n"), d);
    settle(d);
    return d;
  };
  EXPECT_EQ(from("FROM python:3.11.9-slim-bullseye").python->value, "3.11");
  EXPECT_EQ(from("FROM python:3.11.9-slim-bullseye").os->value, "debian11");
  EXPECT_EQ(from("from ubuntu:24.04").os->value, "ubuntu24.04");
  EXPECT_EQ(from("FROM docker.io/library/debian:bookworm-slim").os->value, "debian12");
  EXPECT_EQ(from("FROM continuumio/miniconda3:24.1.2-0").base->value, "continuumio/miniconda3:24.1.2-0");
  EXPECT_FALSE(from("FROM scratch").base);
  EXPECT_EQ(
      from("FROM $IMAGE").notes,
      std::vector<std::string>{"Dockerfile:1: FROM '$IMAGE' uses an ARG without a default: the base is left to you"});
  try {
    from("RUN apt-get install -y git");
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "no FROM instruction: this is not a Dockerfile");
    EXPECT_EQ(e.where()->line, 1);
  }
  try {
    from("FROM debian:12\nRUN echo \x1b[31m");
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.where()->line, 2);
  }
}

TEST_F(Init, CredentialsNeverReachTheManifest) {
  const fs::path req =
      write("requirements.txt",
            "--index-url https://ci:s3cr3t@pypi.example.org/simple\n"
            "--extra-index-url https://__token__@gitlab.example.org/api/v4/projects/1/packages/pypi/simple\n"
            "torch==2.4.1 --hash=sha256:0123 --config-settings=token=hf_"
            "abcdefghijklmnopqrstuvwxyzABCDEFGH\n");
  Draft d;
  read_requirements(req, d);
  const std::string text = manifest(d);
  EXPECT_EQ(text.find("s3cr3t"), std::string::npos) << text;
  EXPECT_EQ(text.find("__token__"), std::string::npos) << text;
  EXPECT_EQ(text.find("hf_abc"), std::string::npos) << text;
  EXPECT_NE(text.find("  index: \"https://pypi.example.org/simple\"  # requirements.txt:1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("#   requirements.txt:1: the index URL's credentials are left out"), std::string::npos) << text;
  EXPECT_NE(text.find("token=<credential>"), std::string::npos) << text;
  // A requirements line that includes a secret file is refused, and the file is not read.
  write(".env", "HF_TOKEN=x\n");
  const fs::path bad = write("bad.txt", "numpy\n-r .env\n");
  Draft e;
  try {
    read_requirements(bad, e);
    raise_first(e);
    FAIL() << "no error";
  } catch (const diag::Error& err) {
    EXPECT_EQ(err.message(), "the line includes '.env', which is a secret file, as a requirements file");
    EXPECT_EQ(err.where()->line, 2);
  }
}

// Issue 31: nothing outside the project is read. An -r or -c line, or the input itself, that
// leads (symlinks followed) outside the input's project directory is refused at that line.
TEST_F(Init, ReadsNothingOutsideTheProject) {
  fs::create_directories(dir_ / "p");
  write("outside.txt", "canary-outside==1.0\n");
  fs::create_symlink("../outside.txt", dir_ / "p/inside.txt");
  fs::create_directory_symlink("..", dir_ / "p/up");
  ASSERT_EQ(::mkfifo((dir_ / "p/fifo.txt").c_str(), 0600), 0);
  const auto refused = [&](const std::string& text, int line) {
    write("p/requirements.txt", text);
    Draft d;
    try {
      read_requirements(dir_ / "p/requirements.txt", d);
      raise_first(d);
      ADD_FAILURE() << "no error for " << text;
    } catch (const diag::Error& e) {
      ASSERT_TRUE(e.where()) << text;
      EXPECT_EQ(e.where()->file, (dir_ / "p/requirements.txt").generic_string()) << text;
      EXPECT_EQ(e.where()->line, line) << text << ": " << e.message();
      EXPECT_EQ(e.where()->column, 1) << text;
      EXPECT_FALSE(e.hint().empty()) << text;
      EXPECT_EQ(e.message().find("canary"), std::string::npos) << e.message();
    }
    for (const Value& v : d.packages) EXPECT_EQ(v.value.find("canary"), std::string::npos) << text;
  };
  refused("numpy\n-r ../outside.txt\n", 2);
  refused("-r /etc/passwd\n", 1);
  refused("-r ../../../../../../../../../../etc/passwd\n", 1);
  refused("--requirement=" + (dir_ / "outside.txt").string() + "\n", 1);
  refused("-c ../outside.txt\n", 1);
  refused("--constraint /etc/passwd\n", 1);
  refused("-r inside.txt\n", 1);
  refused("-r up/outside.txt\n", 1);
  refused("-r fifo.txt\n", 1);  // a FIFO is refused at the line, never waited on
  refused("-r missing.txt\n", 1);
  write("p/requirements.txt", "-r ../outside.txt\n");
  Draft d;
  try {
    read_requirements(dir_ / "p/requirements.txt", d);
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "the line includes '../outside.txt', which is outside the project's directory");
    EXPECT_EQ(e.hint(), "envpin init reads the project's own files only: copy it into the project");
  }
  // The input itself, a link out of its directory.
  fs::remove(dir_ / "p/requirements.txt");
  fs::create_symlink("../outside.txt", dir_ / "p/requirements.txt");
  Draft e;
  EXPECT_THROW(read_requirements(dir_ / "p/requirements.txt", e), diag::Error);
  EXPECT_TRUE(e.packages.empty());
}

// A secret file is refused by where a name leads as well as by the name.
TEST_F(Init, SecretFilesAreRefusedByWhereTheyLead) {
  write(".env", "TOKEN=canary-secret-31\n");
  fs::create_directories(dir_ / ".ssh");
  write(".ssh/requirements.txt", "canary-ssh==1\n");
  fs::create_symlink(".env", dir_ / "requirements.txt");
  Draft d;
  try {
    read_requirements(dir_ / "requirements.txt", d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "requirements.txt leads to the secret file '.env'; envpin init does not read it");
  }
  EXPECT_TRUE(d.notes.empty());
  fs::create_symlink(".env", dir_ / "inc.txt");
  fs::create_symlink(".ssh/requirements.txt", dir_ / "ssh.txt");
  for (const char* line : {"-r inc.txt", "-r ssh.txt", "-c inc.txt"}) {
    const fs::path base = write("base.txt", "numpy\n" + std::string(line) + "\n");
    Draft e;
    try {
      read_requirements(base, e);
      raise_first(e);
      ADD_FAILURE() << "no error for " << line;
    } catch (const diag::Error& err) {
      EXPECT_EQ(err.where()->line, 2) << line;
      EXPECT_EQ(err.message().find("canary"), std::string::npos) << err.message();
    }
  }
}

// Credentials in any input are "<credential>" wherever the draft quotes the line, and an index
// URL carries none into python.index.
TEST_F(Init, CredentialsAreRedactedEverywhere) {
  const fs::path req = write("requirements.txt",
                             "-e git+https://alice:gh-secret-1@git.example.com/org/repo.git#egg=repo\n"
                             "pkg @ https://bob:pw-secret-2@files.example.com/pkg-1.0.tar.gz\n"
                             "-c https://carol:pw-secret-3@files.example.com/constraints.txt\n"
                             "torch==2.4.1 --config-settings=build-key=plain-secret-4\n"
                             "machine pypi.example.com login dave password pw-secret-5\n"
                             "--index-url https://pypi.example.org/simple?token=q-secret-6&region=eu\n"
                             "--extra-index-url https://pypi2.example.org/simple/?Access_Token=q-secret-7\n"
                             "--extra-index-url https://pypi3.example.org/simple?sig=q-secret-8\n"
                             "numpy; python_version == 'https://u:m-secret-9@x'\n");
  Draft d;
  read_requirements(req, d);
  const std::string text = manifest(d);
  for (const char* secret : {"gh-secret-1", "pw-secret-2", "pw-secret-3", "plain-secret-4", "dave", "pw-secret-5",
                             "q-secret-6", "q-secret-7", "q-secret-8", "m-secret-9"})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << "\n" << text;
  EXPECT_NE(text.find("  index: \"https://pypi.example.org/simple?region=eu\"  # requirements.txt:6\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    - \"https://pypi2.example.org/simple/\"  # requirements.txt:7\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("git+https://<credential>@git.example.com"), std::string::npos) << text;
  EXPECT_NE(text.find("--config-settings=build-key=<credential>"), std::string::npos) << text;
  // A netrc line pasted in: pip refuses it (words that read as two requirements); the refusal quotes
  // none of it.
  ASSERT_EQ(d.refusals.size(), 1u);
  EXPECT_EQ(d.refusals[0].where()->line, 5);
  EXPECT_EQ(d.refusals[0].message().find("dave"), std::string::npos);
  // An error line never echoes a URL's password.
  Draft e;
  try {
    read_requirements(write("bad.txt", "--index-url \"https://ci:pw-secret-10@pypi.example.org/simple\"\n"), e);
    raise_first(e);
    FAIL() << "no error";
  } catch (const diag::Error& err) {
    EXPECT_EQ(err.message().find("pw-secret-10"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find("<credential>"), std::string::npos) << err.message();
  }
}

// A long value is cut when quoted: the cut must not leave a redacted "token=<credential>" as
// "token=...", which reads as a credential again (found by envpin_fuzz_init, seed 1).
TEST_F(Init, QuotedValuesCutAfterRedactionStayRedacted) {
  const std::string url = "https://pypi.example.org/simpl" + std::string(82, '\xff') + "e?token=abc122";
  Draft d;
  try {
    read_requirements(write("requirements.txt", "--index-url " + url + "\n"), d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& err) {
    EXPECT_EQ(err.message().find("abc122"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find("bytes)"), std::string::npos) << err.message();  // it was cut
    EXPECT_EQ(secrets::redact(err.message()), err.message());
  }
}

// A single value (here cuda.version) that holds a credential is redacted in the draft as the
// packages are: the manifest refuses it where it is, and shows no secret (envpin_fuzz_init).
TEST_F(Init, ValuesWithACredentialAreRedacted) {
  Draft d;
  read_conda(
      write("environment.yml", "dependencies:\n  - cudatoolkit=11.1git+https://u:pw-secret-11@git.example.com\n"), d);
  const std::string text = write_manifest(d, {"demo", {"A100"}, std::nullopt, ""});
  EXPECT_EQ(text.find("pw-secret-11"), std::string::npos) << text;
  EXPECT_NE(text.find("<credential>"), std::string::npos) << text;
  // With a torch pin, such a value names no wheel variant: no error quotes the line.
  Draft torch;
  EXPECT_NO_THROW(read_conda(write("environment.yml",
                                   "dependencies:\n  - pytorch=1.13.1\n"
                                   "  - cudatoolkit=11.1git+https://u:pw-secret-12@git.example.com\n"),
                             torch));
  EXPECT_EQ(write_manifest(torch, {"demo", {"A100"}, std::nullopt, ""}).find("pw-secret-12"), std::string::npos);
  // A refusal that quotes such a line (two CUDA versions) is redacted too.
  Draft twice;
  try {
    read_conda(write("environment.yml",
                     "dependencies:\n  - cudatoolkit=11.1\n"
                     "  - cudatoolkit=11.1git+https://u:pw-secret-13@git.example.com\n"),
               twice);
    raise_first(twice);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message().find("pw-secret-13"), std::string::npos) << e.message();
  }
}

// Options::schema (the schema's path relative to the manifest, set by the CLI) is the draft's
// first line, the yaml-language-server modeline editors read; without it there is no such line.
TEST_F(Init, TheSchemaLineComesFirstWhenThereIsOne) {
  Draft d;
  read_requirements(write("requirements.txt", "numpy==1.26.4\n"), d);
  Options with{"demo", {}, std::nullopt, ""};
  with.schema = ".envpin/envpin.schema.json";
  const std::string text = write_manifest(d, with);
  EXPECT_TRUE(text.starts_with("# yaml-language-server: $schema=.envpin/envpin.schema.json\n# Written by")) << text;
  EXPECT_NO_THROW(manifest::parse(text, "envpin.yaml", dir_));
  EXPECT_TRUE(write_manifest(d, {"demo", {}, std::nullopt, ""}).starts_with("# Written by"));
}

// A conda CUDA version that is not dotted numbers is not shortened to a "minor": CI's
// envpin_fuzz_init found "cudatoolkit=11.1git+https://<bytes>\x12u:pw@git..." cut before its
// second dot and carried with the credential unredacted (the \x12 hid it from the redactor until
// the draft escaped it). It is carried whole, redacted as shown, and the manifest refuses it.
TEST_F(Init, CondaCudaVersionMustBeDottedNumbers) {
  Draft d;
  read_conda(
      write("environment.yml", "dependencies:\n  - cudatoolkit=11.1git+https://\xff\xff\x12u:pw@git\xfe\xfe.com/x.y\n"),
      d);
  const std::string text = write_manifest(d, {"demo", {"A100"}, std::nullopt, ""});
  EXPECT_EQ(secrets::redact(text), text) << text;
  EXPECT_EQ(text.find("taken as"), std::string::npos) << text;
  EXPECT_EQ(text.find("u:pw"), std::string::npos) << text;
  EXPECT_THROW(manifest::parse(text, "envpin.yaml", dir_), diag::Error);
  // A patch release still is one.
  Draft patch;
  read_conda(write("environment.yml", "dependencies:\n  - cudatoolkit=11.7.0\n"), patch);
  ASSERT_TRUE(patch.cuda.has_value());
  EXPECT_EQ(patch.cuda->value, "11.7");
}

TEST_F(Init, CondaChannelCredentialsAreRedacted) {
  const fs::path env = write("environment.yml",
                             "channels:\n"
                             "  - https://ci:c-secret-1@conda.example.com/private\n"
                             "  - https://conda.example.com/t/tk-c-secret-2/private\n"
                             "dependencies:\n"
                             "  - https://conda.example.com/t/tk-c-secret-3/private::numpy=1.26.4\n"
                             "  - https://ci:c-secret-4@conda.example.com/private::scipy=1.11.4\n"
                             "  - pip:\n"
                             "      - --index-url https://u:c-secret-5@pypi.example.org/simple\n");
  Draft d;
  read_conda(env, d);
  const std::string text = manifest(d);
  for (const char* secret : {"c-secret-1", "c-secret-2", "c-secret-3", "c-secret-4", "c-secret-5"})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << "\n" << text;
  EXPECT_NE(text.find("    - \"numpy==1.26.4\"  # environment.yml:5 (https://conda.example.com/t/<credential>/private::"
                      "numpy=1.26.4)\n"),
            std::string::npos)
      << text;
}

// Poetry's caret and tilde need the version's numbers: one that does not fit 64 bits, or whose
// bound would not, is left out with a note rather than wrapped or clamped into another range.
TEST_F(Init, PoetryVersionsPastSixtyFourBitsAreLeftOut) {
  const fs::path py = write("pyproject.toml",
                            "[tool.poetry.dependencies]\n"
                            "ok = \"^1.2.3\"\n"
                            "big = \"^18446744073709551616.1\"\n"
                            "max = \"^18446744073709551615\"\n"
                            "tilde = \"~1.99999999999999999999999\"\n"
                            "zero = \"^0.0.18446744073709551615\"\n");
  Draft d;
  read_pyproject(py, d, {});
  ASSERT_EQ(d.packages.size(), 1u) << d.packages.back().value;
  EXPECT_EQ(d.packages[0].value, "ok>=1.2.3,<2.0");
  ASSERT_EQ(d.notes.size(), 4u);
  EXPECT_EQ(d.notes[0],
            "pyproject.toml:3: Poetry's '^18446744073709551616.1' for 'big' needs a number past 64 bits: left out");
}

// Each input is read once: a diamond of includes, two files wide and 24 deep, is not read again
// along each of its 2^24 paths. Includes nest at most 32 files deep.
TEST_F(Init, IncludesAreReadOnce) {
  write("top.txt", "-r a0.txt\n-r b0.txt\n");
  for (int i = 0; i < 24; ++i)
    for (const char* side : {"a", "b"})
      write(side + std::to_string(i) + ".txt", "-r a" + std::to_string(i + 1) + ".txt\n-r b" + std::to_string(i + 1) +
                                                   ".txt\npkg-" + side + std::to_string(i) + "==1.0\n");
  write("a24.txt", "-r last.txt\n");
  write("b24.txt", "-r last.txt\n");
  write("last.txt", "last==1.0\n");
  Draft d;
  read_requirements(dir_ / "top.txt", d);
  EXPECT_EQ(d.packages.size(), 49u);
  EXPECT_EQ(d.sources.size(), 52u);
}

TEST_F(Init, IncludesNestAtMost32Deep) {
  for (int i = 0; i < 100; ++i) write("c" + std::to_string(i) + ".txt", "-r c" + std::to_string(i + 1) + ".txt\n");
  write("c100.txt", "last==1.0\n");
  Draft d;
  try {
    read_requirements(dir_ / "c0.txt", d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "the line includes 'c32.txt': requirements files nested more than 32 deep");
    EXPECT_EQ(e.where()->file, (dir_ / "c31.txt").generic_string());
    EXPECT_EQ(e.where()->line, 1);
  }
}

// The manifest's 10,000-entry cap, applied while reading: the package past it is refused at its line.
TEST_F(Init, PackageCapIsAppliedWhileReading) {
  std::string text;
  for (int i = 0; i <= 10000; ++i) text += "pkg-" + std::to_string(i) + "\n";
  Draft d;
  try {
    read_requirements(write("requirements.txt", text), d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "'pkg-10000' would be package 10001; envpin.yaml lists at most 10000");
    EXPECT_EQ(e.where()->line, 10001);
  }
}

// A bidirectional control makes a line read differently from what it holds: refused where it is,
// in any input, before it can reach a note or the draft.
TEST_F(Init, BidirectionalControlsAreRefusedWhereTheyAre) {
  Draft d;
  try {
    read_requirements(write("requirements.txt", "numpy\nscipy\u202e==1\n"), d);
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(),
              "the line holds the bidirectional control U+202E: the line would read differently from what it holds");
    EXPECT_EQ(e.where()->line, 2);
    EXPECT_EQ(e.where()->column, 6);
  }
  EXPECT_THROW(read_pyproject(write("pyproject.toml", "[project]\ndependencies = [\"numpy\u2066\"]\n"), d, {}),
               diag::Error);
  EXPECT_THROW(read_conda(write("environment.yml", "dependencies:\n  - numpy\u200f\n"), d), diag::Error);
  EXPECT_TRUE(d.notes.empty());
  EXPECT_TRUE(d.packages.empty());
  // Written as an escape (YAML's, TOML's), it is one after reading too: shown escaped, never raw.
  Draft e;
  read_conda(write("environment.yml", "dependencies:\n  - \"numpy\\u202e==1\"\n  - \"cudatoolkit=11.1\\u2066\"\n"), e);
  const std::string text = write_manifest(e, {"demo", {"A100"}, std::nullopt});
  EXPECT_EQ(text.find("\u202e"), std::string::npos) << text;
  EXPECT_EQ(text.find("\u2066"), std::string::npos) << text;
  EXPECT_NE(text.find("  version: \"11.1\\u2066\""), std::string::npos) << text;
  EXPECT_NE(text.find("'numpy\\u202e==1' is not a requirement envpin reads"), std::string::npos) << text;
}

TEST_F(Init, CondaSpacesAroundOperatorsAndHostileBytes) {
  // Found by the init fuzzer: "python >= 3.8" lost its version to the build-string split, and a
  // control character in a value reached the manifest text raw.
  write("environment.yml",
        "dependencies:\n  - python >= 3.8\n  - numpy >=1.20, <2\n  - scipy 1.7.1 py38_0\n  - cudatoolkit=11.1\x0c\n");
  Draft d;
  read_conda(dir_ / "environment.yml", d);
  EXPECT_EQ(d.python->value, "3.8");
  ASSERT_EQ(d.packages.size(), 2u);
  EXPECT_EQ(d.packages[0].value, "numpy>=1.20,<2");
  EXPECT_EQ(d.packages[1].value, "scipy==1.7.1");
  const std::string text = write_manifest(d, {"demo", {"A100"}, std::nullopt});
  for (char c : text) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << text;
  EXPECT_NE(text.find("  version: \"11.1\\x0c\""), std::string::npos) << text;
  try {
    manifest::parse(text, "envpin.yaml", dir_);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(e.message(), "'cuda.version' holds the control character 0x0c at byte 5");
    EXPECT_EQ(e.where()->line, 7);  // "  version:" under cuda:
  }
  try {
    read_pyproject(write("pyproject.toml", "[tool.poetry.dependencies]\nx = {optional = tr\x02e}\n"), d, {});
    raise_first(d);
    FAIL() << "no error";
  } catch (const diag::Error& e) {
    EXPECT_EQ(diag::control_at(e.message()), std::string_view::npos) << e.message();
  }
}

}  // namespace
}  // namespace envpin::init

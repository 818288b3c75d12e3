// SPDX-License-Identifier: Apache-2.0
// envpin init's reader for conda environment files: conda names and versions translated to PyPI,
// Debian and CUDA settings, the pip: list read as a requirements file.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

#include "diag/error.hpp"
#include "diag/text.hpp"
#include "init/conda_pypi.hpp"
#include "init/init.hpp"
#include "init/parts.hpp"
#include "manifest/requirement.hpp"
#include "resolve/cuda_tables.hpp"
#include "secrets/rules.hpp"

namespace envpin::init {
namespace {

namespace fs = std::filesystem;
using diag::Error;
using diag::Location;
using namespace detail;

// What a conda package becomes. Names as conda-forge, bioconda and the defaults channel publish
// them (https://conda-forge.org/packages, https://bioconda.github.io, https://anaconda.org/anaconda/
// repo); their PyPI names checked against pypi.org, their Debian names against bookworm itself
// (apt-cache madison on deb.debian.org bookworm main, 2026-12-03: hmmer 3.3.2+dfsg-1, hhsuite
// 3.3.0+ds-7+b2, kalign 1:3.3.5-1, samtools 1.16.1-1, ncbi-blast+ 2.12.0+ds-3+b1, aria2 1.36.0-1,
// ...). A conda name that is neither here nor in conda_pypi.cpp's list of names that are the same
// project on PyPI is left out with a note, never guessed. The conda-forge names below whose PyPI
// project is named differently are from conda-forge's grayskull mapping (regro/cf-graph-countyfair
// mappings/pypi/grayskull_pypi_mapping.json, commit 000b2bc8) or the package's feedstock recipe.
enum class Rule { pypi, apt, cuda, cudnn, skip };
struct CondaName {
  std::string_view conda;
  Rule rule;
  std::string_view target;  // PyPI or Debian name; for skip, why
};
constexpr CondaName kConda[] = {
    {"pytorch", Rule::pypi, "torch"},
    {"pytorch-gpu", Rule::pypi, "torch"},
    {"pytorch-cpu", Rule::pypi, "torch"},
    {"py-opencv", Rule::pypi, "opencv-python"},
    {"opencv", Rule::pypi, "opencv-python"},
    {"tensorflow-gpu", Rule::pypi, "tensorflow"},
    {"matplotlib-base", Rule::pypi, "matplotlib"},
    {"pytables", Rule::pypi, "tables"},
    {"msgpack-python", Rule::pypi, "msgpack"},
    {"python-graphviz", Rule::pypi, "graphviz"},
    {"pyqt", Rule::pypi, "PyQt5"},
    {"matplotlib", Rule::pypi, "matplotlib"},  // matplotlib-base plus a Qt backend
    {"seaborn-base", Rule::pypi, "seaborn"},
    {"seaborn", Rule::pypi, "seaborn"},  // seaborn-base plus statsmodels
    {"astropy-base", Rule::pypi, "astropy"},
    {"astropy", Rule::pypi, "astropy"},  // astropy-base plus its optional dependencies
    {"python-annoy", Rule::pypi, "annoy"},
    {"python-blosc", Rule::pypi, "blosc"},
    {"python-fastjsonschema", Rule::pypi, "fastjsonschema"},
    {"python-flatbuffers", Rule::pypi, "flatbuffers"},
    {"python-lmdb", Rule::pypi, "lmdb"},
    {"python-tzdata", Rule::pypi, "tzdata"},
    {"pysoundfile", Rule::pypi, "soundfile"},
    {"docker-py", Rule::pypi, "docker"},
    {"mujoco-python", Rule::pypi, "mujoco"},
    {"mujoco", Rule::pypi, "mujoco"},  // the C library, its samples and mujoco-python
    // OpenMM's own feedstock; PyPI's openmm holds its 8.x wheels (7.x: see add_conda_package).
    {"openmm", Rule::pypi, "openmm"},
    {"dask-core", Rule::pypi, "dask"},      // dask without its extras (pypi.io .../d/dask/dask-X.tar.gz)
    {"iris", Rule::pypi, "scitools-iris"},  // SciTools/iris; PyPI's iris is another project
    // The pyg channel's names (pyg-team/pytorch_geometric conda/pyg, rusty1s/pytorch_* conda/).
    {"pyg", Rule::pypi, "torch-geometric"},
    {"pytorch-cluster", Rule::pypi, "torch-cluster"},
    {"pytorch-scatter", Rule::pypi, "torch-scatter"},
    {"pytorch-sparse", Rule::pypi, "torch-sparse"},
    {"lmdb", Rule::skip, "conda's lmdb is the C library; PyPI's lmdb (the Python binding) is conda's python-lmdb"},
    {"blosc", Rule::skip, "conda's blosc is the C library; PyPI's blosc (the Python binding) is conda's python-blosc"},
    {"tzdata", Rule::skip, "conda's tzdata is the time zone database; the image's comes from its OS"},
    {"cudatoolkit", Rule::cuda, ""},
    {"cuda-toolkit", Rule::cuda, ""},
    {"cuda-runtime", Rule::cuda, ""},
    {"cuda-version", Rule::cuda, ""},
    {"pytorch-cuda", Rule::cuda, ""},
    {"cuda", Rule::cuda, ""},
    {"cuda-nvcc", Rule::cuda, ""},
    {"cudatoolkit-dev", Rule::cuda, ""},
    {"cudnn", Rule::cudnn, ""},
    {"ffmpeg", Rule::apt, "ffmpeg"},
    {"libgl", Rule::apt, "libgl1"},
    {"git", Rule::apt, "git"},
    {"git-lfs", Rule::apt, "git-lfs"},
    {"make", Rule::apt, "make"},
    {"cmake", Rule::apt, "cmake"},
    {"ninja", Rule::apt, "ninja-build"},
    {"gcc", Rule::apt, "gcc"},
    {"gxx", Rule::apt, "g++"},
    {"gcc_linux-64", Rule::apt, "gcc"},
    {"gxx_linux-64", Rule::apt, "g++"},
    {"c-compiler", Rule::apt, "build-essential"},
    {"cxx-compiler", Rule::apt, "build-essential"},
    {"compilers", Rule::apt, "build-essential"},
    {"libsndfile", Rule::apt, "libsndfile1"},
    {"sox", Rule::apt, "sox"},
    {"graphviz", Rule::apt, "graphviz"},
    {"wget", Rule::apt, "wget"},
    {"curl", Rule::apt, "curl"},
    {"unzip", Rule::apt, "unzip"},
    {"openjdk", Rule::apt, "default-jre-headless"},
    {"zip", Rule::apt, "zip"},
    {"pkg-config", Rule::apt, "pkg-config"},
    {"gfortran", Rule::apt, "gfortran"},
    {"aria2", Rule::apt, "aria2"},
    {"nodejs", Rule::apt, "nodejs"},
    {"openmpi", Rule::apt, "openmpi-bin"},
    {"mpich", Rule::apt, "mpich"},
    {"hdf5", Rule::apt, "libhdf5-dev"},
    {"openblas", Rule::apt, "libopenblas-dev"},
    {"eigen", Rule::apt, "libeigen3-dev"},
    {"boost", Rule::apt, "libboost-all-dev"},
    {"glew", Rule::apt, "libglew-dev"},
    {"glfw", Rule::apt, "libglfw3-dev"},
    {"cairo", Rule::apt, "libcairo2-dev"},
    {"tesseract", Rule::apt, "tesseract-ocr"},
    {"poppler", Rule::apt, "poppler-utils"},
    {"imagemagick", Rule::apt, "imagemagick"},
    {"espeak", Rule::apt, "espeak"},
    {"espeak-ng", Rule::apt, "espeak-ng"},
    {"portaudio", Rule::apt, "portaudio19-dev"},
    // Bioinformatics tools (bioconda), as Debian packages them.
    {"hmmer", Rule::apt, "hmmer"},
    {"hhsuite", Rule::apt, "hhsuite"},
    {"kalign3", Rule::apt, "kalign"},
    {"kalign2", Rule::skip,
     "Debian's kalign is Kalign 3 (1:3.3.5 in bookworm), not Kalign 2: install Kalign 2 yourself"},
    {"samtools", Rule::apt, "samtools"},
    {"bcftools", Rule::apt, "bcftools"},
    {"htslib", Rule::apt, "libhts-dev"},
    {"bedtools", Rule::apt, "bedtools"},
    {"bwa", Rule::apt, "bwa"},
    {"minimap2", Rule::apt, "minimap2"},
    {"blast", Rule::apt, "ncbi-blast+"},
    {"mafft", Rule::apt, "mafft"},
    {"clustalo", Rule::apt, "clustalo"},
    {"cd-hit", Rule::apt, "cd-hit"},
    {"diamond", Rule::apt, "diamond-aligner"},
    {"mmseqs2", Rule::apt, "mmseqs2"},
    {"prodigal", Rule::apt, "prodigal"},
    {"trimmomatic", Rule::apt, "trimmomatic"},
    {"fastqc", Rule::apt, "fastqc"},
    {"star", Rule::apt, "rna-star"},
    {"salmon", Rule::apt, "salmon"},
    {"kallisto", Rule::apt, "kallisto"},
    {"nccl", Rule::skip, "torch's CUDA wheels bring their own NCCL"},
    {"pytorch-mutex", Rule::skip, "conda's switch between its CPU and CUDA builds of pytorch"},
    {"cpuonly", Rule::skip, "envpin picks the torch variant from cuda.gpus (none: the CPU wheels)"},
    {"mkl", Rule::skip, "the wheels bring their own BLAS"},
    {"mkl-include", Rule::skip, "the wheels bring their own BLAS"},
    {"mkl-service", Rule::skip, "the wheels bring their own BLAS"},
    {"blas", Rule::skip, "the wheels bring their own BLAS"},
    {"libblas", Rule::skip, "the wheels bring their own BLAS"},
    {"intel-openmp", Rule::skip, "the wheels bring their own OpenMP"},
    {"pip", Rule::skip, "pip comes with the Python envpin installs"},
    {"python_abi", Rule::skip, "conda's ABI marker"},
    {"ca-certificates", Rule::skip, "the image's come from its OS"},
    {"openssl", Rule::skip, "the image's come from its OS"},
    {"zlib", Rule::skip, "the image's come from its OS"},
    {"xz", Rule::skip, "the image's come from its OS"},
    {"readline", Rule::skip, "the image's come from its OS"},
    {"ncurses", Rule::skip, "the image's come from its OS"},
    {"sqlite", Rule::skip, "the image's come from its OS"},
    {"tk", Rule::skip, "the image's come from its OS"},
    {"bzip2", Rule::skip, "the image's come from its OS"},
    {"libffi", Rule::skip, "the image's come from its OS"},
};

// A conda package that is conda's own runtime or another language's, never a PyPI name.
bool conda_only(std::string_view name) {
  for (std::string_view p : {"r-", "lib", "_", "perl-", "font-", "xorg-", "ld_impl"})
    if (name.starts_with(p)) return true;
  return name.ends_with("-ng");
}

// conda's version syntax as PEP 440: "=2.1" -> "==2.1.*", "=2.1.0" and "2.1.0" -> "==2.1.0",
// ">=1.26,<2" unchanged, "*" -> none. Empty result with `why` set: not translatable.
std::string conda_version(std::string spec, std::string& why) {
  spec = trim(spec);
  if (spec.empty() || spec == "*") return "";
  if (spec.find('|') != std::string::npos) {
    why = "conda's '|' (either version) has no PEP 440 form";
    return "";
  }
  if (spec.front() == '=' && (spec.size() < 2 || spec[1] != '=')) {
    const std::string v = spec.substr(1);
    if (v.ends_with(".*") || std::count(v.begin(), v.end(), '.') >= 2) return "==" + v;
    return "==" + v + ".*";
  }
  if (std::isdigit(static_cast<unsigned char>(spec.front()))) {
    if (spec.ends_with("*") && !spec.ends_with(".*"))
      spec = spec.substr(0, spec.size() - 1) + (spec.size() > 1 && spec[spec.size() - 2] == '.' ? "*" : ".*");
    return "==" + spec;
  }
  return spec;
}

// What the lines of one environment file say together.
struct CondaState {
  std::optional<Value> torch_cuda;  // the CUDA of torch's wheels (pytorch-cuda=12.1, cudatoolkit=11.3)
  std::optional<Value> some_cuda;   // a CUDA package without a version ("- cuda")
};

void conda_dependency(const YAML::Node& item, const fs::path& file, Draft& d, Includes& inc, CondaState& state) {
  std::optional<Value>& torch_cuda = state.torch_cuda;
  const int line = item.Mark().line + 1;
  if (item.IsMap()) {
    for (const auto& kv : item) {
      const std::string key = kv.first.as<std::string>();
      if (key != "pip" || !kv.second.IsSequence()) {
        note(d, where(file, line) + ": " + quote_input(key) +
                    " in dependencies is not a package list envpin knows: left out");
        continue;
      }
      for (const auto& p : kv.second) {
        if (!p.IsScalar()) continue;
        requirement_line(p.as<std::string>(), file, p.Mark().line + 1, d, inc, " (pip)");
      }
    }
    return;
  }
  if (!item.IsScalar()) return;
  std::string spec = trim(item.as<std::string>());
  const std::string shown = spec;
  std::string channel;
  if (const auto colons = spec.find("::"); colons != std::string::npos) {  // channel::name
    channel = spec.substr(0, colons);
    spec = spec.substr(colons + 2);
  }
  const auto cut = spec.find_first_of(" =<>!~");
  const std::string name = diag::printable(spec.substr(0, cut));
  std::string rest = cut == std::string::npos ? "" : trim(spec.substr(cut));
  // Spaces beside an operator or a comma belong to the version ("python >= 3.8", ">=1.2, <2");
  // a space between two versions' words starts the build string ("numpy 1.11 py36_0").
  {
    std::string squeezed;
    const std::string_view ops = "=<>!~,";
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == ' ') {
        const std::size_t next = rest.find_first_not_of(' ', i);
        const bool after_op = !squeezed.empty() && ops.find(squeezed.back()) != std::string_view::npos;
        const bool before_op = next != std::string::npos && ops.find(rest[next]) != std::string_view::npos;
        if (after_op || before_op) continue;
      }
      squeezed += rest[i];
    }
    rest = squeezed;
  }
  // A build string after the version ("2.1.0=py3.10_cuda12.1_cudnn8_0", "=*=*cuda*").
  std::string build;
  if (rest.starts_with("=") && !rest.starts_with("==")) {
    if (const auto second = rest.find('=', 1); second != std::string::npos) {
      build = rest.substr(second + 1);
      rest = rest.substr(0, second);
    }
  } else if (const auto sp = rest.find(' '); sp != std::string::npos) {
    build = trim(rest.substr(sp + 1));
    rest = rest.substr(0, sp);
  }
  // The origin quotes the line: redacted, since it reaches comments, notes and errors.
  const std::string from = secrets::redact(where(file, line) + " (" + diag::printable(shown) + ")");
  std::string why;
  std::erase(rest, ' ');  // "python >= 3.8"
  const std::string version = conda_version(rest, why);
  if (name == "python") {
    // An exact pin keeps its patch ("python=3.8.18"); "=3.8" is that minor; a range
    // (">=3.8,<3.10") its lowest minor, said so.
    const bool range = !version.empty() && !version.starts_with("==");
    std::string minor = range ? lowest_python(version) : version.substr(std::min<std::size_t>(2, version.size()));
    if (minor.ends_with(".*")) minor.resize(minor.size() - 2);
    if (minor.starts_with("2."))
      throw Error(
          "the environment asks for Python " + diag::printable(minor) + ", which envpin does not build images for",
          Location{file.generic_string(), line, 1}, "port the project to Python 3 first");
    if (!manifest::is_python_version(minor)) {
      note(d, from + ": Python version " + quote_input(rest) + " not understood: python.version left to you");
      return;
    }
    set_once(d.python, {minor, range ? from + ", the lowest it allows" : from}, "python.version");
    if (range) note_python_floor(d, minor, from);
    return;
  }
  const CondaName* rule = nullptr;
  for (const CondaName& c : kConda)
    if (c.conda == name) rule = &c;
  if (rule && rule->rule == Rule::cuda) {
    // conda's cuda, cuda-toolkit, cuda-nvcc and cudatoolkit-dev bring the compiler: the devel image.
    if (name == "cuda" || name == "cuda-toolkit" || name == "cuda-nvcc" || name == "cudatoolkit-dev")
      set_once(d.flavor, {"devel", from + ", which brings nvcc"}, "cuda.flavor");
    std::string v = version.starts_with("==") ? version.substr(2) : "";
    if (v.ends_with(".*")) v.resize(v.size() - 2);
    // Only dotted numbers are shortened to their minor ("11.7.0"); anything else
    // ("11.1git+https://...", envpin_fuzz_init) is carried whole, for the manifest to refuse it
    // where it is.
    if (const std::string minor = v.substr(0, v.find('.', v.find('.') + 1)); minor != v && is_dotted_release(v)) {
      note(d, from + ": CUDA " + quote_input(v) + " is taken as " + minor +
                  ": envpin builds on the newest nvidia/cuda image of that minor release");
      v = minor;
    }
    if (v.empty() || !std::isdigit(static_cast<unsigned char>(v.front()))) {
      if (!state.some_cuda) state.some_cuda = Value{"auto", from};  // the version: another line's, or auto
      return;
    }
    const bool torch_runtime = name == "pytorch-cuda" || name == "cudatoolkit" || name == "cuda-version";
    if (torch_runtime) torch_cuda = Value{v, from};
    // No nvidia/cuda image of that line (cudatoolkit=11.3, =10.2): the torch wheels of that
    // variant bring their own CUDA runtime, so any image the driver runs serves them.
    if (torch_runtime && is_cuda_minor(v) && !resolve::find_cuda_release(v)) {
      note(d, from + ": nvidia/cuda has no supported image for CUDA " + v +
                  " image; torch's wheels of that variant bring their own CUDA runtime, so cuda.version is left "
                  "to auto (the nearest image the fleet's driver runs)");
      return;
    }
    set_once(d.cuda, {v, from}, "the CUDA version");
    return;
  }
  if (rule && rule->rule == Rule::cudnn) {
    set_once(d.cudnn, {"true", from}, "cuDNN");
    return;
  }
  if (rule && rule->rule == Rule::skip) {
    note(d, from + ": left out: " + std::string(rule->target));
    return;
  }
  if (rule && rule->rule == Rule::apt) {
    const std::string pkg(rule->target);
    if (std::none_of(d.apt.begin(), d.apt.end(), [&](const Value& v) { return v.value == pkg; }))
      d.apt.push_back({pkg, from});
    // conda's version is not Debian's: the change is said, never silent.
    if (!version.empty())
      note(d, from + ": conda's version " + quote_input(rest) + " is not carried: apt installs the OS's " + pkg +
                  ", at the version envpin lock pins");
    return;
  }
  // A conda build for one CUDA version ("dgl-cuda11.1", "faiss-gpu"): its PyPI project, if any,
  // is named differently and picks CUDA another way.
  if (const auto cu = name.find("-cuda");
      cu != std::string::npos && cu + 5 < name.size() && std::isdigit(static_cast<unsigned char>(name[cu + 5]))) {
    note(d, from + ": " + quote_input(name) +
                " is a conda build for one CUDA version, with no PyPI project of that name: left out; add the "
                "package with the wheel index its project names for CUDA");
    return;
  }
  // bioconda packages are command-line tools first: one not in the table or the list of names
  // that are the same project on PyPI (pysam, multiqc) is no PyPI guess.
  if (!rule && channel == "bioconda" && !same_project_on_pypi(name)) {
    note(d, from + ": " + quote_input(name) +
                " is a bioconda package envpin knows no Debian or PyPI name for: left out; add it under apt: or "
                "python.packages if one exists");
    return;
  }
  if (!rule && conda_only(name)) {
    note(d, from + ": " + quote_input(name) + " is a conda package with no PyPI or Debian name envpin knows: left out");
    return;
  }
  // OpenMM's PyPI wheels are its 8.x releases (https://pypi.org/project/openmm/#history): conda's
  // 7.x builds have no PyPI form (facebookresearch/esm's openmm=7.5.1).
  if (name == "openmm" && (version.starts_with("==7") || version.starts_with("==6"))) {
    note(
        d,
        from + ": OpenMM " + quote_input(rest) +
            " is a conda build (OpenMM's PyPI wheels are its 8.x releases): left out; Debian 12's python3-simtk is 7.7.0");
    return;
  }
  if (!why.empty()) note(d, from + ": " + why + "; any version taken");
  if (!build.empty() && build.find("cuda") != std::string::npos)
    note(d, from + ": the build string " + quote_input(build) +
                " asks for a CUDA build: envpin picks the wheels' variant from cuda.gpus");
  // Not in the table: passed to PyPI only when conda-forge's package of that name is PyPI's
  // project (conda_pypi.cpp); a conda-only name never becomes a pin pip installs from PyPI.
  // (A name that is no valid name at all goes on to add_package's refusal, located.)
  const bool valid_name = std::all_of(
      name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
  if (!rule && valid_name && !same_project_on_pypi(name)) {
    note(d, from + ": " + quote_input(name) +
                " is a conda package envpin cannot match to a PyPI project (not in its list of conda-forge names "
                "that are the same project on PyPI): left out; add its PyPI name under python.packages if it has one");
    return;
  }
  const std::string pypi = rule ? std::string(rule->target) : name;
  add_package(d, pypi + (why.empty() ? version : ""), from, Location{file.generic_string(), line, 1});
}

}  // namespace

void detail::read_conda_unredacted(const fs::path& file, Draft& d) {
  Includes inc;
  const std::optional<std::string> input = open_input(file, d, inc);
  if (!input) return;
  const std::string& text = *input;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error("not valid YAML: " + diag::printable(e.msg),
                Location{file.generic_string(), e.mark.line + 1, e.mark.column + 1},
                "fix the file, or export it again with 'conda env export --from-history'");
  }
  if (!root.IsMap() || !root["dependencies"] || !root["dependencies"].IsSequence())
    throw Error("no dependencies list: this is not a conda environment file", Location{file.generic_string(), 1, 1},
                "name an environment.yml with a 'dependencies:' list");
  d.sources.push_back(file.generic_string());
  CondaState state;
  for (const auto& item : root["dependencies"])
    collecting(d, Location{file.generic_string(), item.Mark().line + 1, 1},
               [&] { conda_dependency(item, file, d, inc, state); });
  // conda's torch with a CUDA package: the wheels of that CUDA variant, if there ever were any.
  if (state.torch_cuda)
    collecting(d, origin_location(d, state.torch_cuda->from),
               [&] { torch_variant_index(d, state.torch_cuda->value, state.torch_cuda->from); });
  // PyPI's pdbfixer needs PyPI's OpenMM 8: with a conda-only OpenMM left out, it goes too.
  if (std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) {
        return n.find("OpenMM") != std::string::npos && n.find("is a conda build") != std::string::npos;
      }))
    std::erase_if(d.packages, [&](const Value& v) {
      if (!v.value.starts_with("pdbfixer") || !v.from.starts_with(where(file, 0).substr(0, where(file, 0).size() - 1)))
        return false;
      note(d, v.from + ": " + quote_input(v.value) +
                  " left out: PyPI's pdbfixer is built for PyPI's OpenMM 8, and this environment's OpenMM is conda's");
      return true;
    });
  // A CUDA package without a version and none with one: the environment uses CUDA, and envpin
  // chooses the toolkit for the fleet.
  if (state.some_cuda && !d.cuda)
    d.cuda = Value{"auto", state.some_cuda->from + ", no version: envpin chooses the toolkit for the fleet"};
}

}  // namespace envpin::init

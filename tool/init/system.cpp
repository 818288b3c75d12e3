// SPDX-License-Identifier: Apache-2.0
// envpin init --source system: a project's PyPI packages as Debian 12's python3-* packages, for a
// site without PyPI (air-gapped clusters) or a team that takes the OS's builds.
#include <algorithm>
#include <string_view>

#include "diag/text.hpp"
#include "init/init.hpp"
#include "init/parts.hpp"
#include "manifest/requirement.hpp"
#include "resolve/torch_range.hpp"

namespace envpin::init {
namespace {

using namespace detail;

// PyPI project (PEP 503 name) -> Debian 12 (bookworm) package and its upstream version. Every row
// read from bookworm itself (apt-cache madison against deb.debian.org bookworm, bookworm-updates
// and bookworm-security main, 2026-12-03; the full Debian version in each comment). pip, setuptools
// and wheel are pip's own tooling; python3-pycuda is in contrib, left out.
struct DebianPython {
  std::string_view pypi, package, version;
};
constexpr DebianPython kBookworm[] = {
    {"attrs", "python3-attr", "22.2.0"},                          // 22.2.0-1
    {"av", "python3-av", "10.0.0"},                               // 10.0.0-1+b1
    {"beautifulsoup4", "python3-bs4", "4.11.2"},                  // 4.11.2-2
    {"biopython", "python3-biopython", "1.80"},                   // 1.80+dfsg-4+b1
    {"click", "python3-click", "8.1.3"},                          // 8.1.3-2
    {"cloudpickle", "python3-cloudpickle", "2.2.0"},              // 2.2.0-1
    {"cython", "cython3", "0.29.32"},                             // 0.29.32-2+b1
    {"dask", "python3-dask", "2022.12.1"},                        // 2022.12.1+dfsg-2
    {"faiss-cpu", "python3-faiss", "1.7.3"},                      // 1.7.3-2+b1
    {"filelock", "python3-filelock", "3.9.0"},                    // 3.9.0-1+deb12u1
    {"fsspec", "python3-fsspec", "2022.11.0"},                    // 2022.11.0-1
    {"geopandas", "python3-geopandas", "0.12.2"},                 // 0.12.2-1
    {"graphviz", "python3-graphviz", "0.20.1"},                   // 0.20.1-1
    {"h5py", "python3-h5py", "3.7.0"},                            // 3.7.0-8
    {"imageio", "python3-imageio", "2.4.1"},                      // 2.4.1-5
    {"ipykernel", "python3-ipykernel", "6.17.0"},                 // 6.17.0-1
    {"ipython", "python3-ipython", "8.5.0"},                      // 8.5.0-4
    {"ipywidgets", "python3-ipywidgets", "6.0.0"},                // 6.0.0-11
    {"jinja2", "python3-jinja2", "3.1.2"},                        // 3.1.2-1+deb12u3
    {"joblib", "python3-joblib", "1.2.0"},                        // 1.2.0-4+deb12u1
    {"jsonschema", "python3-jsonschema", "4.10.3"},               // 4.10.3-1
    {"jupyter-client", "python3-jupyter-client", "7.4.9"},        // 7.4.9-2
    {"llvmlite", "python3-llvmlite", "0.39.1"},                   // 0.39.1-2
    {"lxml", "python3-lxml", "4.9.2-1"},                          // 4.9.2-1+b1(newerinsecurity4.9.2-1+deb12u1)
    {"matplotlib", "python3-matplotlib", "3.6.3"},                // 3.6.3-1+b1
    {"mdtraj", "python3-mdtraj", "1.9.7"},                        // 1.9.7-6
    {"mpi4py", "python3-mpi4py", "3.1.4"},                        // 3.1.4-2+b2
    {"msgpack", "python3-msgpack", "1.0.3"},                      // 1.0.3-2+b1
    {"netcdf4", "python3-netcdf4", "1.6.2"},                      // 1.6.2-1+b1
    {"networkx", "python3-networkx", "2.8.8"},                    // 2.8.8-1
    {"nibabel", "python3-nibabel", "5.0.0"},                      // 5.0.0-2
    {"notebook", "python3-notebook", "6.4.12"},                   // 6.4.12-2.2
    {"numba", "python3-numba", "0.56.4"},                         // 0.56.4+dfsg-2
    {"numexpr", "python3-numexpr", "2.8.4"},                      // 2.8.4-1+b2
    {"numpy", "python3-numpy", "1.24.2"},                         // 1:1.24.2-1+deb12u1
    {"omegaconf", "python3-omegaconf", "2.2.2"},                  // 2.2.2-2.1
    {"onnx", "python3-onnx", "1.12.0"},                           // 1.12.0-2+b4
    {"opencv-python", "python3-opencv", "4.6.0"},                 // 4.6.0+dfsg-12
    {"openmm", "python3-simtk", "7.7.0"},                         // 7.7.0+dfsg-9+b1
    {"packaging", "python3-packaging", "23.0"},                   // 23.0-1
    {"pandas", "python3-pandas", "1.5.3"},                        // 1.5.3+dfsg-2
    {"pillow", "python3-pil", "9.4.0"},                           // 9.4.0-1.1+deb12u1
    {"plotly", "python3-plotly", "5.4.1"},                        // 5.4.1+dfsg-1
    {"prody", "python3-prody", "2.3.1"},                          // 2.3.1+dfsg-3+deb12u2
    {"protobuf", "python3-protobuf", "3.21.12"},                  // 3.21.12-3+deb12u1
    {"psutil", "python3-psutil", "5.9.4"},                        // 5.9.4-1+b1
    {"pybind11", "python3-pybind11", "2.10.3"},                   // 2.10.3-1
    {"pydantic", "python3-pydantic", "1.10.4"},                   // 1.10.4-1+deb12u1
    {"pydicom", "python3-pydicom", "2.3.1"},                      // 2.3.1-1
    {"pygame", "python3-pygame", "2.1.2"},                        // 2.1.2+dfsg-5+b1
    {"pygraphviz", "python3-pygraphviz", "1.7"},                  // 1.7-3+b4
    {"pyopengl", "python3-opengl", "3.1.6"},                      // 3.1.6+dfsg-3
    {"pyproj", "python3-pyproj", "3.4.1"},                        // 3.4.1-1+b1
    {"pyqt5", "python3-pyqt5", "5.15.9"},                         // 5.15.9+dfsg-1
    {"pysam", "python3-pysam", "0.20.0"},                         // 0.20.0+ds-3+b1
    {"pytest", "python3-pytest", "7.2.1"},                        // 7.2.1-2
    {"python-dateutil", "python3-dateutil", "2.8.2"},             // 2.8.2-2
    {"pytz", "python3-tz", "2022.7.1"},                           // 2022.7.1-4
    {"pyyaml", "python3-yaml", "6.0"},                            // 6.0-3+b2
    {"rdkit", "python3-rdkit", "202209.3"},                       // 202209.3-1
    {"requests", "python3-requests", "2.28.1"},                   // 2.28.1+dfsg-1
    {"rich", "python3-rich", "13.3.1"},                           // 13.3.1-1
    {"ruamel-yaml", "python3-ruamel.yaml", "0.17.21"},            // 0.17.21-1
    {"scikit-image", "python3-skimage", "0.19.3"},                // 0.19.3-8
    {"scikit-learn", "python3-sklearn", "1.2.1"},                 // 1.2.1+dfsg-1
    {"scipy", "python3-scipy", "1.10.1"},                         // 1.10.1-2
    {"seaborn", "python3-seaborn", "0.12.2"},                     // 0.12.2-1
    {"sentencepiece", "python3-sentencepiece", "0.1.97"},         // 0.1.97-3+b1
    {"shapely", "python3-shapely", "1.8.5"},                      // 1.8.5-2+b1
    {"six", "python3-six", "1.16.0"},                             // 1.16.0-4
    {"soundfile", "python3-soundfile", "0.12.1"},                 // 0.12.1-1
    {"statsmodels", "python3-statsmodels", "0.13.5"},             // 0.13.5+dfsg-7
    {"sympy", "python3-sympy", "1.11.1"},                         // 1.11.1-1
    {"tables", "python3-tables", "3.7.0"},                        // 3.7.0-5
    {"tabulate", "python3-tabulate", "0.8.9"},                    // 0.8.9-1
    {"termcolor", "python3-termcolor", "1.1.0"},                  // 1.1.0-3
    {"threadpoolctl", "python3-threadpoolctl", "3.1.0"},          // 3.1.0-1
    {"torch", "python3-torch", "1.13.1"},                         // 1.13.1+dfsg-4
    {"torchaudio", "python3-torchaudio", "0.13.1"},               // 0.13.1-1
    {"torchvision", "python3-torchvision", "0.14.1"},             // 0.14.1-2
    {"tqdm", "python3-tqdm", "4.64.1"},                           // 4.64.1-1
    {"typing-extensions", "python3-typing-extensions", "4.4.0"},  // 4.4.0-1
    {"xarray", "python3-xarray", "2023.01.0"},                    // 2023.01.0-1.1
    {"xgboost", "python3-xgboost", "1.7.4"},                      // 1.7.4-1
    {"zarr", "python3-zarr", "2.13.6"},                           // 2.13.6+ds-1
};

const DebianPython* debian_python(std::string_view normalized) {
  const auto it = std::lower_bound(std::begin(kBookworm), std::end(kBookworm), normalized,
                                   [](const DebianPython& r, std::string_view n) { return r.pypi < n; });
  return it != std::end(kBookworm) && it->pypi == normalized ? it : nullptr;
}

}  // namespace

std::size_t debian_python_count(const Draft& d) {
  std::size_t n = 0;
  for (const Value& v : d.packages) {
    std::string error;
    std::size_t column = 0;
    if (const auto r = manifest::parse_requirement(v.value, error, column); r && debian_python(r->normalized)) ++n;
  }
  return n;
}

void to_system_python(Draft& d) {
  // Debian 12's own python3 is 3.11 (python3 3.11.2-1+b1): an input's other version gives way.
  if (d.python && d.python->value != "3.11" && !d.python->value.starts_with("3.11."))
    note(d, d.python->from + " names Python " + d.python->value +
                ": --source system builds on Debian 12's python3, which is 3.11");
  d.python = Value{"3.11", "--source system: Debian 12's python3 (3.11.2)"};
  d.os = Value{"debian12", "--source system: Debian 12's python3-* packages"};
  std::vector<Value> kept;
  for (Value& v : d.packages) {
    std::string error;
    std::size_t column = 0;
    const auto r = manifest::parse_requirement(v.value, error, column);
    const DebianPython* deb = r ? debian_python(r->normalized) : nullptr;
    if (!deb || !r->extras.empty() || !r->marker.empty()) {
      if (deb) note(d, v.from + ": " + quote_input(v.value) + " has extras or a marker: kept as a pip package");
      kept.push_back(std::move(v));
      continue;
    }
    std::string spec;
    for (const auto& s : r->specifiers) spec += (spec.empty() ? "" : ",") + s.op + s.version;
    if (!resolve::version_satisfies(deb->version, spec)) {
      note(d, v.from + ": Debian 12's " + std::string(deb->package) + " is " + std::string(deb->version) + ", which " +
                  quote_input(v.value) + " does not allow: kept as a pip package");
      kept.push_back(std::move(v));
      continue;
    }
    if (std::none_of(d.apt.begin(), d.apt.end(), [&](const Value& a) { return a.value == deb->package; }))
      d.apt.push_back({std::string(deb->package),
                       v.from + " (" + diag::printable(v.value) + "; Debian 12's " + std::string(deb->version) + ")"});
  }
  d.packages = std::move(kept);
  if (std::none_of(d.apt.begin(), d.apt.end(), [](const Value& a) { return a.value == "python3-venv"; }))
    d.apt.push_back({"python3-venv", "--source system: the venv the system Python's packages are seen from"});
}

}  // namespace envpin::init

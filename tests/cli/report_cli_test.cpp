// SPDX-License-Identifier: Apache-2.0
// `envpin report` on this machine (no GPU here) and `envpin diff` on recorded report pairs
// (tests/fakes/reports: a laptop without GPU, an H100 server, an A100 server on driver 470, an
// arm64 laptop, an RTX 5090 workstation).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_fixture.hpp"

namespace envpin {
namespace {

std::string reports() { return std::string(ENVPIN_SOURCE_DIR) + "/tests/fakes/reports/"; }

// "VERDICT field" per difference, in output order.
std::vector<std::string> verdicts(const std::string& json_text) {
  std::vector<std::string> out;
  const nlohmann::json parsed = nlohmann::json::parse(json_text);
  for (const auto& d : parsed["differences"])
    out.push_back(d["verdict"].get<std::string>() + " " + d["field"].get<std::string>());
  return out;
}

class ReportCli : public Cli {};

TEST_F(ReportCli, FourLayersWithoutSecretValues) {
  write("envpin.yaml",
        "envpin: 1\nname: r\nenv: {DATA_DIR: /nonexistent-envpin-data}\nsecrets: [PLANTED_TOKEN]\n"
        "paths: {data: '${DATA_DIR}'}\n");
  write("os-release", "ID=ubuntu\nVERSION_ID=\"22.04\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n");
  const std::string env =
      "PLANTED_TOKEN=planted-secret-value-42 ENVPIN_OS_RELEASE=os-release "
      "ENVPIN_NVML_LIBRARY=/nonexistent ENVPIN_NVIDIA_PROC_VERSION=/nonexistent";
  const Result text = run("report", env);
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* layer : {"system\n", "gpu\n", "packages\n", "config\n"})
    EXPECT_NE(text.out.find(layer), std::string::npos) << layer;
  EXPECT_NE(text.out.find("  os            Ubuntu 22.04.4 LTS\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  driver        none: no NVIDIA driver or GPU found\n"), std::string::npos);
  EXPECT_NE(text.out.find("  PLANTED_TOKEN set (value not shown)\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  path.data     /nonexistent-envpin-data missing\n"), std::string::npos) << text.out;
  const Result json = run("report --json", env);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto r = nlohmann::json::parse(json.out);
  EXPECT_EQ(r["schema"], "envpin.report/1");
  EXPECT_EQ(r["system"]["os"]["id"], "ubuntu");
  EXPECT_EQ(r["system"]["os"]["how"], "os-release");
  EXPECT_EQ(r["config"]["secrets"]["PLANTED_TOKEN"], "set");
  EXPECT_FALSE(r["config"]["paths"]["data"]["exists"]);
  EXPECT_TRUE(r["gpu"]["gpus"].empty());
  EXPECT_EQ(r["packages"]["dpkg"].is_object(), true);
  for (const Result* x : {&text, &json}) EXPECT_EQ(x->out.find("planted-secret-value-42"), std::string::npos);
  // --output writes the JSON, which diff reads back: a machine equals itself.
  ASSERT_EQ(run("report -o a.json", env).code, 0);
  const Result same = run("diff a.json a.json");
  EXPECT_EQ(same.code, 0);
  EXPECT_EQ(same.out, "envpin diff: 0 breaks, 0 risks, 0 info\n");
}

TEST_F(ReportCli, PathReferencesExpandOnce) {
  // A value that holds a reference is not expanded again: it looped for ever when it named
  // itself (the manifest's own references are checked at load; this one is the machine's).
  write("envpin.yaml",
        "envpin: 1\nname: r\nenv: {LOOP: m, DEFAULT_D: /from-manifest}\n"
        "paths: {p: '${LOOP}/a-${DEFAULT_D}'}\n");
  const Result r = run("report --json", "LOOP='${LOOP}' timeout 20");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["config"]["paths"]["p"]["path"], "${LOOP}/a-/from-manifest");
}

TEST_F(ReportCli, TorchBuildFromItsMetadata) {
  // An interpreter whose sys.path holds an installed torch 2.4.1+cu124 (metadata only).
  const fs::path site = dir_ / "site";
  fs::create_directories(site / "torch-2.4.1+cu124.dist-info");
  fs::create_directories(site / "torch");
  write("site/torch-2.4.1+cu124.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1+cu124\n\n");
  write("site/torch/version.py", "__version__ = '2.4.1+cu124'\ncuda: Optional[str] = '12.4'\n");
  io::write_atomic(dir_ / "python",
                   "#!/bin/sh\necho '[\"3.11.9\", \"/opt/py/bin/python3.11\", [\"" + site.string() + "\"]]'\n", true);
  const Result r = run("report --json", "ENVPIN_PYTHON=" + (dir_ / "python").string() + " PATH=/usr/bin:/bin");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& py = j["packages"]["python"][0];
  EXPECT_EQ(py["version"], "3.11.9");
  EXPECT_EQ(py["packages"]["torch"], "2.4.1+cu124");
  EXPECT_EQ(py["torch"]["cuda"], "12.4");
  EXPECT_EQ(py["torch"]["archs"],
            nlohmann::json::parse(R"(["sm_50","sm_60","sm_70","sm_75","sm_80","sm_86","sm_90"])"));
}

// python.source: system: a venv over Debian's dist-packages, where apt's Python packages carry
// *.egg-info directories or plain *.egg-info files. Every site directory on sys.path counts.
TEST_F(ReportCli, SystemSitePackagesFromApt) {
  const fs::path venv = dir_ / "venv/lib/python3.11/site-packages";
  const fs::path debian = dir_ / "usr/lib/python3/dist-packages";
  fs::create_directories(venv / "pip-23.0.1.dist-info");
  write("venv/lib/python3.11/site-packages/pip-23.0.1.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: pip\nVersion: 23.0.1\n\n");
  fs::create_directories(debian / "torch-2.1.2.egg-info");
  fs::create_directories(debian / "torch");
  write("usr/lib/python3/dist-packages/torch-2.1.2.egg-info/PKG-INFO",
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.1.2\n\n");
  write("usr/lib/python3/dist-packages/torch/version.py", "__version__ = '2.1.2'\ncuda: Optional[str] = None\n");
  write("usr/lib/python3/dist-packages/six-1.16.0.egg-info",
        "Metadata-Version: 1.2\nName: six\nVersion: 1.16.0\n\nBody\n");
  io::write_atomic(dir_ / "python",
                   "#!/bin/sh\necho '[\"3.11.2\", \"/usr/bin/python3.11\", [\"" + venv.string() + "\", \"" +
                       debian.string() + "\"]]'\n",
                   true);
  const Result r = run("report --json", "ENVPIN_PYTHON=" + (dir_ / "python").string() + " PATH=/usr/bin:/bin");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto py = nlohmann::json::parse(r.out)["packages"]["python"][0];
  EXPECT_EQ(py["packages"], nlohmann::json::parse(R"({"pip": "23.0.1", "six": "1.16.0", "torch": "2.1.2"})"))
      << py.dump();
  EXPECT_EQ(py["torch"]["cuda"], "");  // Debian's python3-torch is a CPU build
}

TEST_F(ReportCli, PyenvShimResolvedWithoutRunningIt) {
  // A pyenv root: shims that fail loudly when run, and a version whose python3 answers.
  fs::create_directories(dir_ / "pyenv/shims");
  fs::create_directories(dir_ / "pyenv/versions/3.12.4/bin");
  fs::create_directories(dir_ / "pyenv/versions/3.10.2/bin");
  for (const char* name : {"python3", "python"})
    io::write_atomic(dir_ / "pyenv/shims" / name, "#!/bin/sh\necho 'the shim ran' >&2\nexit 3\n", true);
  io::write_atomic(dir_ / "pyenv/versions/3.12.4/bin/python3",
                   "#!/bin/sh\necho '[\"3.12.4\", \"/pyenv/versions/3.12.4/bin/python3.12\", []]'\n", true);
  io::write_atomic(dir_ / "pyenv/versions/3.10.2/bin/python3",
                   "#!/bin/sh\necho '[\"3.10.2\", \"/pyenv/versions/3.10.2/bin/python3.10\", []]'\n", true);
  write("pyenv/version", "3.12.4\n");
  const std::string env =
      "PYENV_ROOT=" + (dir_ / "pyenv").string() + " PATH=" + (dir_ / "pyenv/shims").string() + ":/usr/bin:/bin";
  auto pythons = [&](const std::string& extra) {
    const Result r = run("report --json", env + " " + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["packages"]["python"];
  };
  // The global version file; python and python3 shims are asked once.
  auto py = pythons("");
  ASSERT_EQ(py.size(), 1u) << py.dump();
  EXPECT_EQ(py[0]["version"], "3.12.4");
  EXPECT_EQ(py[0]["command"], (dir_ / "pyenv/shims/python3").string());
  // A .python-version in the working directory wins over the global file; comments are skipped.
  write(".python-version", "# project\n3.10.2\n");
  EXPECT_EQ(pythons("")[0]["version"], "3.10.2");
  // PYENV_VERSION wins over both; the first version that has the command is taken.
  EXPECT_EQ(pythons("PYENV_VERSION=3.9.0:3.12.4")[0]["version"], "3.12.4");
  // "system" is not settled by the rule: the shim itself runs (and here fails, which is reported).
  py = pythons("PYENV_VERSION=system");
  EXPECT_EQ(py[0].value("error", ""), "the shim ran") << py.dump();
}

TEST_F(ReportCli, LaptopWithoutGpuAgainstH100Server) {
  const Result r = run("diff --json " + reports() + "laptop-nogpu.json " + reports() + "server-h100.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(verdicts(r.out),
            (std::vector<std::string>{"breaks path.data", "risk gpu.driver_vs_torch", "risk python.version",
                                      "risk gpu.devices", "risk python.pkg.tqdm", "risk python.only_in_b",
                                      "risk secrets.WANDB_API_KEY", "info gpu.driver", "info dpkg"}));
}

TEST_F(ReportCli, TwoServersWithDifferentDrivers) {
  const Result r = run("diff " + reports() + "server-h100.json " + reports() + "server-a100-driver470.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("BREAKS  gpu.driver_vs_torch\n"
                       "    A: torch 2.4.1 (CUDA 12.4) on " +
                       reports() +
                       "server-h100.json\n"
                       "    B: driver for CUDA 11.4 on " +
                       reports() +
                       "server-a100-driver470.json\n"
                       "    the driver is a major release behind torch's CUDA (cudaErrorInsufficientDriver, 35)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("RISK    system.glibc\n    A: 2.35\n    B: 2.31\n"), std::string::npos);
}

TEST_F(ReportCli, Arm64LaptopAgainstAmd64Server) {
  const Result r = run("diff --json " + reports() + "laptop-arm64.json " + reports() + "server-h100.json");
  EXPECT_EQ(r.code, 1);
  const auto v = verdicts(r.out);
  for (const char* expected : {"breaks system.arch", "breaks python.version", "breaks python.pkg.numpy",
                               "risk gpu.torch_cpu_build", "risk system.os"})
    EXPECT_NE(std::find(v.begin(), v.end(), expected), v.end()) << expected;
}

TEST_F(ReportCli, TorchWithoutKernelsForTheOtherGpu) {
  const Result r = run("diff --json " + reports() + "laptop-nogpu.json " + reports() + "workstation-rtx5090.json");
  EXPECT_EQ(r.code, 1);
  const auto v = verdicts(r.out);
  EXPECT_EQ(v.front(), "breaks gpu.arch_vs_torch");
}

// The server's image without torch and with other pip tooling: torch leads the differences by
// name; pip and setuptools versions are info, not BREAKS.
TEST_F(ReportCli, DiffNamesTheFrameworkFirstAndIgnoresPipTooling) {
  auto a = nlohmann::json::parse(*io::read_file(reports() + "server-h100.json"));
  auto& pa = a["packages"]["python"][0]["packages"];
  pa["pip"] = "23.0.1";
  pa["setuptools"] = "66.1.1";
  pa["aaa-helper"] = "1.0";
  auto b = a;
  auto& pb = b["packages"]["python"][0];
  pb["packages"].erase("torch");
  pb.erase("torch");
  pb["packages"]["pip"] = "24.0";
  pb["packages"]["setuptools"] = "69.0.3";
  pb["packages"].erase("aaa-helper");
  write("a.json", a.dump());
  write("b.json", b.dump());
  const Result r = run("diff --json a.json b.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(verdicts(r.out),
            (std::vector<std::string>{"breaks python.pkg.torch", "risk gpu.driver_vs_torch", "risk python.only_in_a",
                                      "info python.pkg.pip", "info python.pkg.setuptools"}));
}

TEST_F(ReportCli, DiffRejectsWhatIsNotAReport) {
  write("garbage.json", "{not json");
  write("foreign.json", "{\"name\": \"something else\"}");
  write("future.json", "{\"schema\": \"envpin.report/9\"}");
  const std::string good = reports() + "server-h100.json";
  Result r = run("diff garbage.json " + good);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("envpin: error: garbage.json: not JSON: ", 0), 0u) << r.err;
  r = run("diff foreign.json " + good);
  EXPECT_EQ(r.err,
            "envpin: error: foreign.json: foreign.json is not an envpin report (no \"schema\")\n"
            "envpin: hint: make it with 'envpin report --json --output foreign.json'\n");
  r = run("diff " + good + " future.json");
  EXPECT_EQ(r.err,
            "envpin: error: future.json: future.json is a report of schema envpin.report/9; this envpin "
            "reads envpin.report/1 and envpin.smoke/1\nenvpin: hint: make both reports with the same envpin version\n");
  r = run("diff missing.json " + good);
  EXPECT_EQ(r.code, 1);
  // 70,000 levels in 140 KB (a smoke result file as anyone may write it): one located line, not
  // a stack overflow.
  write("deep.json",
        "{\"schema\": \"envpin.smoke/1\", \"kernel\": " + std::string(70000, '[') + std::string(70000, ']') + "}");
  r = run("diff deep.json " + good);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "envpin: error: deep.json: the JSON nests deeper than 64 levels, which no envpin report does\n"
            "envpin: hint: make it with 'envpin report --json --output deep.json'\n");
}

}  // namespace
}  // namespace envpin

// SPDX-License-Identifier: Apache-2.0
// Every row of every CUDA table, and the facts that tie the tables together.
#include <gtest/gtest.h>

#include <algorithm>

#include "io/atomic_file.hpp"
#include "resolve/cuda_tables.hpp"
#include "resolve/torch_fit.hpp"

namespace envpin::resolve {
namespace {

bool has(const std::vector<int>& v, int sm) { return std::find(v.begin(), v.end(), sm) != v.end(); }

TEST(CudaTables, EveryToolkitDriverRowParsesAndLooksItselfUp) {
  std::optional<DriverVersion> previous;
  for (const ToolkitDriver& row : toolkit_drivers()) {
    const auto v = parse_driver(row.linux_driver);
    ASSERT_TRUE(v) << row.toolkit;
    EXPECT_EQ(driver_text(*v), row.linux_driver) << row.toolkit;
    EXPECT_EQ(packaged_driver(row.toolkit), row.linux_driver) << row.toolkit;
    if (previous) EXPECT_LE(*previous, *v) << row.toolkit << ": a newer toolkit never needs an older driver";
    previous = v;
  }
}

TEST(CudaTables, EveryPublishedTagHasAPackagedDriver) {
  for (const CudaRelease& r : cuda_releases())
    for (auto patch : r.patches) EXPECT_FALSE(packaged_driver(patch).empty()) << patch;
  // Tags newer than the last Table 3 row of their minor use that row (12.3.2, 13.0.3, 13.1.2).
  EXPECT_EQ(packaged_driver("12.3.2"), "545.23.08");
  EXPECT_EQ(packaged_driver("13.0.3"), "580.95.05");
  EXPECT_EQ(packaged_driver("13.1.2"), "590.48.01");
  EXPECT_EQ(packaged_driver("12.4"), "550.54.15");
  EXPECT_EQ(packaged_driver("10.2.89"), "440.33");  // torch 1.x cu102 wheels bring CUDA 10.2
  EXPECT_EQ(packaged_driver("9.2.148"), "");
}

TEST(CudaTables, MinorCompatFloors) {
  ASSERT_EQ(minor_compat_floors().size(), 3u);
  for (const MinorCompat& row : minor_compat_floors()) {
    ASSERT_TRUE(parse_driver(row.min_driver)) << row.major;
    EXPECT_EQ(minor_compat_floor(row.major), row.min_driver);
    // From 12.x on, the floor is at or below the driver of every release of that major.
    if (row.major < 12) continue;
    for (const ToolkitDriver& t : toolkit_drivers())
      if (t.toolkit.starts_with(std::to_string(row.major) + "."))
        EXPECT_LE(*parse_driver(row.min_driver), *parse_driver(t.linux_driver)) << t.toolkit;
  }
  EXPECT_EQ(minor_compat_floor(12), "525.60.13");
  EXPECT_EQ(minor_compat_floor(10), "");
}

// The floors live twice: here, and in cmake/EnvPin.cmake's check of a local nvcc, which runs in
// the consuming project's CMake without envpin. The module's values are this table's.
TEST(CudaTables, TheCMakeModuleHasTheSameMinorCompatFloors) {
  const auto module = io::read_file(std::string(ENVPIN_SOURCE_DIR) + "/cmake/EnvPin.cmake");
  ASSERT_TRUE(module);
  for (const MinorCompat& row : minor_compat_floors()) {
    const std::string line = "set(needs_" + std::to_string(row.major) + " \"";
    const auto at = module->find(line);
    ASSERT_NE(at, std::string::npos) << line;
    const auto start = at + line.size();
    const std::string value = module->substr(start, module->find('"', start) - start);
    // The module compares with VERSION_LESS: "580" there is 580.0.0 here.
    EXPECT_EQ(*parse_driver(value), *parse_driver(row.min_driver)) << "needs_" << row.major;
  }
}

TEST(CudaTables, DriverVersions) {
  EXPECT_EQ(parse_driver("535.104.05"), (DriverVersion{535, 104, 5}));
  EXPECT_EQ(parse_driver("580"), (DriverVersion{580, 0, 0}));
  EXPECT_LT(*parse_driver("570.86.10"), *parse_driver("570.124.06"));
  EXPECT_FALSE(parse_driver("latest"));
  EXPECT_FALSE(parse_driver("535.104.05.1"));
}

TEST(CudaTables, EveryGpuRow) {
  for (const GpuModel& g : gpu_models()) {
    EXPECT_EQ(gpu_sm(g.name), g.sm) << g.name;
    ASSERT_TRUE(find_gpu(g.name)) << g.name;
    EXPECT_EQ(find_gpu(g.name)->name, g.name);
    // nvidia-smi spellings: vendor prefix, form factor and memory suffixes.
    const std::string smi = "NVIDIA " + std::string(g.name) + "-SXM4-80GB";
    ASSERT_TRUE(find_gpu(smi)) << smi;
    EXPECT_EQ(find_gpu(smi)->name, g.name) << smi;
    if (g.kind == GpuKind::jetson) EXPECT_EQ(g.host, HostArch::arm64) << g.name;
    // Some nvidia/cuda line can build for every GPU in the table.
    bool buildable = false;
    for (const CudaRelease& r : cuda_releases()) buildable = buildable || has(compilable_sms(r.minor), g.sm);
    EXPECT_TRUE(buildable) << g.name;
    EXPECT_NE(architecture_name(g.sm), "unknown") << g.name;
  }
}

TEST(CudaTables, GpuNamesAsNvidiaSmiPrintsThem) {
  struct Case {
    const char* name;
    const char* product;
  } cases[] = {
      {"NVIDIA H100 80GB HBM3", "H100"},
      // Jetson Thor as users and NVIDIA name it (was "unknown GPU ... did you mean 'Jetson AGX Orin'").
      {"Jetson AGX Thor", "Jetson AGX Thor"},
      {"NVIDIA Jetson AGX Thor", "Jetson AGX Thor"},
      {"Jetson Thor", "Jetson Thor"},
      {"NVIDIA A100-SXM4-80GB", "A100"},
      {"Tesla V100-SXM2-16GB", "V100"},
      {"NVIDIA A10", "A10"},
      {"NVIDIA A10G", "A10G"},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", "RTX 4070 Ti"},
      {"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"},
      {"NVIDIA H200", "H200"},
      {"NVIDIA H20", "H20"},
      {"NVIDIA L40S", "L40S"},
      {"rtx4090", "RTX 4090"},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(find_gpu(c.name)) << c.name;
    EXPECT_EQ(find_gpu(c.name)->name, c.product) << c.name;
  }
  EXPECT_FALSE(find_gpu("RTX 6000"));  // Quadro RTX 6000, RTX 6000 Ada or RTX PRO 6000: ambiguous
  EXPECT_FALSE(find_gpu("A1000"));
  EXPECT_FALSE(find_gpu(""));
  EXPECT_EQ(gpu_sm("8.6"), 86);
  EXPECT_EQ(gpu_sm("sm_100"), 100);
  EXPECT_EQ(gpu_sm("compute_90"), 90);
  EXPECT_EQ(gpu_sm("12.1"), 121);
  EXPECT_EQ(capability_text(120), "12.0");
}

TEST(CudaTables, CompilableSmsPerRelease) {
  // Lowest and highest SM per line: CMake's CMakeCUDAArchitecturesAll.cmake (cuda-facts.md §2.3).
  struct Case {
    const char* minor;
    int lowest, highest;
  } cases[] = {{"11.0", 35, 80},  {"11.1", 35, 86},  {"11.2", 35, 86},  {"11.4", 35, 87},  {"11.5", 35, 87},
               {"11.6", 35, 87},  {"11.7", 35, 87},  {"11.8", 35, 90},  {"12.0", 50, 90},  {"12.1", 50, 90},
               {"12.2", 50, 90},  {"12.3", 50, 90},  {"12.4", 50, 90},  {"12.5", 50, 90},  {"12.6", 50, 90},
               {"12.8", 50, 120}, {"12.9", 50, 121}, {"13.0", 75, 121}, {"13.1", 75, 121}, {"13.2", 75, 121}};
  ASSERT_EQ(std::size(cases), cuda_releases().size());
  for (const Case& c : cases) {
    const auto sms = compilable_sms(c.minor);
    ASSERT_FALSE(sms.empty()) << c.minor;
    EXPECT_TRUE(std::is_sorted(sms.begin(), sms.end())) << c.minor;
    EXPECT_EQ(sms.front(), c.lowest) << c.minor;
    EXPECT_EQ(sms.back(), c.highest) << c.minor;
  }
  EXPECT_TRUE(has(compilable_sms("12.8"), 101));  // Thor before the 13.0 renumbering
  EXPECT_FALSE(has(compilable_sms("13.0"), 101));
  EXPECT_TRUE(has(compilable_sms("13.0"), 110));
  EXPECT_FALSE(has(compilable_sms("13.0"), 72));
  EXPECT_FALSE(has(compilable_sms("12.8"), 103));
}

TEST(CudaTables, EveryTorchRow) {
  ASSERT_EQ(torch_releases().size(), 24u);
  for (const TorchRelease& r : torch_releases()) {
    // A release built unlike its minor's others (1.8.0) has a row of its own.
    const bool exact = std::count(r.minor.begin(), r.minor.end(), '.') == 2;
    EXPECT_EQ(find_torch_release(exact ? std::string(r.minor) : std::string(r.minor) + ".1"), &r);
    ASSERT_FALSE(r.variants.empty()) << r.minor;
    for (const TorchVariant& v : r.variants) {
      // Some nvidia/cuda line serves each variant (its own, or 11.x for 10.x wheels), and where
      // the variant's own line is in the table, that toolkit builds every arch the wheel carries.
      EXPECT_TRUE(std::any_of(cuda_releases().begin(), cuda_releases().end(),
                              [&](const CudaRelease& c) { return detail::image_serves(v, c); }))
          << r.minor << " " << v.tag;
      if (!find_cuda_release(v.cuda)) continue;
      const auto buildable = compilable_sms(v.cuda);
      for (int sm : v.sass) EXPECT_TRUE(has(buildable, sm)) << r.minor << " " << v.tag << " sm_" << sm;
      for (int sm : v.sass_arm64) EXPECT_TRUE(has(buildable, sm)) << r.minor << " " << v.tag << " arm64 sm_" << sm;
      EXPECT_TRUE(std::is_sorted(v.sass.begin(), v.sass.end())) << v.tag;
      EXPECT_EQ(
          "cu" + std::string(v.cuda.substr(0, v.cuda.find('.'))) + std::string(v.cuda.substr(v.cuda.find('.') + 1)),
          v.tag);
      EXPECT_EQ(torch_index_url(v.tag), "https://download.pytorch.org/whl/" + std::string(v.tag));
    }
  }
  EXPECT_FALSE(find_torch_release("1.6.0"));
  EXPECT_EQ(find_torch_release("1.7.1")->minor, "1.7");
  EXPECT_EQ(find_torch_release("1.7.0")->minor, "1.7.0");
  EXPECT_EQ(find_torch_release("1.8.1")->minor, "1.8");
  EXPECT_EQ(find_torch_release("1.8.0")->minor, "1.8.0");
  // 1.x wheels never had sm_90 (1.13.1+cu117 on H100, pytorch/pytorch#90761); cu102 has no sm_75.
  EXPECT_FALSE(has(find_torch_release("1.13.1")->variants.back().sass, 90));
  EXPECT_FALSE(has(find_torch_release("1.12.1")->variants.front().sass, 75));
  EXPECT_FALSE(find_torch_release("2"));
  // RTX 50xx (sm_120) first runs torch 2.7 cu128 (cog's measured floors, cuda-facts.md §3.3).
  const TorchRelease* t27 = find_torch_release("2.7.0");
  EXPECT_TRUE(has(t27->variants.back().sass, 120));
  EXPECT_FALSE(has(find_torch_release("2.6.0")->variants.back().sass, 120));
}

// The x86_64 wheels' cubins as torch.cuda.get_arch_list() printed them on released wheels, row
// by row against the table (issue 50: 2.11 dropped sm_70 from cu128 and the table kept 2.10's
// list). Sources: pytorch/pytorch#182250 (2.10.0+cu128, 2.11.0+cu126, 2.11.0+cu128), #90761
// (1.13.1+cu117). A release that changes a variant's list is a row here and a table change.
TEST(CudaTables, TorchRowsMatchMeasuredArchLists) {
  struct Measured {
    const char* version;
    const char* cuda;
    std::vector<int> sass;
  };
  const std::vector<Measured> measured = {
      {"1.13.1", "11.7", {37, 50, 60, 70, 75, 80, 86}},
      {"2.10.0", "12.8", {70, 75, 80, 86, 90, 100, 120}},
      {"2.11.0", "12.6", {50, 60, 70, 75, 80, 86, 90}},
      {"2.11.0", "12.8", {75, 80, 86, 90, 100, 120}},
  };
  for (const Measured& m : measured) {
    const TorchVariant* v = find_torch_variant(m.version, m.cuda);
    ASSERT_TRUE(v) << m.version << " " << m.cuda;
    EXPECT_EQ(v->sass, m.sass) << m.version << " " << v->tag;
    EXPECT_EQ(v->ptx, 0) << m.version << " " << v->tag << ": released wheels carry no PTX";
  }
}

TEST(CudaTables, TorchVariantAndKernelRule) {
  const TorchVariant* cu124 = find_torch_variant("2.4.1+cu124", "12.4");
  ASSERT_TRUE(cu124);
  EXPECT_EQ(cu124->tag, "cu124");
  EXPECT_EQ(find_torch_variant("2.4.1", "13.0"), nullptr);
  EXPECT_EQ(find_torch_variant("1.7.1", "11.0")->tag, "cu110");
  EXPECT_EQ(find_torch_variant("1.7.1", "11.1"), nullptr);
  EXPECT_EQ(find_torch_variant("1.6.0", "10.2"), nullptr);
  EXPECT_EQ(find_torch_variant("1.13.1", "11.7")->tag, "cu117");
  EXPECT_EQ(find_torch_variant("2.4.1", ""), nullptr);
  EXPECT_TRUE(kernels_run_on(cu124->sass, cu124->ptx, 89));    // sm_86 cubin, same major
  EXPECT_FALSE(kernels_run_on(cu124->sass, cu124->ptx, 120));  // no Blackwell cubin, no PTX
  EXPECT_TRUE(kernels_run_on({90}, 90, 120));                  // PTX runs on later GPUs
  EXPECT_FALSE(kernels_run_on({86}, 0, 80));                   // not on a lower minor
}

}  // namespace
}  // namespace envpin::resolve

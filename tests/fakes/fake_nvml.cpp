// SPDX-License-Identifier: Apache-2.0
// An NVML-shaped shared library for tests: the entry points envpin's probe dlopens, with the
// signatures of NVIDIA's nvml.h, answering for two GPUs (H100 + A100) on driver 550.54.15.
// FAKE_NVML_MODE=init_fails makes nvmlInit_v2 return NVML_ERROR_DRIVER_NOT_LOADED (9).
#include <cstdlib>
#include <cstring>

namespace {
struct Gpu {
  const char* name;
  int major, minor;
  unsigned long long memory;
};
const Gpu kGpus[] = {{"NVIDIA H100 80GB HBM3", 9, 0, 85520809984ull}, {"NVIDIA A100-SXM4-80GB", 8, 0, 85899345920ull}};

bool init_fails() {
  const char* mode = std::getenv("FAKE_NVML_MODE");
  return mode && std::strcmp(mode, "init_fails") == 0;
}
int copy(const char* text, char* out, unsigned length) {
  if (std::strlen(text) + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(out, text);
  return 0;
}
}  // namespace

struct nvmlDevice_st {
  int index;
};
static nvmlDevice_st devices[] = {{0}, {1}};

extern "C" {
int nvmlInit_v2() { return init_fails() ? 9 : 0; }
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int r) { return r == 9 ? "Driver Not Loaded" : r == 0 ? "Success" : "Unknown Error"; }
int nvmlSystemGetDriverVersion(char* out, unsigned length) { return copy("550.54.15", out, length); }
int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 12040;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** device) {
  if (index >= 2) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &devices[index];
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_st* d, char* out, unsigned length) { return copy(kGpus[d->index].name, out, length); }
int nvmlDeviceGetCudaComputeCapability(nvmlDevice_st* d, int* major, int* minor) {
  *major = kGpus[d->index].major;
  *minor = kGpus[d->index].minor;
  return 0;
}
struct nvmlMemory_st {  // nvml.h's name: the probe calls through a pointer to this exact type
  unsigned long long total, free, used;
};
int nvmlDeviceGetMemoryInfo(nvmlDevice_st* d, nvmlMemory_st* m) {
  m->total = kGpus[d->index].memory;
  m->free = m->total;
  m->used = 0;
  return 0;
}
}

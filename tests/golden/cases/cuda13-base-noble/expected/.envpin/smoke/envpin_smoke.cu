// SPDX-License-Identifier: Apache-2.0
// envpin's CUDA smoke test, built by envpin_add_smoke_target() with the consuming project's
// CUDA compiler for the environment's arch list. It proves the GPU runs this build's kernels:
// an integer kernel whose SHA-256 must equal the CPU's, and a float kernel compared exactly.
//
// Usage: envpin-smoke [--require-gpu]
// Exit: 0 pass; 1 digest mismatch or CUDA error (with its meaning); 125 no GPU or no driver
// (CTest SKIP_RETURN_CODE), 1 instead with --require-gpu.
// Prints one human line and one JSON line on stdout.

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "envpin_smoke_sha256.h"

#ifndef ENVPIN_SMOKE_ARCHS
#define ENVPIN_SMOKE_ARCHS "unknown"
#endif

namespace {

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitSkip = 125;
constexpr unsigned kCount = 1u << 20;
constexpr unsigned kRounds = 16;
constexpr float kScale = 2.5f;

// The same mixing on both sides: murmur3's finalizer, iterated.
__host__ __device__ std::uint32_t mix(std::uint32_t i) {
  std::uint32_t h = i * 2654435761u;
  for (unsigned r = 0; r < kRounds; ++r) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    h += r;
  }
  return h;
}

__global__ void integer_kernel(std::uint32_t* out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mix(i);
}

// Every value is exact in binary32: i * 0.25 * 2.5 + 1 needs at most 24 significant bits.
__global__ void float_kernel(float* out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fmaf(kScale, static_cast<float>(i) * 0.25f, 1.0f);
}

std::string sha256_hex(const std::vector<std::uint32_t>& words) {
  // Little-endian bytes whatever the host, so digests compare across machines.
  std::vector<unsigned char> bytes(words.size() * 4);
  for (std::size_t i = 0; i < words.size(); ++i)
    for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<unsigned char>(words[i] >> (8 * b));
  envpin_smoke::Sha256 sha;
  sha.update(bytes.data(), bytes.size());
  return sha.hex();
}

std::string version_text(int v) {  // 12040 -> "12.4"
  return std::to_string(v / 1000) + "." + std::to_string((v % 100) / 10);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

struct Report {
  std::string result = "fail";  // pass, fail, skip
  std::string device;
  int sm = 0;
  int driver = 0;
  int runtime = 0;
  std::string gpu_digest;
  std::string cpu_digest;
  long float_mismatches = -1;
  int cuda_error = 0;
  std::string message;
};

void print(const Report& r) {
  std::printf("smoke: %s: %s\n", r.result == "pass" ? "PASS" : r.result == "skip" ? "SKIP" : "FAIL", r.message.c_str());
  std::printf(
      "{\"result\":%s,\"device\":%s,\"sm\":%d,\"driver_cuda\":%s,\"runtime_cuda\":%s,\"archs\":%s,"
      "\"gpu_sha256\":%s,\"cpu_sha256\":%s,\"float_mismatches\":%ld,\"cuda_error\":%d}\n",
      json_string(r.result).c_str(), json_string(r.device).c_str(), r.sm,
      json_string(r.driver ? version_text(r.driver) : "").c_str(), json_string(version_text(r.runtime)).c_str(),
      json_string(ENVPIN_SMOKE_ARCHS).c_str(), json_string(r.gpu_digest).c_str(), json_string(r.cpu_digest).c_str(),
      r.float_mismatches, r.cuda_error);
}

bool driver_library_present() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
  dlclose(h);
  return true;
}

// What a CUDA error means for this environment (cuda-facts.md §2.5).
std::string meaning(cudaError_t e, const Report& r) {
  const std::string device_sm = r.sm ? "sm_" + std::to_string(r.sm) : "this GPU";
  switch (e) {
    case cudaErrorInsufficientDriver:
      return "the driver (CUDA " + version_text(r.driver) + ") is older than this build's runtime (CUDA " +
             version_text(r.runtime) + "): upgrade the driver or build with an older toolkit";
    case cudaErrorNoDevice:
      return "no CUDA device is visible: on a GPU host, was the container started with --gpus all?";
    case cudaErrorNoKernelImageForDevice:
      return "no kernel image for " + device_sm +
             ": this binary carries " ENVPIN_SMOKE_ARCHS
             "; add the GPU to cuda.gpus (or its SM to the arch list) and rebuild";
    case cudaErrorUnsupportedPtxVersion:
      return "the PTX was built by a newer toolkit than the driver can JIT: upgrade the driver, or build SASS "
             "for " +
             device_sm + " (it is not in " ENVPIN_SMOKE_ARCHS ")";
    case cudaErrorStubLibrary:
      return "libcuda.so.1 is the toolkit's stub, not a driver";
    default:
      return "";
  }
}

int fail(Report& r, cudaError_t e, const char* what) {
  r.result = "fail";
  r.cuda_error = static_cast<int>(e);
  const std::string why = meaning(e, r);
  r.message = std::string(what) + ": " + cudaGetErrorName(e) + " (" + std::to_string(static_cast<int>(e)) +
              "): " + cudaGetErrorString(e) + (why.empty() ? "" : "; " + why);
  print(r);
  return kExitFail;
}

}  // namespace

int main(int argc, char** argv) {
  bool require_gpu = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--require-gpu") == 0) {
      require_gpu = true;
    } else {
      std::fprintf(stderr, "usage: %s [--require-gpu]\n", argv[0]);
      return 64;
    }
  }

  Report r;
  cudaRuntimeGetVersion(&r.runtime);
  cudaDriverGetVersion(&r.driver);
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  // No GPU here: no driver library at all, the toolkit's stub, or a driver with no device.
  const bool no_driver =
      (probe == cudaErrorInsufficientDriver && !driver_library_present()) || probe == cudaErrorStubLibrary;
  // The CPU side needs no GPU: its digest is reported even when the GPU side is skipped.
  std::vector<std::uint32_t> cpu_int(kCount);
  for (unsigned i = 0; i < kCount; ++i) cpu_int[i] = mix(i);
  r.cpu_digest = sha256_hex(cpu_int);

  if (no_driver || probe == cudaErrorNoDevice || (probe == cudaSuccess && count == 0)) {
    const cudaError_t e = probe == cudaSuccess ? cudaErrorNoDevice : probe;
    r.result = require_gpu ? "fail" : "skip";
    r.cuda_error = static_cast<int>(e);
    r.message = std::string("no GPU to run on (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + "): " +
                (no_driver ? "no NVIDIA driver (libcuda.so.1) on this machine"
                           : "the driver sees no device; in a container, was it started with --gpus all?") +
                "; built for " ENVPIN_SMOKE_ARCHS + (require_gpu ? " (--require-gpu)" : "");
    print(r);
    return require_gpu ? kExitFail : kExitSkip;
  }
  if (probe != cudaSuccess) return fail(r, probe, "cudaGetDeviceCount");

  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  r.sm = major * 10 + minor;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) r.device = prop.name;

  std::uint32_t* d_int = nullptr;
  float* d_float = nullptr;
  if (cudaError_t e = cudaMalloc(&d_int, kCount * sizeof(std::uint32_t)); e != cudaSuccess)
    return fail(r, e, "cudaMalloc");
  if (cudaError_t e = cudaMalloc(&d_float, kCount * sizeof(float)); e != cudaSuccess) return fail(r, e, "cudaMalloc");
  const unsigned threads = 256, blocks = (kCount + threads - 1) / threads;
  integer_kernel<<<blocks, threads>>>(d_int, kCount);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return fail(r, e, "integer kernel launch");
  float_kernel<<<blocks, threads>>>(d_float, kCount);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return fail(r, e, "float kernel launch");
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return fail(r, e, "kernels");

  std::vector<std::uint32_t> gpu_int(kCount);
  std::vector<float> gpu_float(kCount);
  if (cudaError_t e = cudaMemcpy(gpu_int.data(), d_int, kCount * sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return fail(r, e, "cudaMemcpy");
  if (cudaError_t e = cudaMemcpy(gpu_float.data(), d_float, kCount * sizeof(float), cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return fail(r, e, "cudaMemcpy");
  cudaFree(d_int);
  cudaFree(d_float);

  r.gpu_digest = sha256_hex(gpu_int);
  r.float_mismatches = 0;
  for (unsigned i = 0; i < kCount; ++i)
    if (gpu_float[i] != kScale * (static_cast<float>(i) * 0.25f) + 1.0f) ++r.float_mismatches;

  const std::string where = r.device + " (sm_" + std::to_string(r.sm) + "), driver CUDA " + version_text(r.driver) +
                            ", runtime CUDA " + version_text(r.runtime) + ", built for " ENVPIN_SMOKE_ARCHS;
  if (r.gpu_digest != r.cpu_digest || r.float_mismatches != 0) {
    r.message = where + ": GPU results differ from the CPU (integer sha256 " + r.gpu_digest.substr(0, 12) + " vs " +
                r.cpu_digest.substr(0, 12) + ", " + std::to_string(r.float_mismatches) + " float mismatches)";
    print(r);
    return kExitFail;
  }
  r.result = "pass";
  r.message = where + ": integer sha256 " + r.gpu_digest.substr(0, 12) + " matches the CPU, " + std::to_string(kCount) +
              " floats exact";
  print(r);
  return kExitPass;
}

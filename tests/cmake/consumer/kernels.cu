// SPDX-License-Identifier: Apache-2.0
// The consumer's own CUDA code, compiled for the architectures envpin chose.
__global__ void consumer_scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

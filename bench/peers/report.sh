#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The environment report people write by hand (the seed material's script): what envpin report
# replaces. Run as the peer of `envpin report`.
uname -a
cat /etc/os-release 2>/dev/null
python3 -c 'import sys, platform; print(sys.version); print(platform.platform())'
nvidia-smi 2>/dev/null || echo "nvidia-smi: not found"
nvcc --version 2>/dev/null || /usr/local/cuda/bin/nvcc --version 2>/dev/null || echo "nvcc: not found"
python3 -m pip freeze 2>/dev/null
dpkg-query -W 2>/dev/null | wc -l

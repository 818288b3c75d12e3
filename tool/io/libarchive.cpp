// SPDX-License-Identifier: Apache-2.0
#include "io/libarchive.hpp"

namespace envpin::io {

const LibArchive& libarchive() {
  static const LibArchive api;
  return api;
}

}  // namespace envpin::io

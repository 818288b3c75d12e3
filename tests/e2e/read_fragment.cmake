# SPDX-License-Identifier: Apache-2.0
# cmake -DFRAGMENT=<.envpin/envpin.cmake> -P read_fragment.cmake: reads a generated fragment as
# EnvPin.cmake does and prints what it defines; fails when a variable is missing or native.
include("${FRAGMENT}")
foreach(var ENVPIN_FRAGMENT_VERSION ENVPIN_MANIFEST_NAME ENVPIN_MANIFEST_SHA256 ENVPIN_CHECK_ENV)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "${FRAGMENT} does not set ${var}")
  endif()
endforeach()
if(NOT ENVPIN_MANIFEST_SHA256 MATCHES "^[0-9a-f]+$" OR ENVPIN_CUDA_ARCHITECTURES MATCHES "native")
  message(FATAL_ERROR "${FRAGMENT}: bad digest or arch list")
endif()
cmake_path(NORMAL_PATH ENVPIN_CHECK_ENV)
message(STATUS "check_env=${ENVPIN_CHECK_ENV}")
message(STATUS "archs=${ENVPIN_CUDA_ARCHITECTURES}")

# SPDX-License-Identifier: Apache-2.0
# Runs the smoke program for `cmake --build . --target smoke`: exit 125 (no GPU here) is a
# clean skip for the build, unless REQUIRE_GPU. Usage:
#   cmake -DPROGRAM=<path> [-DREQUIRE_GPU=ON] -P RunSmoke.cmake
if(REQUIRE_GPU)
  execute_process(COMMAND "${PROGRAM}" --require-gpu RESULT_VARIABLE rc)
else()
  execute_process(COMMAND "${PROGRAM}" RESULT_VARIABLE rc)
endif()
if(rc EQUAL 125)
  message(STATUS "smoke: skipped: no GPU on this machine (REQUIRE_GPU makes this an error)")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "smoke: failed (exit ${rc}); see the line above")
endif()

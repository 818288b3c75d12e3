# SPDX-License-Identifier: Apache-2.0
#[=======================================================================[.rst:
EnvPin
------

Generate a project's pinned environment (Dockerfile, devcontainer.json,
check_env.sh, .dockerignore) from its ``envpin.yaml`` as part of the build.

Load it with ``find_package(EnvPin CONFIG)``, or with ``add_subdirectory`` /
``FetchContent`` of the envpin repository, then call:

.. command:: envpin_add_environment

  .. code-block:: cmake

    envpin_add_environment(MANIFEST <file>)

  Adds the targets

  ``envpin-generate``
    writes the artifacts next to ``<file>`` when the manifest changed
    (``envpin generate``; unchanged files are not rewritten).
  ``envpin-check-generated``
    fails when the committed artifacts differ from what the manifest gives
    (``envpin generate --check``), for CI.

  The ``envpin`` executable is the imported target ``EnvPin::envpin``; set
  ``ENVPIN_EXECUTABLE`` (cache or environment) to use another one.
#]=======================================================================]
include_guard(GLOBAL)

set(ENVPIN_EXECUTABLE "$ENV{ENVPIN_EXECUTABLE}" CACHE FILEPATH
    "envpin executable used by envpin_* functions (default: the EnvPin::envpin target)")

function(_envpin_command out_var)
  if(ENVPIN_EXECUTABLE)
    set(${out_var} "${ENVPIN_EXECUTABLE}" PARENT_SCOPE)
  elseif(TARGET EnvPin::envpin)
    set(${out_var} "$<TARGET_FILE:EnvPin::envpin>" PARENT_SCOPE)
  else()
    message(FATAL_ERROR "envpin: no envpin executable: find_package(EnvPin CONFIG) or set ENVPIN_EXECUTABLE")
  endif()
endfunction()

function(envpin_add_environment)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "MANIFEST" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "envpin_add_environment: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_MANIFEST)
    message(FATAL_ERROR "envpin_add_environment: MANIFEST <file> is required")
  endif()
  cmake_path(ABSOLUTE_PATH arg_MANIFEST BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
  if(NOT EXISTS "${arg_MANIFEST}")
    message(FATAL_ERROR "envpin_add_environment: manifest '${arg_MANIFEST}' does not exist")
  endif()
  _envpin_command(envpin)
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/envpin-generate.stamp")
  add_custom_command(
    OUTPUT "${stamp}"
    COMMAND "${envpin}" generate --manifest "${arg_MANIFEST}"
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS "${arg_MANIFEST}"
    COMMENT "envpin: generating the environment from ${arg_MANIFEST}"
    VERBATIM)
  add_custom_target(envpin-generate DEPENDS "${stamp}")
  add_custom_target(envpin-check-generated
    COMMAND "${envpin}" generate --check --manifest "${arg_MANIFEST}"
    COMMENT "envpin: checking the generated environment is up to date"
    VERBATIM)
  message(STATUS "envpin: environment from ${arg_MANIFEST}")
endfunction()

# SPDX-License-Identifier: Apache-2.0
#[=======================================================================[.rst:
EnvPin
------

Build a project's pinned environment from its ``envpin.yaml``: the generated
artifacts, the CUDA architecture list envpin chose for the fleet, and a CUDA
smoke test that proves the GPU runs this build's kernels.

The module is loaded in one of three ways:

``find_package(EnvPin CONFIG)``
  an installed envpin; the ``envpin`` executable is the imported target
  ``EnvPin::envpin``.

``FetchContent_MakeAvailable(envpin)`` or ``add_subdirectory(envpin)``
  envpin built inside this project. The module is on ``CMAKE_MODULE_PATH``
  afterwards (``include(EnvPin)``), and ``find_package(EnvPin)`` finds it
  when the dependency is declared with ``OVERRIDE_FIND_PACKAGE``. The
  executable is built with the project, so at configure time the arch list
  comes from the committed ``.envpin/envpin.cmake``; on a first configure
  without one, from ``CMAKE_CUDA_ARCHITECTURES`` or ``all-major``, with a
  status line saying so, until ``envpin-generate`` has written it.

``include(EnvPin)``
  with ``CMAKE_MODULE_PATH`` pointing at envpin's ``cmake/`` directory.

Otherwise an ``envpin`` on ``PATH`` is used. Set ``ENVPIN_EXECUTABLE``
(cache or environment variable) to use a particular ``envpin``.

Commands
^^^^^^^^

.. command:: envpin_add_environment

  .. code-block:: cmake

    envpin_add_environment(MANIFEST <file> [LOCK <file>] [OUTPUT_DIR <dir>])

  Adds the targets

  ``envpin-generate``
    runs ``envpin generate`` when the manifest (or the lock) changed;
    unchanged artifacts are not rewritten.
  ``envpin-check-generated``
    fails when the artifacts differ from what the manifest gives
    (``envpin generate --check``), for CI.
  ``envpin-check``
    runs the generated ``check_env.sh`` on this machine. Set
    ``ENVPIN_CHECK_ARGS`` (e.g. ``--allow-no-gpu``) to pass options.

  ``OUTPUT_DIR`` writes the artifacts under ``<dir>`` instead of next to the
  manifest. ``LOCK`` names the lock file the environment is generated from;
  ``envpin-generate`` re-runs when it changes. The manifest is remembered
  for ``envpin_cuda_architectures`` and ``envpin_add_smoke_target``.

.. command:: envpin_cuda_architectures

  .. code-block:: cmake

    envpin_cuda_architectures(<variable> [MANIFEST <file>])

  Sets ``<variable>`` to the CUDA architecture list envpin chose for the
  fleet (for example ``80-real;90``: SASS for each GPU, PTX for the newest),
  at configure time, so it can be ``CMAKE_CUDA_ARCHITECTURES`` before
  ``enable_language(CUDA)``. It runs ``envpin cuda --json`` when an envpin
  executable can be run; otherwise it reads the ``.envpin/envpin.cmake``
  that ``envpin generate`` wrote next to the manifest, and warns when that
  file is older than the manifest. It never yields ``native``, which fails
  on machines without a GPU. ``MANIFEST`` defaults to the one given to
  ``envpin_add_environment``, then to ``envpin.yaml`` in the current
  source directory.

.. command:: envpin_add_smoke_target

  .. code-block:: cmake

    envpin_add_smoke_target([NAME <name>] [REQUIRE_GPU] [ARCHITECTURES <arch>...])

  Builds envpin's smoke program with this project's CUDA compiler and adds
  the target ``<name>`` (default ``smoke``), which runs it:
  ``cmake --build . --target smoke``. The program prints the device, its
  compute capability, the driver and runtime versions, runs an integer and
  a float kernel and compares them with the CPU (SHA-256 of the integers).
  Exit 0 passes; 1 is a mismatch or a CUDA error explained (35 driver too
  old, 209 no kernel image for this GPU, 222 PTX too new, 100 no device);
  125 means no GPU here, which the target reports as skipped. The CTest
  test ``<name>`` (label ``gpu``, ``SKIP_RETURN_CODE 125``) runs the same.

  ``REQUIRE_GPU`` turns "no GPU" into a failure, and requires CUDA to be
  enabled. ``ARCHITECTURES`` overrides the list, which otherwise comes from
  ``envpin_cuda_architectures`` for the environment's manifest, then from
  ``CMAKE_CUDA_ARCHITECTURES``. Without a CUDA compiler (CUDA not enabled),
  the target only reports that the smoke test is unavailable.
  The program needs nothing beyond the CUDA toolkit (its SHA-256 is its own).

Example
^^^^^^^

.. code-block:: cmake

  find_package(EnvPin CONFIG REQUIRED)
  envpin_add_environment(MANIFEST envpin.yaml)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    envpin_cuda_architectures(CMAKE_CUDA_ARCHITECTURES)
    enable_language(CUDA)
  endif()
  envpin_add_smoke_target()
#]=======================================================================]
include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "EnvPin needs CMake 3.20 or newer (cmake_path, string(JSON)); this is ${CMAKE_VERSION}")
endif()

set(_ENVPIN_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")

set(ENVPIN_EXECUTABLE "$ENV{ENVPIN_EXECUTABLE}" CACHE FILEPATH
    "envpin executable used by envpin_* functions (default: the EnvPin::envpin target)")
set(ENVPIN_CHECK_ARGS "" CACHE STRING "options the envpin-check target passes to check_env.sh")

# The envpin command for build-time rules: a path, or a generator expression.
function(_envpin_build_command fn out_var)
  if(ENVPIN_EXECUTABLE)
    set(${out_var} "${ENVPIN_EXECUTABLE}" PARENT_SCOPE)
  elseif(TARGET EnvPin::envpin)
    set(${out_var} "$<TARGET_FILE:EnvPin::envpin>" PARENT_SCOPE)
  else()
    _envpin_on_path(exe)
    if(NOT exe)
      message(FATAL_ERROR "${fn}: no envpin executable: none on PATH; use find_package(EnvPin CONFIG), "
                          "FetchContent/add_subdirectory of envpin, or set ENVPIN_EXECUTABLE")
    endif()
    set(${out_var} "${exe}" PARENT_SCOPE)
  endif()
endfunction()

# An envpin that can run now, at configure time: ENVPIN_EXECUTABLE or an imported (installed)
# EnvPin::envpin. Empty when envpin is only built later by this project.
function(_envpin_configure_command out_var)
  set(exe "")
  if(ENVPIN_EXECUTABLE)
    set(exe "${ENVPIN_EXECUTABLE}")
  elseif(TARGET EnvPin::envpin)
    get_target_property(imported EnvPin::envpin IMPORTED)
    if(imported)
      get_target_property(exe EnvPin::envpin LOCATION)
    endif()
  endif()
  if(exe AND NOT EXISTS "${exe}")
    set(exe "")
  endif()
  if(NOT exe AND NOT TARGET EnvPin::envpin)
    _envpin_on_path(exe)
  endif()
  set(${out_var} "${exe}" PARENT_SCOPE)
endfunction()

# The envpin on PATH (include(EnvPin) alone, with envpin installed by its .deb), or empty.
function(_envpin_on_path out_var)
  find_program(ENVPIN_ON_PATH envpin DOC "the envpin on PATH the EnvPin module uses")
  mark_as_advanced(ENVPIN_ON_PATH)
  set(${out_var} "${ENVPIN_ON_PATH}" PARENT_SCOPE)
  if(NOT ENVPIN_ON_PATH)
    set(${out_var} "" PARENT_SCOPE)
  endif()
endfunction()

function(_envpin_manifest fn given out_var)
  if(given)
    set(manifest "${given}")
  else()
    get_property(manifest GLOBAL PROPERTY ENVPIN_MANIFEST)
    if(NOT manifest)
      set(manifest "envpin.yaml")
    endif()
  endif()
  cmake_path(ABSOLUTE_PATH manifest BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
  if(NOT EXISTS "${manifest}")
    message(FATAL_ERROR "${fn}: manifest '${manifest}' does not exist")
  endif()
  set(${out_var} "${manifest}" PARENT_SCOPE)
endfunction()

function(envpin_add_environment)
  set(fn envpin_add_environment)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "MANIFEST;LOCK;OUTPUT_DIR" "")
  if(arg_UNPARSED_ARGUMENTS)
    list(JOIN arg_UNPARSED_ARGUMENTS " " unknown)
    message(FATAL_ERROR "${fn}: unknown argument(s): ${unknown} "
                        "(expected MANIFEST <file> [LOCK <file>] [OUTPUT_DIR <dir>])")
  endif()
  if(NOT arg_MANIFEST)
    message(FATAL_ERROR "${fn}: MANIFEST <file> is required")
  endif()
  get_property(previous GLOBAL PROPERTY ENVPIN_MANIFEST)
  if(previous)
    message(FATAL_ERROR "${fn}: called twice; this project already has the environment of ${previous}")
  endif()
  _envpin_manifest(${fn} "${arg_MANIFEST}" manifest)
  _envpin_build_command(${fn} envpin)
  cmake_path(GET manifest PARENT_PATH project_dir)

  set(generate_args generate --manifest "${manifest}")
  set(root "${project_dir}")
  if(arg_OUTPUT_DIR)
    cmake_path(ABSOLUTE_PATH arg_OUTPUT_DIR BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE)
    list(APPEND generate_args --output-dir "${arg_OUTPUT_DIR}")
    set(root "${arg_OUTPUT_DIR}")
  endif()
  set(depends "${manifest}")
  if(arg_LOCK)
    cmake_path(ABSOLUTE_PATH arg_LOCK BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
    list(APPEND generate_args --lock "${arg_LOCK}")
    if(EXISTS "${arg_LOCK}")
      list(APPEND depends "${arg_LOCK}")
    else()
      # A rule cannot depend on a file nothing creates; re-run CMake once the lock exists.
      message(STATUS "envpin: lock ${arg_LOCK} does not exist yet")
    endif()
  endif()

  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/envpin-generate.stamp")
  add_custom_command(
    OUTPUT "${stamp}"
    COMMAND "${envpin}" ${generate_args}
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS ${depends}
    COMMENT "envpin: generating the environment from ${manifest}"
    VERBATIM)
  add_custom_target(envpin-generate DEPENDS "${stamp}")
  add_custom_target(envpin-check-generated
    COMMAND "${envpin}" ${generate_args} --check
    COMMENT "envpin: checking the generated environment is up to date"
    VERBATIM)

  # check_env.sh's path comes from the fragment generate writes; the default before that.
  set(ENVPIN_CHECK_ENV "${root}/.envpin/check_env.sh")
  if(EXISTS "${root}/.envpin/envpin.cmake")
    include("${root}/.envpin/envpin.cmake")
  endif()
  separate_arguments(check_args UNIX_COMMAND "${ENVPIN_CHECK_ARGS}")
  add_custom_target(envpin-check
    COMMAND sh "${ENVPIN_CHECK_ENV}" ${check_args}
    WORKING_DIRECTORY "${project_dir}"
    COMMENT "envpin: checking this machine against ${manifest}"
    USES_TERMINAL
    VERBATIM)
  add_dependencies(envpin-check envpin-generate)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")
  set_property(GLOBAL PROPERTY ENVPIN_MANIFEST "${manifest}")
  set_property(GLOBAL PROPERTY ENVPIN_OUTPUT_ROOT "${root}")
  message(STATUS "envpin: environment from ${manifest}")
endfunction()

function(envpin_cuda_architectures)
  set(fn envpin_cuda_architectures)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MANIFEST" "")
  if(ARGC LESS 1 OR ARGV0 STREQUAL "MANIFEST")
    message(FATAL_ERROR "${fn}: the first argument is the variable to set, e.g. "
                        "envpin_cuda_architectures(CMAKE_CUDA_ARCHITECTURES)")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    list(JOIN arg_UNPARSED_ARGUMENTS " " unknown)
    message(FATAL_ERROR "${fn}: unknown argument(s): ${unknown} (expected <variable> [MANIFEST <file>])")
  endif()
  _envpin_manifest(${fn} "${arg_MANIFEST}" manifest)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")
  cmake_path(GET manifest PARENT_PATH project_dir)
  get_property(root GLOBAL PROPERTY ENVPIN_OUTPUT_ROOT)
  get_property(env_manifest GLOBAL PROPERTY ENVPIN_MANIFEST)
  if(NOT root OR NOT manifest STREQUAL env_manifest)
    set(root "${project_dir}")
  endif()
  set(fragment "${root}/.envpin/envpin.cmake")

  _envpin_configure_command(envpin)
  if(envpin)
    execute_process(
      COMMAND "${envpin}" cuda --manifest "${manifest}" --json
      RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(STRIP "${err}" err)
      message(FATAL_ERROR "${fn}: envpin cuda failed for ${manifest}:\n${err}")
    endif()
    string(JSON archs ERROR_VARIABLE json_error GET "${json}" decision cmake_architectures)
    if(json_error)
      message(FATAL_ERROR "${fn}: cannot read the output of ${envpin} cuda --json: ${json_error}")
    endif()
    string(JSON fleet_floor ERROR_VARIABLE json_error GET "${json}" decision driver fleet_floor)
    set(source "${envpin}")
  elseif(EXISTS "${fragment}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${fragment}")
    include("${fragment}")  # sets ENVPIN_* in this function's scope only
    file(SHA256 "${manifest}" digest)
    if(NOT digest STREQUAL ENVPIN_MANIFEST_SHA256)
      message(WARNING "${fn}: ${fragment} is older than ${manifest}; "
                      "run 'envpin generate' and commit the result (using the old arch list)")
    endif()
    if(ENVPIN_CUDA_ARCHITECTURES STREQUAL "")
      message(FATAL_ERROR "${fn}: ${manifest} has no cuda section, so there is no arch list")
    endif()
    set(archs "${ENVPIN_CUDA_ARCHITECTURES}")
    set(source "${fragment}")
  elseif(NOT TARGET EnvPin::envpin)
    message(FATAL_ERROR "${fn}: no envpin to run (none on PATH, no EnvPin::envpin) and no ${fragment}: "
                        "install envpin (apt install ./envpin_<version>_amd64.deb), bring it in with "
                        "FetchContent, or set ENVPIN_EXECUTABLE")
  else()
    # envpin is built by this project (FetchContent, add_subdirectory) and nothing has generated
    # the fragment yet: this configure goes on with a list every GPU the local nvcc knows can run.
    # envpin-generate writes the fleet's list at build time; the next configure takes it.
    set(archs "all-major")
    if(CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES MATCHES "native")
      set(archs "${CMAKE_CUDA_ARCHITECTURES}")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest}")
    message(STATUS "envpin: CUDA architectures ${archs} for now: envpin is built with this project, and "
                   "there is no ${fragment} yet; 'cmake --build . --target envpin-generate' writes the "
                   "fleet's list there and the next configure uses it (commit it to have it from the start)")
    set(${ARGV0} "${archs}" PARENT_SCOPE)
    return()
  endif()
  if(archs STREQUAL "" OR archs MATCHES "native")
    message(FATAL_ERROR "${fn}: envpin gave no usable arch list ('${archs}') for ${manifest}")
  endif()
  # The local nvcc (check_language(CUDA) or CUDACXX found it) builds this project: it must build
  # every arch of the list, and the fleet's driver must run what it builds.
  if(CMAKE_CUDA_COMPILER)
    _envpin_check_local_nvcc(${fn} "${CMAKE_CUDA_COMPILER}" "${archs}" "${fleet_floor}")
  endif()
  message(STATUS "envpin: CUDA architectures ${archs} (from ${source})")
  set(${ARGV0} "${archs}" PARENT_SCOPE)
endfunction()

# Fails when `nvcc` cannot build an arch of `archs` (nvcc --list-gpu-arch); warns when its major
# needs a newer driver than the fleet's `floor` (minor-version compatibility floors: 11.x
# 450.80.02, 12.x 525.60.13, 13.x R580; NVIDIA's CUDA release notes, Table 2).
function(_envpin_check_local_nvcc fn nvcc archs floor)
  execute_process(COMMAND "${nvcc}" --version RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_QUIET)
  if(NOT rc EQUAL 0 OR NOT text MATCHES "release ([0-9]+)\\.([0-9]+)")
    return()
  endif()
  set(major "${CMAKE_MATCH_1}")
  set(version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
  execute_process(COMMAND "${nvcc}" --list-gpu-arch RESULT_VARIABLE rc OUTPUT_VARIABLE listed ERROR_QUIET)
  if(rc EQUAL 0)
    foreach(arch IN LISTS archs)
      string(REGEX MATCH "^[0-9]+" sm "${arch}")
      if(NOT listed MATCHES "compute_${sm}([^0-9]|$)")
        message(FATAL_ERROR "${fn}: the local nvcc ${version} (${nvcc}) cannot build sm_${sm}, which the fleet "
                            "needs (arch list ${archs}): build inside the generated image with cuda.flavor: devel, "
                            "or install a CUDA toolkit whose 'nvcc --list-gpu-arch' lists compute_${sm}")
      endif()
    endforeach()
  endif()
  set(needs_11 "450.80.02")
  set(needs_12 "525.60.13")
  set(needs_13 "580")
  if(floor AND DEFINED needs_${major} AND floor VERSION_LESS needs_${major})
    message(WARNING "${fn}: binaries the local nvcc ${version} builds need an NVIDIA driver of at least "
                    "${needs_${major}} (CUDA ${major}.x), but the fleet's floor (cuda.driver) is ${floor}: "
                    "they fail there with CUDA error 35; build inside the generated image, or install the "
                    "toolkit of the decision")
  endif()
endfunction()

function(envpin_add_smoke_target)
  set(fn envpin_add_smoke_target)
  cmake_parse_arguments(PARSE_ARGV 0 arg "REQUIRE_GPU" "NAME" "ARCHITECTURES")
  if(arg_UNPARSED_ARGUMENTS)
    list(JOIN arg_UNPARSED_ARGUMENTS " " unknown)
    message(FATAL_ERROR "${fn}: unknown argument(s): ${unknown} "
                        "(expected [NAME <name>] [REQUIRE_GPU] [ARCHITECTURES <arch>...])")
  endif()
  if(NOT arg_NAME)
    set(arg_NAME smoke)
  endif()
  if(TARGET ${arg_NAME})
    message(FATAL_ERROR "${fn}: a target named '${arg_NAME}' already exists; pass NAME <other>")
  endif()

  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    if(arg_REQUIRE_GPU)
      message(FATAL_ERROR "${fn}: REQUIRE_GPU needs a CUDA compiler, but CUDA is not enabled: "
                          "set CUDACXX to nvcc and call enable_language(CUDA) first")
    endif()
    set(reason "smoke: unavailable: CUDA is not enabled in this build (no nvcc found; set CUDACXX)")
    add_custom_target(${arg_NAME} COMMAND "${CMAKE_COMMAND}" -E echo "${reason}" VERBATIM)
    add_test(NAME ${arg_NAME} COMMAND sh -c "echo '${reason}'; exit 125")
    set_tests_properties(${arg_NAME} PROPERTIES SKIP_RETURN_CODE 125 LABELS gpu)
    message(STATUS "envpin: ${reason}")
    return()
  endif()

  set(env_manifest "")
  if(arg_ARCHITECTURES)
    set(archs "${arg_ARCHITECTURES}")
  else()
    get_property(env_manifest GLOBAL PROPERTY ENVPIN_MANIFEST)
    if(env_manifest)
      envpin_cuda_architectures(archs MANIFEST "${env_manifest}")
    else()
      set(archs "${CMAKE_CUDA_ARCHITECTURES}")
    endif()
  endif()
  # "all-major" only as envpin's own stand-in on a first configure (envpin_cuda_architectures).
  if(NOT archs OR archs MATCHES "native" OR (archs MATCHES "^all" AND NOT env_manifest))
    message(FATAL_ERROR "${fn}: no explicit arch list ('${archs}'): call envpin_add_environment, "
                        "pass ARCHITECTURES, or set CMAKE_CUDA_ARCHITECTURES from envpin_cuda_architectures")
  endif()
  set(program envpin-${arg_NAME})
  add_executable(${program} "${_ENVPIN_MODULE_DIR}/smoke/envpin_smoke.cu")
  list(JOIN archs " " archs_text)
  set_target_properties(${program} PROPERTIES
    CUDA_ARCHITECTURES "${archs}"
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Static)
  target_compile_definitions(${program} PRIVATE "ENVPIN_SMOKE_ARCHS=\"${archs_text}\"")
  target_link_libraries(${program} PRIVATE ${CMAKE_DL_LIBS})

  set(require "")
  if(arg_REQUIRE_GPU)
    set(require --require-gpu)
  endif()
  add_custom_target(${arg_NAME}
    COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:${program}>" "-DREQUIRE_GPU=${arg_REQUIRE_GPU}"
            -P "${_ENVPIN_MODULE_DIR}/smoke/RunSmoke.cmake"
    DEPENDS ${program}
    COMMENT "envpin: running the CUDA smoke test (${archs_text})"
    USES_TERMINAL
    VERBATIM)
  add_test(NAME ${arg_NAME} COMMAND ${program} ${require})
  set_tests_properties(${arg_NAME} PROPERTIES LABELS gpu)
  if(NOT arg_REQUIRE_GPU)
    set_tests_properties(${arg_NAME} PROPERTIES SKIP_RETURN_CODE 125)
  endif()
  message(STATUS "envpin: smoke target '${arg_NAME}' for CUDA architectures ${archs_text}")
endfunction()

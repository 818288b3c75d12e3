# SPDX-License-Identifier: Apache-2.0
# Script mode: cmake -DENVPIN=<path to envpin> -DOUT=<directory> -P Bundle.cmake
#
# Makes a self-contained envpin: OUT/lib holds the executable, every shared library it loads
# (glibc included) and the dynamic loader; OUT/bin/envpin is a POSIX sh wrapper that starts the
# executable through that loader with that library path. It runs in any Linux image of the same
# architecture that has /bin/sh, whatever libraries (or glibc) the image has, e.g.:
#   docker run -v "$PWD/build/envpin-bundle:/opt/envpin:ro" IMAGE /opt/envpin/bin/envpin check
# A fully static link is not possible with Debian's packages: libcurl's static dependencies
# (Kerberos, LDAP, GnuTLS) are not packaged as static libraries.
cmake_minimum_required(VERSION 3.20)
foreach(var ENVPIN OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "envpin bundle: -D${var}=... is required")
  endif()
endforeach()

file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES "${ENVPIN}"
  RESOLVED_DEPENDENCIES_VAR libraries
  UNRESOLVED_DEPENDENCIES_VAR missing)
if(missing)
  message(FATAL_ERROR "envpin bundle: cannot find ${missing}")
endif()

# The loader the executable names in its PT_INTERP (file(GET_RUNTIME_DEPENDENCIES) skips it).
execute_process(COMMAND readelf -l "${ENVPIN}" OUTPUT_VARIABLE headers RESULT_VARIABLE rc)
string(REGEX MATCH "interpreter: ([^]]+)]" _ "${headers}")
set(loader "${CMAKE_MATCH_1}")
if(NOT rc EQUAL 0 OR loader STREQUAL "" OR NOT EXISTS "${loader}")
  message(FATAL_ERROR "envpin bundle: cannot find the dynamic loader of ${ENVPIN} (readelf -l)")
endif()
get_filename_component(loader_name "${loader}" NAME)

file(REMOVE_RECURSE "${OUT}.tmp")
file(MAKE_DIRECTORY "${OUT}.tmp/lib" "${OUT}.tmp/bin")
file(COPY ${libraries} "${loader}" DESTINATION "${OUT}.tmp/lib" FOLLOW_SYMLINK_CHAIN)
file(COPY "${ENVPIN}" DESTINATION "${OUT}.tmp/lib")
get_filename_component(exe_name "${ENVPIN}" NAME)
# Without debug information (90 MB of the 140 MB): the bundle is for running, not debugging.
find_program(_envpin_strip NAMES strip)
if(_envpin_strip)
  execute_process(COMMAND "${_envpin_strip}" --strip-debug "${OUT}.tmp/lib/${exe_name}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "envpin bundle: strip failed on ${exe_name}")
  endif()
endif()
file(WRITE "${OUT}.tmp/bin/envpin" "#!/bin/sh
# envpin with its own libraries and loader (cmake/Bundle.cmake): runs in any image of this
# architecture, whatever libraries it has.
here=$(cd \"$(dirname \"$0\")/..\" && pwd) || exit 1
exec \"$here/lib/${loader_name}\" --library-path \"$here/lib\" \"$here/lib/${exe_name}\" \"$@\"
")
file(CHMOD "${OUT}.tmp/bin/envpin" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
     WORLD_READ WORLD_EXECUTE)
file(REMOVE_RECURSE "${OUT}")
file(RENAME "${OUT}.tmp" "${OUT}")

# tests/package/run_test.cmake — the find_package test: install this build into a fresh prefix,
# build tests/package (a consumer project) against it alone, run it, and prove that the
# program took its runtimes and kernel headers from that prefix, never from this source or
# build tree. Registered by tests/CMakeLists.txt; run as
#   cmake -DSOURCE_DIR=<repo> -DBUILD_DIR=<build> -DWORK_DIR=<scratch> -DGENERATOR=<g>
#         -DCXX_COMPILER=<c++> [-DSANITIZE_FLAGS=<flags>] -P run_test.cmake
cmake_minimum_required(VERSION 3.20)
foreach(var SOURCE_DIR BUILD_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_test.cmake: -D${var}=... is required")
  endif()
endforeach()

# contains(<var> <text> <part>): whether <part> occurs in <text> (plain text, not a regex:
# paths may hold regex characters).
function(contains var text part)
  string(FIND "${text}" "${part}" at)
  if(at EQUAL -1)
    set(${var} FALSE PARENT_SCOPE)
  else()
    set(${var} TRUE PARENT_SCOPE)
  endif()
endfunction()

# run(<step> <command...>): runs the command in the scratch directory, fails the test with
# its output on a non-zero exit; the output is left in run_output.
function(run step)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${WORK_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(REAL_PATH "${WORK_DIR}" WORK_DIR)
file(REAL_PATH "${SOURCE_DIR}" SOURCE_DIR)
file(REAL_PATH "${BUILD_DIR}" BUILD_DIR)
set(prefix "${WORK_DIR}/prefix")

# 1. The install, as a user runs it.
run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")

# 2. The consumer, configured with nothing but the prefix to find the package by.
set(consumer_flags "")
if(SANITIZE_FLAGS)
  list(APPEND consumer_flags "-DCMAKE_CXX_FLAGS=${SANITIZE_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${SANITIZE_FLAGS}")
endif()
run("configuring the consumer" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/package" -B "${WORK_DIR}/build"
    -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF ${consumer_flags})
file(STRINGS "${WORK_DIR}/build/CMakeCache.txt" found_dir REGEX "^pto_runtime_DIR:")
contains(from_prefix "${found_dir}" "=${prefix}/")
if(NOT from_prefix)
  message(FATAL_ERROR "find_package(pto_runtime) found the package outside ${prefix}: ${found_dir}")
endif()
run("building the consumer" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")

# 3. Its input, the basic example's sources, copied so that the run needs nothing from the
#    source tree: whatever it reads from there is the library's doing and fails step 5.
file(COPY "${SOURCE_DIR}/examples/basic/orchestration.cpp" "${SOURCE_DIR}/examples/basic/orchestration_tmr.cpp"
     "${SOURCE_DIR}/examples/basic/kernels" DESTINATION "${WORK_DIR}/basic")

# 4. The run, with a fresh kernel cache and no environment pointing anywhere.
set(strace_prefix "")
find_program(STRACE strace)
# Not under sanitizers: LeakSanitizer stops the process with ptrace at exit, which fails while
# strace holds it.
if(STRACE AND NOT SANITIZE_FLAGS)
  execute_process(COMMAND "${STRACE}" -f -o /dev/null true RESULT_VARIABLE strace_rc OUTPUT_QUIET ERROR_QUIET)
  if(strace_rc EQUAL 0)
    # %file: every call taking a path (open, stat, access, exec, ...), in every child (-f):
    # the kernel compiles run the compiler, whose -I and reads show up too.
    # -s: whole paths, not their first 32 characters.
    set(strace_prefix "${STRACE}" -f -qq -s 4096 -e trace=%file -o "${WORK_DIR}/strace.txt")
  endif()
endif()
# PATH without the source and build trees (scripts/test_all.sh puts the project's .venv/bin
# first): the compiler lookup walks PATH, and a lookup in the tree is the test's environment,
# not something the installed package does.
set(clean_path "")
string(REPLACE ":" ";" path_entries "$ENV{PATH}")
foreach(entry IN LISTS path_entries)
  string(FIND "${entry}/" "${SOURCE_DIR}/" in_source)
  string(FIND "${entry}/" "${BUILD_DIR}/" in_build)
  if(NOT in_source EQUAL 0 AND NOT in_build EQUAL 0)
    list(APPEND clean_path "${entry}")
  endif()
endforeach()
list(JOIN clean_path ":" clean_path)
run("running the consumer" "${CMAKE_COMMAND}" -E env --unset=PTO_RUNTIME_LIB_DIR --unset=PTO_RUNTIME_INCLUDE_DIR
    "PATH=${clean_path}" "PTO_CACHE_DIR=${WORK_DIR}/cache" "PTO_LOG_DIR=${WORK_DIR}/logs" ${strace_prefix}
    "${WORK_DIR}/build/pto_package_consumer" "${WORK_DIR}/basic")
message(STATUS "consumer output:\n${run_output}")
foreach(runtime host_build_graph tensormap_and_ringbuffer)
  if(NOT run_output MATCHES "OK ${runtime}:")
    message(FATAL_ERROR "the consumer did not report a correct ${runtime} run:\n${run_output}")
  endif()
endforeach()
# The timed run, unless the environment refuses seeded runs (PTO_SIM_EXEC=threads).
set(timed_run TRUE)
if(run_output MATCHES "SKIP timing:" AND "$ENV{PTO_SIM_EXEC}" STREQUAL "threads")
  set(timed_run FALSE)
elseif(NOT run_output MATCHES "OK timing:")
  message(FATAL_ERROR "the consumer did not report its timed run (sim timing profile):\n${run_output}")
endif()
# The timing profiles, beside the runtimes (src/timing_model/CMakeLists.txt).
file(GLOB installed_profile "${prefix}/lib*/pto_runtime/sim_profiles/a2a3.json"
     "${prefix}/lib/*/pto_runtime/sim_profiles/a2a3.json")
if(NOT installed_profile)
  message(FATAL_ERROR "the package has no <libdir>/pto_runtime/sim_profiles/a2a3.json")
endif()
list(GET installed_profile 0 installed_profile)

# 5. Where the files came from.
string(REGEX MATCH "lib_root: [^\n]*" lib_root "${run_output}")
contains(from_prefix "${lib_root}" "lib_root: ${prefix}/")
if(NOT from_prefix OR NOT lib_root MATCHES "/pto_runtime/runtimes$")
  message(FATAL_ERROR "the runtimes were not taken from ${prefix}:\n${run_output}")
endif()
# The compiler's dependency lists, kept in the kernel cache, name every header a kernel and
# an orchestration read.
file(GLOB_RECURSE deps_files "${WORK_DIR}/cache/*.deps")
set(kernel_header_from_prefix FALSE)
foreach(f IN LISTS deps_files)
  file(READ "${f}" deps)
  contains(from_source "${deps}" "${SOURCE_DIR}/include/")
  if(from_source)
    message(FATAL_ERROR "${f} lists headers of the source tree ${SOURCE_DIR}/include:\n${deps}")
  endif()
  contains(from_prefix "${deps}" "${prefix}/include/pto/kernel.h")
  if(from_prefix)
    set(kernel_header_from_prefix TRUE)
  endif()
endforeach()
if(NOT kernel_header_from_prefix)
  message(FATAL_ERROR "no kernel compile read ${prefix}/include/pto/kernel.h (dependency lists: ${deps_files})")
endif()
if(strace_prefix)
  # Every path the program and its compiler children touched: none may lie in the source or
  # build tree except inside this test's own scratch directory or on the way to it (realpath
  # and mkdir -p walk its ancestors).
  file(STRINGS "${WORK_DIR}/strace.txt" calls REGEX "\"/")
  set(outside "")
  foreach(call IN LISTS calls)
    string(REGEX MATCHALL "\"/[^\"]*\"" paths "${call}")
    foreach(p IN LISTS paths)
      string(REPLACE "\"" "" p "${p}")
      string(FIND "${p}/" "${WORK_DIR}/" in_work)
      string(FIND "${WORK_DIR}/" "${p}/" above_work)
      string(FIND "${p}/" "${SOURCE_DIR}/" in_source)
      string(FIND "${p}/" "${BUILD_DIR}/" in_build)
      if(NOT in_work EQUAL 0 AND NOT above_work EQUAL 0 AND (in_source EQUAL 0 OR in_build EQUAL 0))
        list(APPEND outside "${call}")
      endif()
    endforeach()
  endforeach()
  if(outside)
    list(JOIN outside "\n" outside)
    message(FATAL_ERROR "the installed program touched the source or build tree:\n${outside}")
  endif()
  file(READ "${WORK_DIR}/strace.txt" trace)
  contains(kernel_h_read "${trace}" "\"${prefix}/include/pto/kernel.h\"")
  if(NOT kernel_h_read)
    message(FATAL_ERROR "strace saw no read of ${prefix}/include/pto/kernel.h; see ${WORK_DIR}/strace.txt")
  endif()
  # The timed run's profile: the package's own (src/timing_model/CMakeLists.txt installs it).
  contains(profile_read "${trace}" "\"${installed_profile}\"")
  if(timed_run AND NOT profile_read)
    message(FATAL_ERROR "strace saw no read of ${installed_profile}; see ${WORK_DIR}/strace.txt")
  endif()
  message(STATUS "strace: no path of ${SOURCE_DIR} or ${BUILD_DIR} touched outside ${WORK_DIR}")
else()
  message(STATUS "strace not used (missing, not permitted, or a sanitizer build): checked the reported "
                 "lib root and the compilers' dependency lists only")
endif()

# 6. L4: installed exactly when the build found MPI (PTO_HAVE_MPI in its cache), and usable
# through find_package(pto_runtime COMPONENTS l4): a singleton MPI job of one rank.
file(STRINGS "${BUILD_DIR}/CMakeCache.txt" have_mpi REGEX "^PTO_HAVE_MPI:")
file(GLOB l4_libs "${prefix}/lib*/libpto_l4*" "${prefix}/lib/*/libpto_l4*")
if(have_mpi MATCHES "=(1|ON|TRUE)$")
  if(NOT EXISTS "${prefix}/include/pto/l4.h" OR NOT l4_libs OR NOT EXISTS "${WORK_DIR}/build/pto_package_l4_consumer")
    message(FATAL_ERROR "built with MPI, but the package has no usable L4 (pto/l4.h, libpto_l4, "
                        "pto_runtime::l4): ${l4_libs}")
  endif()
  # Leak checking off for this one run: Open MPI's MPI_Init/MPI_Finalize leave allocations
  # LeakSanitizer reports (also from the l4.* ctests under ASan), none of them ours.
  run("running the L4 consumer" "${CMAKE_COMMAND}" -E env "PTO_CACHE_DIR=${WORK_DIR}/cache"
      "PTO_LOG_DIR=${WORK_DIR}/logs" "ASAN_OPTIONS=detect_leaks=0" "${WORK_DIR}/build/pto_package_l4_consumer")
  if(NOT run_output MATCHES "OK l4: rank 0 of 1, x = 42")
    message(FATAL_ERROR "the L4 consumer did not report its run:\n${run_output}")
  endif()
  message(STATUS "L4 consumer: ${run_output}")
elseif(EXISTS "${prefix}/include/pto/l4.h" OR l4_libs)
  message(FATAL_ERROR "built without MPI, yet the package has L4 files: ${l4_libs}")
endif()

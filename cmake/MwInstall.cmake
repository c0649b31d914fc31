# What `cmake --install` puts beside the programs (docs/install.md): the pkg-config file and the
# CMake package of libmpiwatch, share/mpiwatch (the wire's .proto, the example rules and the
# examples' sources), the man pages generated from each program's --help by help2man, the bash
# completion of `mpiwatch`, and the licence. Everything is relative to the prefix, so an
# installed tree can be moved (pkg-config's ${pcfiledir}, the CMake package's own location).

set(MW_DATADIR ${CMAKE_INSTALL_DATADIR}/mpiwatch)

if(TARGET mpiwatch)
  include(CMakePackageConfigHelpers)
  # pkg-config: the prefix is found from the .pc file's own place (pkg-config's ${pcfiledir}).
  file(RELATIVE_PATH MW_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
       ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" MW_PC_TO_PREFIX "${MW_PC_TO_PREFIX}")
  configure_file(${CMAKE_CURRENT_LIST_DIR}/mpiwatch.pc.in ${CMAKE_BINARY_DIR}/gen/mpiwatch.pc
                 @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/gen/mpiwatch.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

  # find_package(mpiwatch): the imported target mpiwatch::mpiwatch (library and header).
  set(MW_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/mpiwatch)
  install(EXPORT mpiwatchTargets NAMESPACE mpiwatch:: DESTINATION ${MW_CMAKEDIR})
  configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mpiwatchConfig.cmake.in
                                ${CMAKE_BINARY_DIR}/gen/mpiwatchConfig.cmake
                                INSTALL_DESTINATION ${MW_CMAKEDIR}
                                PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/gen/mpiwatchConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/gen/mpiwatchConfig.cmake
                ${CMAKE_BINARY_DIR}/gen/mpiwatchConfigVersion.cmake
          DESTINATION ${MW_CMAKEDIR})
endif()

# share/mpiwatch: the wire format, for readers in other languages (e.g. Python's protoc), and
# the examples: their sources (to read and to build against mpiwatch.h) and rules files.
install(FILES ${PROJECT_SOURCE_DIR}/proto/mpiwatch.proto DESTINATION ${MW_DATADIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${MW_DATADIR}/examples
        FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "*.f90" PATTERN "*.F90"
                       PATTERN "*.py" PATTERN "*.ini")
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The Grafana dashboard of the collector's Prometheus page (docs/metrics.md).
if(MW_METRICS)
  install(FILES ${PROJECT_SOURCE_DIR}/share/grafana/mpiwatch-dashboard.json
          DESTINATION ${MW_DATADIR}/grafana)
endif()

# Bash completion of `mpiwatch` (tools/completion/mpiwatch.bash), where bash-completion looks
# for it under a prefix.
install(FILES ${PROJECT_SOURCE_DIR}/tools/completion/mpiwatch.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME mpiwatch)

# Man pages: help2man runs each program's --help and --version at build time. The launcher's
# --help names the library's path; its page names the installed one, not the build tree's.
find_program(HELP2MAN help2man)
option(MW_MAN "Generate man pages with help2man" ON)
if(MW_MAN AND NOT HELP2MAN)
  message(STATUS "help2man not found: no man pages (Debian: help2man)")
endif()
if(MW_MAN AND HELP2MAN)
  set(mw_man_dir ${CMAKE_BINARY_DIR}/man)
  file(MAKE_DIRECTORY ${mw_man_dir})
  set(mw_man_pages)
  # name, target (or "" for the launcher), one line for the page's NAME section
  set(mw_man_list
    "mpiwatch|mpiwatch-launcher|watch the MPI calls of a running job"
    "mpiwatch-collector|mpiwatch-collector|receive, merge and record the samples of an MPI job"
    "mpiwatch-viewer|mpiwatch-viewer|live and replayed views of an MPI job"
    "mpiwatch-export|mpiwatch-export|convert an mpiwatch recording"
    "mpiwatch-feed|mpiwatch-feed|print a collector's live feed or history as JSON lines"
    "mpiwatch-steer|mpiwatch-steer|send a steering request to the ranks of a job"
    "mpiwatch-keygen|mpiwatch-keygen|write a CURVE key pair for mpiwatch"
    "mpiwatch-loadgen|mpiwatch-loadgen|emulate the ranks of a large job sending to a collector"
    "mpiwatch-jobs|mpiwatch-jobs|list and find the running jobs of this user"
    "mpiwatch-top|mpiwatch-top|a terminal view of a running job")
  foreach(entry IN LISTS mw_man_list)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 prog)
    list(GET entry 1 tgt)
    list(GET entry 2 what)
    if(NOT TARGET ${tgt})
      continue()
    endif()
    if(prog STREQUAL "mpiwatch")
      set(exe ${mw_man_dir}/mpiwatch-help)
      set(MW_HELP_FROM ${CMAKE_BINARY_DIR}/tools/mpiwatch)
      set(MW_HELP_LIB_BUILD ${CMAKE_BINARY_DIR}/pmpi-shim/libmpiwatch.so.0)
      set(MW_HELP_LIB_INSTALLED ${CMAKE_INSTALL_FULL_LIBDIR}/libmpiwatch.so.0)
      configure_file(${CMAKE_CURRENT_LIST_DIR}/mpiwatch-help.in ${exe} @ONLY
                     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                                      GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
      set(dep ${CMAKE_BINARY_DIR}/tools/mpiwatch)
    else()
      set(exe $<TARGET_FILE:${tgt}>)
      set(dep ${tgt})
    endif()
    add_custom_command(OUTPUT ${mw_man_dir}/${prog}.1
      COMMAND ${HELP2MAN} --no-info --no-discard-stderr --name=${what} --section=1
              --source=mpiwatch --output=${mw_man_dir}/${prog}.1 ${exe}
      DEPENDS ${dep} ${tgt}
      COMMENT "help2man ${prog}.1" VERBATIM)
    list(APPEND mw_man_pages ${mw_man_dir}/${prog}.1)
  endforeach()
  add_custom_target(mw-man ALL DEPENDS ${mw_man_pages})
  install(FILES ${mw_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

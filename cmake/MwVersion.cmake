# The one version string of every program (--version) and of the installed package files.
#
# MW_VERSION_FULL is PROJECT_VERSION, followed by "+g<commit>" when the source tree is a git
# checkout whose HEAD is not the release tag v<PROJECT_VERSION> (e.g. 0.1.0+g298adec); a
# release tarball, or a build outside git (Spack), gives PROJECT_VERSION alone. It is taken
# at configure time (re-run cmake to refresh it) and written to mw_version.h, which only the
# programs' option parsing includes, so a new commit recompiles nothing else.
set(MW_VERSION_FULL ${PROJECT_VERSION})
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE mw_git_commit RESULT_VARIABLE mw_git_rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --exact-match HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE mw_git_tag OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(mw_git_rc EQUAL 0 AND mw_git_commit AND NOT mw_git_tag STREQUAL "v${PROJECT_VERSION}")
    set(MW_VERSION_FULL "${PROJECT_VERSION}+g${mw_git_commit}")
  endif()
endif()
message(STATUS "mpiwatch version ${MW_VERSION_FULL}")
set(MW_GEN_INCLUDE ${CMAKE_BINARY_DIR}/gen)
configure_file(${CMAKE_CURRENT_LIST_DIR}/mw_version.h.in ${MW_GEN_INCLUDE}/mw_version.h @ONLY)
include_directories(${MW_GEN_INCLUDE})

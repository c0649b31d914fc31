# The MPI function table of this build (docs/function-table.md, "Generated at configure time").
#
# Included by the top-level CMakeLists.txt after MPI was looked for and before any target is
# made. The table is generated from the mpi.h the build compiles against, by
# proto/gen-function-table.py run with the build's MPI compiler wrappers, into
# <build>/proto/gen/mpi_functions.def; every X-macro expansion of the tree includes it through
# MW_FN_TABLE_DEF (proto/mw_fn_def.h), defined here for the whole tree. The result is kept
# with a hash of mpi.h, the generator and the compilers: a later configure reuses it while
# those are unchanged. When generation fails (no python3, an mpi.h the generator cannot
# parse), or when the build has no MPI (a collector-only build), the checked-in
# proto/mpi_functions.def is copied there instead, with a message saying so. The checked-in
# file stays the reviewed table of Open MPI 4.1 and the legacy table of the wire (mw_fnmap.h).

option(MW_GENERATE_FUNCTION_TABLE
       "Generate the MPI function table from the mpi.h built against (else the checked-in one)"
       ON)
set(MW_FN_TABLE_CHECKED_IN ${CMAKE_CURRENT_LIST_DIR}/mpi_functions.def)
set(MW_FN_TABLE_GENERATOR ${CMAKE_CURRENT_LIST_DIR}/gen-function-table.py)
set(MW_FN_TABLE ${CMAKE_BINARY_DIR}/proto/gen/mpi_functions.def)
set(mw_fn_stamp ${MW_FN_TABLE}.sha256)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/proto/gen)

# The Fortran wrapper asked for the Fortran bindings (mpi.mod, the mpif.h library): the one of
# the same MPI as MPI_C_COMPILER (mpicc.mpich -> mpif90.mpich), unless given.
set(mw_fc_guess "")
if(MPI_C_COMPILER)
  get_filename_component(mw_cc_dir ${MPI_C_COMPILER} DIRECTORY)
  get_filename_component(mw_cc_name ${MPI_C_COMPILER} NAME)
  string(REPLACE "mpicc" "mpif90" mw_fc_name "${mw_cc_name}")
  if(NOT mw_fc_name STREQUAL mw_cc_name)
    find_program(mw_fc_found ${mw_fc_name} HINTS ${mw_cc_dir} NO_CACHE)
    if(mw_fc_found)
      set(mw_fc_guess ${mw_fc_found})
    endif()
  endif()
endif()
set(MW_MPI_FORTRAN_WRAPPER "${mw_fc_guess}" CACHE STRING
    "MPI Fortran wrapper whose bindings the function table's Fortran columns describe")

find_program(MW_PYTHON3 NAMES python3)
set(mw_fn_why "")
if(NOT MW_GENERATE_FUNCTION_TABLE)
  set(mw_fn_why "MW_GENERATE_FUNCTION_TABLE is OFF")
elseif(NOT MPI_C_FOUND OR NOT MPI_C_COMPILER)
  set(mw_fn_why "no MPI C compiler in this build")
elseif(NOT MW_PYTHON3)
  set(mw_fn_why "no python3 to run proto/gen-function-table.py")
endif()

set(mw_mpi_h "")
if(NOT mw_fn_why)
  foreach(mw_dir IN LISTS MPI_C_HEADER_DIR MPI_C_INCLUDE_DIRS)
    if(NOT mw_mpi_h AND EXISTS ${mw_dir}/mpi.h)
      set(mw_mpi_h ${mw_dir}/mpi.h)
    endif()
  endforeach()
  if(NOT mw_mpi_h)
    set(mw_fn_why "mpi.h not found in ${MPI_C_HEADER_DIR} ${MPI_C_INCLUDE_DIRS}")
  endif()
endif()

if(NOT mw_fn_why)
  file(SHA256 ${mw_mpi_h} mw_h_hash)
  file(SHA256 ${MW_FN_TABLE_GENERATOR} mw_g_hash)
  string(SHA256 mw_fn_hash
         "${mw_h_hash} ${mw_g_hash} ${MPI_C_COMPILER} ${MW_MPI_FORTRAN_WRAPPER} ${MW_FORTRAN}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${mw_mpi_h}
                                                                ${MW_FN_TABLE_GENERATOR})
  set(mw_old_hash "")
  if(EXISTS ${mw_fn_stamp} AND EXISTS ${MW_FN_TABLE})
    file(READ ${mw_fn_stamp} mw_old_hash)
    string(STRIP "${mw_old_hash}" mw_old_hash)
  endif()
  if(mw_old_hash STREQUAL mw_fn_hash)
    message(STATUS "MPI function table: ${MW_FN_TABLE} reused (mpi.h and generator unchanged)")
  else()
    set(mw_gen_args --mpicc ${MPI_C_COMPILER} --out ${MW_FN_TABLE}.tmp --fortran-optional)
    if(NOT MW_FORTRAN)
      list(APPEND mw_gen_args --no-fortran)
    elseif(MW_MPI_FORTRAN_WRAPPER)
      list(APPEND mw_gen_args --mpifort ${MW_MPI_FORTRAN_WRAPPER})
    endif()
    execute_process(COMMAND ${MW_PYTHON3} ${MW_FN_TABLE_GENERATOR} ${mw_gen_args}
                    RESULT_VARIABLE mw_rc OUTPUT_VARIABLE mw_out ERROR_VARIABLE mw_err
                    TIMEOUT 300)
    if(mw_rc EQUAL 0 AND EXISTS ${MW_FN_TABLE}.tmp)
      file(RENAME ${MW_FN_TABLE}.tmp ${MW_FN_TABLE})
      file(WRITE ${mw_fn_stamp} "${mw_fn_hash}\n")
      string(REGEX MATCH "[0-9]+ rows; [^;]+; [0-9]+ with Fortran \\([0-9]+ with f08\\)"
             mw_summary "${mw_err}")
      message(STATUS "MPI function table generated from ${mw_mpi_h}: ${mw_summary}")
    else()
      file(REMOVE ${MW_FN_TABLE}.tmp ${mw_fn_stamp})
      string(STRIP "${mw_err}" mw_err)
      set(mw_fn_why "proto/gen-function-table.py failed on ${mw_mpi_h}: ${mw_err}")
    endif()
  endif()
endif()

if(mw_fn_why)
  file(REMOVE ${mw_fn_stamp})
  configure_file(${MW_FN_TABLE_CHECKED_IN} ${MW_FN_TABLE} COPYONLY)
  if(MW_GENERATE_FUNCTION_TABLE AND MPI_C_FOUND)
    message(WARNING "MPI function table: ${mw_fn_why}. Falling back to the checked-in "
                    "proto/mpi_functions.def (Open MPI 4.1's table): with another MPI, functions "
                    "it does not declare are not wrapped and the build may fail to compile.")
  else()
    message(STATUS "MPI function table: the checked-in proto/mpi_functions.def (${mw_fn_why})")
  endif()
endif()

# Same as the checked-in table? (It is for Debian 12's Open MPI; said, not required.)
file(SHA256 ${MW_FN_TABLE} mw_t1)
file(SHA256 ${MW_FN_TABLE_CHECKED_IN} mw_t2)
if(mw_t1 STREQUAL mw_t2)
  set(MW_FN_TABLE_IS_CHECKED_IN ON)
  message(STATUS "MPI function table: identical to the checked-in proto/mpi_functions.def")
else()
  set(MW_FN_TABLE_IS_CHECKED_IN OFF)
  message(STATUS "MPI function table: differs from the checked-in proto/mpi_functions.def "
                 "(another MPI or version); see ${MW_FN_TABLE}")
endif()

# The one path every expansion of the table includes (proto/mw_fn_def.h).
add_compile_definitions(MW_FN_TABLE_DEF="${MW_FN_TABLE}")

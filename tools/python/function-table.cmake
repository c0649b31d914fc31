# cmake -DDEF=mpi_functions.def -DOUT=function_table.txt -P function-table.cmake: the names and
# kinds of an MPI function table, one "MPI_Name KIND" line per function id from 1 (the row order
# of the .def), for the Python package (mpiwatch/functions.py).
file(STRINGS ${DEF} rows REGEX "^MW_FN\\(")
set(text "")
foreach(row IN LISTS rows)
  string(REGEX REPLACE "^MW_FN\\(([A-Za-z0-9_]+), *[^,]+, *([A-Z]+),.*" "MPI_\\1 \\2" line "${row}")
  string(APPEND text "${line}\n")
endforeach()
file(WRITE ${OUT}.tmp "${text}")
file(RENAME ${OUT}.tmp ${OUT})

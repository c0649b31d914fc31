! known_fh: the known-call pattern of known_c.c in Fortran through mpif.h (the oldest
! Fortran binding, which reaches Open MPI's mpi_*_ entry points). Datatypes are chosen so
! that the byte counts equal the C program's: MPI_INTEGER is 4 bytes, MPI_DOUBLE_PRECISION 8.
program known_fh
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: prog = 'known_fh'
  include 'known_body.inc'
end program known_fh

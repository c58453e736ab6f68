! fortran_probe: a Fortran program built with Debian's MPICH (mpif90.mpich:
! libmpichfort.so.12 and libmpich.so.12) that test/run-all section 6 runs on
! this build.  It sums the ranks with MPI_Allreduce through `use mpi` and
! prints "fortran_probe ok: size N" only when the sum is right.
program fortran_probe
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, isum
  double precision :: dsum
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  isum = rank + 1
  dsum = dble(rank)
  call MPI_Allreduce(MPI_IN_PLACE, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (isum /= nprocs * (nprocs + 1) / 2 .or. dsum /= dble(nprocs * (nprocs - 1) / 2)) then
    print *, 'fortran_probe: rank', rank, 'got sums', isum, dsum
    call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  end if
  call MPI_Finalize(ierr)
  if (rank == 0) print '(a,i0)', 'fortran_probe ok: size ', nprocs
end program fortran_probe

! f08_allreduce: MPI's Fortran 2008 bindings (use mpi_f08) on this build.
! Each rank passes a ring message of MPI_REAL values, then the ranks sum
! MPI_REAL8 and MPI_INTEGER values with MPI_Allreduce; every result is
! checked, and the program stops with a non-zero code at the first error.
program f08_allreduce
  use mpi_f08
  implicit none
  integer :: rank, nprocs, left, right, i, isum
  real :: sendbuf(64), recvbuf(64)
  real(8) :: dsum
  type(MPI_Status) :: status
  integer :: count

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)

  do i = 1, 64
    sendbuf(i) = real(rank * 1000 + i)
  end do
  recvbuf = -1.0
  call MPI_Sendrecv(sendbuf, 64, MPI_REAL, right, 7, recvbuf, 64, MPI_REAL, left, 7, &
                    MPI_COMM_WORLD, status)
  call MPI_Get_count(status, MPI_REAL, count)
  if (count /= 64 .or. status%MPI_SOURCE /= left .or. status%MPI_TAG /= 7) then
    print *, 'rank', rank, ': bad status: count', count, 'source', status%MPI_SOURCE
    error stop 2
  end if
  do i = 1, 64
    if (recvbuf(i) /= real(left * 1000 + i)) then
      print *, 'rank', rank, ': element', i, 'is', recvbuf(i), 'expected', left * 1000 + i
      error stop 3
    end if
  end do

  dsum = real(rank, 8) + 0.5d0
  call MPI_Allreduce(MPI_IN_PLACE, dsum, 1, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD)
  isum = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (dsum /= real(nprocs * (nprocs - 1), 8) / 2 + 0.5d0 * nprocs .or. &
      isum /= nprocs * (nprocs + 1) / 2) then
    print *, 'rank', rank, ': allreduce gave', dsum, isum
    error stop 4
  end if

  call MPI_Finalize()
  if (rank == 0) print '(a)', ' No Errors'
end program f08_allreduce

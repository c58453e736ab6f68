/*
 * ch4:llc netmod - RMA windows.  Windows are MPIDIG's (MPI_Win_allocate and
 * MPI_Win_allocate_shared put each node's windows in one shared segment);
 * llc_rma.h copies puts and gets within such a segment itself, everything
 * else is MPIDIG's active messages (LLC_CAP_RMA is reserved).
 */
#include <mpidimpl.h>
#include "llc_impl.h"

int MPIDI_LLC_rma_range_error(const char *op, int target_rank, MPI_Aint lo, MPI_Aint hi,
                              MPI_Aint size)
{
    int mpi_errno = MPI_SUCCESS;
    char what[256];
    snprintf(what, sizeof(what),
             "%s to rank %d of the window: bytes %ld to %ld from the start of its part of the "
             "window, which has %ld bytes; nothing was written or read", op, target_rank,
             (long) lo, (long) (hi - 1), (long) size);
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_RMA_RANGE, "**fail", "**fail %s", what);
    return mpi_errno;
}

int MPIDI_LLC_mpi_win_set_info(MPIR_Win * win, MPIR_Info * info)
{
    return MPIDIG_mpi_win_set_info(win, info);
}

int MPIDI_LLC_mpi_win_get_info(MPIR_Win * win, MPIR_Info ** info_p_p)
{
    return MPIDIG_mpi_win_get_info(win, info_p_p);
}

int MPIDI_LLC_mpi_win_free(MPIR_Win ** win_ptr)
{
    return MPIDIG_mpi_win_free(win_ptr);
}

int MPIDI_LLC_mpi_win_create(void *base, MPI_Aint length, int disp_unit, MPIR_Info * info,
                             MPIR_Comm * comm_ptr, MPIR_Win ** win_ptr)
{
    return MPIDIG_mpi_win_create(base, length, disp_unit, info, comm_ptr, win_ptr);
}

int MPIDI_LLC_mpi_win_attach(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPIDIG_mpi_win_attach(win, base, size);
}

int MPIDI_LLC_mpi_win_allocate_shared(MPI_Aint size, int disp_unit, MPIR_Info * info_ptr,
                                      MPIR_Comm * comm_ptr, void **base_ptr, MPIR_Win ** win_ptr)
{
    return MPIDIG_mpi_win_allocate_shared(size, disp_unit, info_ptr, comm_ptr, base_ptr, win_ptr);
}

int MPIDI_LLC_mpi_win_detach(MPIR_Win * win, const void *base)
{
    return MPIDIG_mpi_win_detach(win, base);
}

int MPIDI_LLC_mpi_win_allocate(MPI_Aint length, int disp_unit, MPIR_Info * info,
                               MPIR_Comm * comm_ptr, void *baseptr, MPIR_Win ** win_ptr)
{
    return MPIDIG_mpi_win_allocate(length, disp_unit, info, comm_ptr, baseptr, win_ptr);
}

int MPIDI_LLC_mpi_win_create_dynamic(MPIR_Info * info, MPIR_Comm * comm, MPIR_Win ** win)
{
    return MPIDIG_mpi_win_create_dynamic(info, comm, win);
}

int MPIDI_LLC_mpi_win_create_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_win_allocate_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_win_allocate_shared_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_win_create_dynamic_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_win_attach_hook(MPIR_Win * win, void *base, MPI_Aint size)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_win_detach_hook(MPIR_Win * win, const void *base)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_win_free_hook(MPIR_Win * win)
{
    return MPI_SUCCESS;
}

/*
 * ch4:llc netmod - object hooks.  libllc keeps no per-communicator,
 * per-datatype or per-op state yet, so these only accept the object.
 * Dynamic processes are not supported and say so.
 */
#include <mpidimpl.h>
#include "llc_impl.h"

#define LLC_NO_DYNAMIC "ch4:llc does not support dynamic processes (MPI_Comm_spawn, MPI_Comm_connect/accept, MPI_Comm_join)"

int MPIDI_LLC_comm_set_hints(MPIR_Comm * comm_ptr, MPIR_Info * info)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_comm_commit_pre_hook(MPIR_Comm * comm)
{
    comm->dev.ch4.netmod.llc.coll_state = NULL;
    comm->dev.ch4.netmod.llc.coll_shadow = NULL;
    comm->dev.ch4.netmod.llc.coll_setup = 0;
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_comm_commit_post_hook(MPIR_Comm * comm)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_comm_free_hook(MPIR_Comm * comm)
{
    MPIDI_LLC_coll_comm_free(comm);
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_type_commit_hook(MPIR_Datatype * datatype_p)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_type_free_hook(MPIR_Datatype * datatype_p)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_op_commit_hook(MPIR_Op * op_p)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_op_free_hook(MPIR_Op * op_p)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_get_local_upids(MPIR_Comm * comm, int **local_upid_size, char **local_upids)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_UNSUPPORTED_OPERATION, "**fail", "**fail %s",
                  LLC_NO_DYNAMIC);
    return mpi_errno;
}

int MPIDI_LLC_upids_to_gpids(int size, int *remote_upid_size, char *remote_upids,
                             uint64_t * remote_gpids)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_UNSUPPORTED_OPERATION, "**fail", "**fail %s",
                  LLC_NO_DYNAMIC);
    return mpi_errno;
}

int MPIDI_LLC_dynamic_send(uint64_t remote_gpid, int tag, const void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_UNSUPPORTED_OPERATION, "**fail", "**fail %s",
                  LLC_NO_DYNAMIC);
    return mpi_errno;
}

int MPIDI_LLC_dynamic_recv(int tag, void *buf, int size, int timeout)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_ERR_SET1(mpi_errno, MPI_ERR_UNSUPPORTED_OPERATION, "**fail", "**fail %s",
                  LLC_NO_DYNAMIC);
    return mpi_errno;
}

int MPIDI_LLC_mpi_psend_init(const void *buf, int partitions, MPI_Aint count,
                             MPI_Datatype datatype, int dest, int tag, MPIR_Comm * comm,
                             MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** request)
{
    return MPIDIG_mpi_psend_init(buf, partitions, count, datatype, dest, tag, comm, info,
                                 request);
}

int MPIDI_LLC_mpi_precv_init(void *buf, int partitions, MPI_Aint count,
                             MPI_Datatype datatype, int source, int tag, MPIR_Comm * comm,
                             MPIR_Info * info, MPIDI_av_entry_t * av, MPIR_Request ** request)
{
    return MPIDIG_mpi_precv_init(buf, partitions, count, datatype, source, tag, comm, info,
                                 request);
}

void *MPIDI_LLC_mpi_alloc_mem(MPI_Aint size, MPIR_Info * info_ptr)
{
    return MPIDIG_mpi_alloc_mem(size, info_ptr);
}

int MPIDI_LLC_mpi_free_mem(void *ptr)
{
    return MPIDIG_mpi_free_mem(ptr);
}

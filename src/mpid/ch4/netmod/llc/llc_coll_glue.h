/*
 * ch4:llc netmod - collectives.  MPI_Bcast and MPI_Alltoall run mpich-llc's
 * self-tuning algorithms (src/coll: virtual-rank broadcast, dynamic Alltoall
 * selection) unless LLC_BCAST=mpich / LLC_ALLTOALL=mpich; every other
 * collective is MPICH's own (the active-message fallbacks).
 */
#ifndef LLC_COLL_GLUE_H_INCLUDED
#define LLC_COLL_GLUE_H_INCLUDED

#include "llc_impl.h"

/* MPICH's fallback versions of these two are renamed out of the way in
 * netmod_inline.h; the ones below replace them. */
int MPIDI_LLC_mpi_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                        MPIR_Comm * comm, MPIR_Errflag_t * errflag);
int MPIDI_LLC_mpi_alltoall(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                           MPIR_Comm * comm, MPIR_Errflag_t * errflag);

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_bcast(void *buffer, MPI_Aint count,
                                                MPI_Datatype datatype, int root,
                                                MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    return MPIDI_LLC_mpi_bcast(buffer, count, datatype, root, comm, errflag);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_alltoall(const void *sendbuf, MPI_Aint sendcount,
                                                   MPI_Datatype sendtype, void *recvbuf,
                                                   MPI_Aint recvcount, MPI_Datatype recvtype,
                                                   MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    return MPIDI_LLC_mpi_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm, errflag);
}

#endif /* LLC_COLL_GLUE_H_INCLUDED */

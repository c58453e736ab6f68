/*
 * ch4:llc netmod - everything MPICH's ch4 inlines from this netmod.
 *
 * Point-to-point (send, receive, probe, matched probe, cancel) is native:
 * llc_pt2pt.h calls libllc's tagged messages, which match inside libllc.
 * MPI_Put and MPI_Get to a process of the node in a window of shared memory
 * are copies by the caller (llc_rma.h); the rest of RMA and partitioned
 * communication take MPICH's active-message fallbacks (MPIDIG) and reach
 * libllc through llc_am.h.  Collectives are MPICH's own except
 * MPI_Bcast and MPI_Alltoall (llc_coll_glue.h).
 */
#ifndef NETMOD_INLINE_H_INCLUDED
#define NETMOD_INLINE_H_INCLUDED

#include "llc_pt2pt.h"
/* take MPICH's fallback RMA except put and get, which llc_rma.h provides */
#define MPIDI_NM_mpi_put MPIDI_LLC_unused_fallback_put
#define MPIDI_NM_mpi_get MPIDI_LLC_unused_fallback_get
#include "netmod_am_fallback_rma.h"
#undef MPIDI_NM_mpi_put
#undef MPIDI_NM_mpi_get
#include "llc_rma.h"
#include "netmod_am_fallback_part.h"
/* take MPICH's fallback collectives except the two that src/coll provides */
#define MPIDI_NM_mpi_bcast MPIDI_LLC_unused_fallback_bcast
#define MPIDI_NM_mpi_alltoall MPIDI_LLC_unused_fallback_alltoall
#include "netmod_am_fallback_coll.h"
#undef MPIDI_NM_mpi_bcast
#undef MPIDI_NM_mpi_alltoall
#include "llc_coll_glue.h"

#include "llc_am.h"
#include "llc_proc.h"
#include "llc_noinline.h"

#endif /* NETMOD_INLINE_H_INCLUDED */

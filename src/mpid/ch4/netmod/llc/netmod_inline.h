/*
 * ch4:llc netmod - everything MPICH's ch4 inlines from this netmod.
 *
 * Point-to-point (send, receive, probe, matched probe, cancel) is native:
 * llc_pt2pt.h calls libllc's tagged messages, which match inside libllc.
 * One-sided operations to a process of the node in a window of shared
 * memory are done by the caller (llc_rma.h), contiguous puts and gets to
 * processes of other nodes by libllc's llc_put / llc_get (llc_win_net.c);
 * the rest of RMA and partitioned communication take MPICH's active-message
 * fallbacks (MPIDIG) and reach libllc through llc_am.h.  Collectives are MPICH's own except
 * MPI_Bcast and MPI_Alltoall (llc_coll_glue.h).
 */
#ifndef NETMOD_INLINE_H_INCLUDED
#define NETMOD_INLINE_H_INCLUDED

#include "llc_pt2pt.h"
/* take MPICH's fallback RMA except the operations llc_rma.h provides (it
 * calls the fallback itself where it does not do them) */
#define MPIDI_NM_mpi_put MPIDI_LLC_unused_fallback_put
#define MPIDI_NM_mpi_get MPIDI_LLC_unused_fallback_get
#define MPIDI_NM_mpi_rput MPIDI_LLC_unused_fallback_rput
#define MPIDI_NM_mpi_rget MPIDI_LLC_unused_fallback_rget
#define MPIDI_NM_mpi_accumulate MPIDI_LLC_unused_fallback_accumulate
#define MPIDI_NM_mpi_raccumulate MPIDI_LLC_unused_fallback_raccumulate
#define MPIDI_NM_mpi_get_accumulate MPIDI_LLC_unused_fallback_get_accumulate
#define MPIDI_NM_mpi_rget_accumulate MPIDI_LLC_unused_fallback_rget_accumulate
#define MPIDI_NM_mpi_fetch_and_op MPIDI_LLC_unused_fallback_fetch_and_op
#define MPIDI_NM_mpi_compare_and_swap MPIDI_LLC_unused_fallback_compare_and_swap
#define MPIDI_NM_rma_win_cmpl_hook MPIDI_LLC_unused_fallback_win_cmpl_hook
#define MPIDI_NM_rma_win_local_cmpl_hook MPIDI_LLC_unused_fallback_win_local_cmpl_hook
#define MPIDI_NM_rma_target_cmpl_hook MPIDI_LLC_unused_fallback_target_cmpl_hook
#define MPIDI_NM_rma_target_local_cmpl_hook MPIDI_LLC_unused_fallback_target_local_cmpl_hook
#define MPIDI_NM_mpi_win_lock MPIDI_LLC_unused_fallback_win_lock
#define MPIDI_NM_mpi_win_unlock MPIDI_LLC_unused_fallback_win_unlock
#define MPIDI_NM_mpi_win_lock_all MPIDI_LLC_unused_fallback_win_lock_all
#define MPIDI_NM_mpi_win_unlock_all MPIDI_LLC_unused_fallback_win_unlock_all
#include "netmod_am_fallback_rma.h"
#undef MPIDI_NM_mpi_put
#undef MPIDI_NM_mpi_get
#undef MPIDI_NM_mpi_rput
#undef MPIDI_NM_mpi_rget
#undef MPIDI_NM_mpi_accumulate
#undef MPIDI_NM_mpi_raccumulate
#undef MPIDI_NM_mpi_get_accumulate
#undef MPIDI_NM_mpi_rget_accumulate
#undef MPIDI_NM_mpi_fetch_and_op
#undef MPIDI_NM_mpi_compare_and_swap
#undef MPIDI_NM_rma_win_cmpl_hook
#undef MPIDI_NM_rma_win_local_cmpl_hook
#undef MPIDI_NM_rma_target_cmpl_hook
#undef MPIDI_NM_rma_target_local_cmpl_hook
#undef MPIDI_NM_mpi_win_lock
#undef MPIDI_NM_mpi_win_unlock
#undef MPIDI_NM_mpi_win_lock_all
#undef MPIDI_NM_mpi_win_unlock_all
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

/*
 * ch4:llc netmod - MPI_Put and MPI_Get by load and store within a node.
 *
 * MPI_Win_allocate and MPI_Win_allocate_shared windows live in one shared
 * segment per node: MPIDIG maps it in every process of the node and keeps
 * each local process's base address, size and displacement unit in the
 * window's shared table.  A put or get to another process of the node in
 * such a window is then a copy between the caller's buffer and the target's
 * window, done by the caller: no message, no action of the target, complete
 * when the call returns.  The copy is bounds-checked against the target's
 * part of the segment: an access outside it fails with MPI_ERR_RMA_RANGE
 * naming the target and the bytes, and touches nothing.
 *
 * Every other operation, and puts and gets to processes on other nodes or
 * in windows of the caller's own memory (MPI_Win_create, dynamic windows),
 * takes MPICH's active-message path (MPIDIG).  Synchronisation is MPIDIG's:
 * its lock and lock_all wait for the target's grant and its post/start
 * wait for the post before they return, so a direct access never precedes
 * the epoch; and every synchronisation message reaches the other process
 * through libllc's shared-memory ring, whose chunks are sealed with a
 * release store and read with an acquire load, which orders the copies made
 * before it.  Accumulate operations stay on the target-applied path (they
 * must be atomic with respect to each other), as MPI allows concurrent put
 * and accumulate to be undefined.
 */
#ifndef LLC_RMA_H_INCLUDED
#define LLC_RMA_H_INCLUDED

#include "llc_impl.h"

/* Where target_rank's part of a node-shared window starts, or NULL when the
 * access takes MPIDIG's path (no shared segment, the target is this process
 * or on another node).  size and disp_unit describe that part. */
MPL_STATIC_INLINE_PREFIX char *MPIDI_LLC_win_local_part(MPIR_Win * win, int target_rank,
                                                        MPI_Aint * size, int *disp_unit)
{
    MPIDIG_win_shared_info_t *table = MPIDIG_WIN(win, shared_table);
    const int *intranode = win->comm_ptr->intranode_table;
    int local;

    if (table == NULL || MPIDIG_WIN(win, mmap_addr) == NULL || intranode == NULL ||
        target_rank == win->comm_ptr->rank || target_rank < 0 ||
        target_rank >= win->comm_ptr->local_size)
        return NULL;
    /* Not in a post/start epoch: MPIDIG counts the posts an origin has
     * received in one number, which its MPI_Win_start compares with the
     * group's size and then clears, so a post for the next epoch that comes
     * early (from a target that has finished this one) is lost or makes the
     * count overshoot, and that MPI_Win_start never returns.  Puts copied
     * here finish epochs sooner and made that race frequent (MPICH's
     * rma/pscw_ordering_shm hung); on MPIDIG's path it stays as rare as
     * before. */
    if (MPIDIG_WIN(win, sync).access_epoch_type == MPIDIG_EPOTYPE_START)
        return NULL;
    local = intranode[target_rank];
    if (local < 0)
        return NULL;
    *size = table[local].size;
    *disp_unit = table[local].disp_unit;
    /* a part of 0 bytes has no base; any access to it is out of range */
    return table[local].shm_base_addr ? (char *) table[local].shm_base_addr
        : (char *) MPIDIG_WIN(win, mmap_addr);
}

/* The bytes count elements of datatype at displacement disp touch, as
 * [*lo, *hi) relative to the start of the target's part. */
MPL_STATIC_INLINE_PREFIX void MPIDI_LLC_rma_span(MPI_Aint disp, int disp_unit, int count,
                                                 MPI_Datatype datatype, MPI_Aint * lo,
                                                 MPI_Aint * hi)
{
    MPI_Aint extent, true_lb, true_ub, reach;
    if (HANDLE_IS_BUILTIN(datatype)) {
        MPIR_Datatype_get_size_macro(datatype, extent);
        true_lb = 0;
        true_ub = extent;
    } else {
        MPIR_Datatype *dtp;
        MPIR_Datatype_get_ptr(datatype, dtp);
        extent = dtp->extent;
        true_lb = dtp->true_lb;
        true_ub = dtp->true_ub;
    }
    reach = (MPI_Aint) (count - 1) * extent;
    *lo = disp * disp_unit + true_lb + (reach < 0 ? reach : 0);
    *hi = disp * disp_unit + true_ub + (reach > 0 ? reach : 0);
}

/* MPI_ERR_RMA_RANGE for an access of [lo, hi) to target_rank's part of size bytes. */
int MPIDI_LLC_rma_range_error(const char *op, int target_rank, MPI_Aint lo, MPI_Aint hi,
                              MPI_Aint size);

/* Copy between buf and the target's window by MPIR_Localcopy, or by memcpy
 * when both sides are one contiguous run of the same length. */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_rma_copy(const void *from, int from_count,
                                                MPI_Datatype from_type, void *to, int to_count,
                                                MPI_Datatype to_type, size_t from_sz,
                                                size_t to_sz)
{
    if (HANDLE_IS_BUILTIN(from_type) && HANDLE_IS_BUILTIN(to_type) && from_sz == to_sz) {
        MPIR_Memcpy(to, from, from_sz);
        return MPI_SUCCESS;
    }
    return MPIR_Localcopy(from, from_count, from_type, to, to_count, to_type);
}

/* A put (is_put) or get between the origin buffer and the target's part of
 * a node-shared window, after the epoch and bounds checks. */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_rma_local(int is_put, void *origin_addr, int origin_count,
                                                 MPI_Datatype origin_datatype, int target_rank,
                                                 MPI_Aint target_disp, int target_count,
                                                 MPI_Datatype target_datatype, MPIR_Win * win,
                                                 char *part, MPI_Aint size, int disp_unit)
{
    int mpi_errno = MPI_SUCCESS;
    size_t origin_data_sz, target_data_sz;
    MPI_Aint lo, hi;
    char *target;

    MPIDIG_RMA_OP_CHECK_SYNC(target_rank, win);
    MPIDI_Datatype_check_origin_target_size(origin_datatype, target_datatype, origin_count,
                                            target_count, origin_data_sz, target_data_sz);
    if (origin_data_sz == 0 || target_data_sz == 0)
        goto fn_exit;
    MPIDI_LLC_rma_span(target_disp, disp_unit, target_count, target_datatype, &lo, &hi);
    if (unlikely(lo < 0 || hi > size)) {
        mpi_errno = MPIDI_LLC_rma_range_error(is_put ? "MPI_Put" : "MPI_Get", target_rank, lo, hi,
                                              size);
        goto fn_fail;
    }
    target = part + target_disp * disp_unit;
    if (is_put)
        mpi_errno = MPIDI_LLC_rma_copy(origin_addr, origin_count, origin_datatype, target,
                                       target_count, target_datatype, origin_data_sz,
                                       target_data_sz);
    else
        mpi_errno = MPIDI_LLC_rma_copy(target, target_count, target_datatype, origin_addr,
                                       origin_count, origin_datatype, target_data_sz,
                                       origin_data_sz);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_LLC_global.copied = 1;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_put(const void *origin_addr, int origin_count,
                                              MPI_Datatype origin_datatype, int target_rank,
                                              MPI_Aint target_disp, int target_count,
                                              MPI_Datatype target_datatype, MPIR_Win * win,
                                              MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr)
{
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_local_part(win, target_rank, &size, &disp_unit);

    if (part == NULL)
        return MPIDIG_mpi_put(origin_addr, origin_count, origin_datatype, target_rank,
                              target_disp, target_count, target_datatype, win);
    return MPIDI_LLC_rma_local(1, (void *) origin_addr, origin_count, origin_datatype, target_rank,
                               target_disp, target_count, target_datatype, win, part, size,
                               disp_unit);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_get(void *origin_addr, int origin_count,
                                              MPI_Datatype origin_datatype, int target_rank,
                                              MPI_Aint target_disp, int target_count,
                                              MPI_Datatype target_datatype, MPIR_Win * win,
                                              MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr)
{
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_local_part(win, target_rank, &size, &disp_unit);

    if (part == NULL)
        return MPIDIG_mpi_get(origin_addr, origin_count, origin_datatype, target_rank,
                              target_disp, target_count, target_datatype, win);
    return MPIDI_LLC_rma_local(0, origin_addr, origin_count, origin_datatype, target_rank,
                               target_disp, target_count, target_datatype, win, part, size,
                               disp_unit);
}

#endif /* LLC_RMA_H_INCLUDED */

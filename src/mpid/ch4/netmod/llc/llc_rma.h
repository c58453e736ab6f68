/*
 * ch4:llc netmod - one-sided operations by load and store within a node.
 *
 * MPI_Win_allocate and MPI_Win_allocate_shared windows live in one shared
 * segment per node: MPIDIG maps it in every process of the node and keeps
 * each local process's base address, size and displacement unit in the
 * window's shared table.  An operation on such a window whose target is a
 * process of the node is then done by the caller on the target's memory:
 * no message, no action of the target, complete when the call returns.
 * Every access is bounds-checked against the target's part of the segment:
 * one outside it fails with MPI_ERR_RMA_RANGE naming the target and the
 * bytes, and touches nothing.
 *
 *   - MPI_Put, MPI_Get, MPI_Rput, MPI_Rget: a copy (to another process of
 *     the node; the caller's own part takes MPIDIG's local copy).
 *   - MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
 *     MPI_Compare_and_swap, MPI_Raccumulate, MPI_Rget_accumulate: applied
 *     by the caller under the window's lock, a process-shared mutex in a
 *     segment of its own (MPIDI_LLC_WIN(win).acc_mutex), to every target
 *     including the caller itself.  Accumulates must be atomic with respect
 *     to each other, and MPIDIG's target-applied path knows nothing of that
 *     lock, so this is done only when every process of the window is on
 *     this node (then no accumulate takes MPIDIG's path outside the
 *     post/start epochs below); windows that span nodes keep MPIDIG's
 *     target-applied accumulates for every target.
 *
 * MPI_Win_create windows are in each process's own memory: the window's
 * create hook gathers where each process of the node has its part (process
 * id, base, size, displacement unit), and a put or get of contiguous data to
 * another process of the node is one process_vm_writev / process_vm_readv
 * (cross-memory attach: one copy by the kernel, no action of the target),
 * bounds-checked the same way.  If the kernel refuses (ptrace restrictions),
 * that window's puts and gets go back to MPIDIG.
 *
 * Everything else (accumulates in MPI_Win_create windows, non-contiguous
 * data there, dynamic windows, targets on other nodes) takes MPICH's
 * active-message path (MPIDIG).
 *
 * Synchronisation: in a window whose processes are all on this node (any
 * flavour but dynamic), MPI_Win_lock and MPI_Win_lock_all take the
 * target's lock word in a segment of the window's themselves (llc_win.c;
 * acquire on taking, release on giving back, which orders the accesses of
 * one epoch before the next holder's), with MPIDIG keeping the epoch's
 * state as for MPI_MODE_NOCHECK: no message, no action of the target.
 * Elsewhere MPIDIG's lock and lock_all wait for the target's grant, and
 * post/start everywhere wait for the post before they return, so a direct
 * access never precedes the epoch; every synchronisation message reaches
 * the other process through libllc's shared-memory ring, whose chunks are
 * sealed with a release store and read with an acquire load, which orders
 * the accesses made before it.
 */
#ifndef LLC_RMA_H_INCLUDED
#define LLC_RMA_H_INCLUDED

#include "llc_impl.h"

/* Where target_rank's part of a node-shared window starts, or NULL when the
 * access takes MPIDIG's path (no shared segment, or the target is on
 * another node).  size and disp_unit describe that part. */
MPL_STATIC_INLINE_PREFIX char *MPIDI_LLC_win_part(MPIR_Win * win, int target_rank,
                                                  MPI_Aint * size, int *disp_unit)
{
    MPIDIG_win_shared_info_t *table = MPIDIG_WIN(win, shared_table);
    const int *intranode = win->comm_ptr->intranode_table;
    int local;

    if (table == NULL || MPIDIG_WIN(win, mmap_addr) == NULL || intranode == NULL ||
        target_rank < 0 || target_rank >= win->comm_ptr->local_size)
        return NULL;
    /* Not in a post/start epoch: MPIDIG counts the posts an origin has
     * received in one number, which its MPI_Win_start compares with the
     * group's size and then clears, so a post for the next epoch that comes
     * early (from a target that has finished this one) is lost or makes the
     * count overshoot, and that MPI_Win_start never returns.  Accesses done
     * here finish epochs sooner and made that race frequent (MPICH's
     * rma/pscw_ordering_shm hung); on MPIDIG's path it stays as rare as
     * before.  (MPI forbids a window to be exposed by post and locked at
     * once, so MPIDIG's accumulates in these epochs meet none of the
     * caller-applied ones.) */
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

/* The part a put or get copies to or from: another process of the node. */
MPL_STATIC_INLINE_PREFIX char *MPIDI_LLC_win_local_part(MPIR_Win * win, int target_rank,
                                                        MPI_Aint * size, int *disp_unit)
{
    if (target_rank == win->comm_ptr->rank)
        return NULL;
    return MPIDI_LLC_win_part(win, target_rank, size, disp_unit);
}

/* The part an accumulate applies to: any process, the caller too, of a
 * window that lies on this node alone. */
MPL_STATIC_INLINE_PREFIX char *MPIDI_LLC_win_atomic_part(MPIR_Win * win, int target_rank,
                                                         MPI_Aint * size, int *disp_unit)
{
    if (MPIDI_LLC_WIN(win).acc_mutex == NULL)
        return NULL;
    return MPIDI_LLC_win_part(win, target_rank, size, disp_unit);
}

/* The node-local process target_rank of an MPI_Win_create window whose
 * part a put or get reaches by cross-memory attach, or NULL (the same
 * rules as MPIDI_LLC_win_part). */
MPL_STATIC_INLINE_PREFIX MPIDI_LLC_win_peer_t *MPIDI_LLC_win_cma_peer(MPIR_Win * win,
                                                                     int target_rank)
{
    int local;
    if (MPIDI_LLC_WIN(win).peers == NULL || target_rank == win->comm_ptr->rank ||
        target_rank < 0 || target_rank >= win->comm_ptr->local_size ||
        MPIDIG_WIN(win, sync).access_epoch_type == MPIDIG_EPOTYPE_START)
        return NULL;
    local = win->comm_ptr->intranode_table[target_rank];
    return local < 0 ? NULL : &MPIDI_LLC_WIN(win).peers[local];
}

/* A put (is_put) or get of contiguous data by cross-memory attach
 * (llc_win.c).  Returns MPI_SUCCESS and sets *done = 0 when the data is not
 * contiguous or the kernel refuses: the caller then takes MPIDIG's path. */
int MPIDI_LLC_rma_cma(int is_put, void *origin_addr, int origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      int target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_LLC_win_peer_t * peer, int *done);

/* Whether a put or get to target_rank may go by libllc's one-sided
 * operations (llc_win_net.c): a window that spans nodes, a target on another
 * node, not in a post/start epoch (the same reason as MPIDI_LLC_win_part). */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_win_net_target(MPIR_Win * win, int target_rank)
{
    const int *intranode = win->comm_ptr->intranode_table;
    return MPIDI_LLC_WIN(win).net != NULL && MPIDI_LLC_WIN(win).owner == win &&
        target_rank >= 0 && target_rank < win->comm_ptr->local_size &&
        target_rank != win->comm_ptr->rank && (intranode == NULL || intranode[target_rank] < 0) &&
        MPIDIG_WIN(win, sync).access_epoch_type != MPIDIG_EPOTYPE_START;
}

/* A put (is_put) or get of contiguous data by llc_put / llc_get, with an
 * MPI request when request is not NULL.  Sets *done = 0 (and does nothing)
 * when the data is not contiguous or the target's part is not registered:
 * the caller then takes MPIDIG's path. */
int MPIDI_LLC_rma_net(int is_put, void *origin_addr, int origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      int target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_av_entry_t * addr, MPIR_Request ** request, int *done);
/* Until no operation by libllc of the window (target_rank < 0) or none to
 * target_rank is in flight; then the first error of one of them, once. */
int MPIDI_LLC_win_net_wait(MPIR_Win * win, int target_rank);

/* MPIDIG's flush, unlock, fence and complete call these before their own
 * messages: the operations by libllc complete first.  Completion is remote
 * for both, so local completion waits for the same. */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rma_win_cmpl_hook(MPIR_Win * win)
{
    return MPIDI_LLC_win_net_wait(win, -1);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rma_win_local_cmpl_hook(MPIR_Win * win)
{
    return MPIDI_LLC_win_net_wait(win, -1);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rma_target_cmpl_hook(int rank, MPIR_Win * win)
{
    return MPIDI_LLC_win_net_wait(win, rank);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_rma_target_local_cmpl_hook(int rank, MPIR_Win * win)
{
    return MPIDI_LLC_win_net_wait(win, rank);
}

/* Passive-target epochs of a window whose processes are all on this node
 * (llc_win.c): the target's lock word in the window's segment, taken by
 * the origin itself. */
int MPIDI_LLC_win_lock(int lock_type, int rank, int assert, MPIR_Win * win);
int MPIDI_LLC_win_unlock(int rank, MPIR_Win * win);
int MPIDI_LLC_win_lock_all(int assert, MPIR_Win * win);
int MPIDI_LLC_win_unlock_all(MPIR_Win * win);

/* Lock words, unless the origin asserts MPI_MODE_NOCHECK (then nothing is
 * locked, as in MPIDIG) or the window has none (MPIDIG asks the target). */
MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_win_lock(int lock_type, int rank, int assert,
                                                   MPIR_Win * win, MPIDI_av_entry_t * addr)
{
    if (MPIDI_LLC_WIN(win).lock_words == NULL || (assert & MPI_MODE_NOCHECK) ||
        rank < 0 || rank >= win->comm_ptr->local_size)
        return MPIDIG_mpi_win_lock(lock_type, rank, assert, win);
    return MPIDI_LLC_win_lock(lock_type, rank, assert, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_win_unlock(int rank, MPIR_Win * win,
                                                     MPIDI_av_entry_t * addr)
{
    if (MPIDI_LLC_WIN(win).lock_words == NULL || rank < 0 || rank >= win->comm_ptr->local_size)
        return MPIDIG_mpi_win_unlock(rank, win);
    return MPIDI_LLC_win_unlock(rank, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_win_lock_all(int assert, MPIR_Win * win)
{
    if (MPIDI_LLC_WIN(win).lock_words == NULL || (assert & MPI_MODE_NOCHECK))
        return MPIDIG_mpi_win_lock_all(assert, win);
    return MPIDI_LLC_win_lock_all(assert, win);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_win_unlock_all(MPIR_Win * win)
{
    if (MPIDI_LLC_WIN(win).lock_words == NULL)
        return MPIDIG_mpi_win_unlock_all(win);
    return MPIDI_LLC_win_unlock_all(win);
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

/* The size and displacement unit of target_rank's part as far as the
 * netmod knows them: the caller's own part, MPIDIG's shared table, the
 * node's cross-memory peers of an MPI_Win_create window, or the all-gathered
 * keys of a window that spans nodes.  0 when it knows nothing (a dynamic
 * window, whose memory is attached piece by piece, or a part that was not
 * registered). */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_win_part_extent(MPIR_Win * win, int target_rank,
                                                       MPI_Aint * size, int *disp_unit)
{
    const int *intranode = win->comm_ptr->intranode_table;
    int local = -1;

    if (win->create_flavor == MPI_WIN_FLAVOR_DYNAMIC || target_rank < 0 ||
        target_rank >= win->comm_ptr->local_size)
        return 0;
    if (target_rank == win->comm_ptr->rank) {
        *size = win->size;
        *disp_unit = win->disp_unit;
        return 1;
    }
    if (intranode != NULL)
        local = intranode[target_rank];
    if (local >= 0 && MPIDIG_WIN(win, shared_table) != NULL) {
        *size = MPIDIG_WIN(win, shared_table)[local].size;
        *disp_unit = MPIDIG_WIN(win, shared_table)[local].disp_unit;
        return 1;
    }
    if (local >= 0 && MPIDI_LLC_WIN(win).peers != NULL && MPIDI_LLC_WIN(win).owner == win) {
        *size = MPIDI_LLC_WIN(win).peers[local].size;
        *disp_unit = MPIDI_LLC_WIN(win).peers[local].disp_unit;
        return 1;
    }
    if (MPIDI_LLC_WIN(win).net != NULL && MPIDI_LLC_WIN(win).owner == win &&
        MPIDI_LLC_WIN(win).net->targets[target_rank].valid) {
        *size = MPIDI_LLC_WIN(win).net->targets[target_rank].size;
        *disp_unit = MPIDI_LLC_WIN(win).net->targets[target_rank].disp_unit;
        return 1;
    }
    return 0;
}

/* MPIDIG checks no bounds, on the target or at the origin: an access that
 * goes its way (the caller's own part, non-contiguous data, accumulates to
 * a window that spans nodes, ...) is checked here against what
 * MPIDI_LLC_win_part_extent knows, so that it fails at the call with
 * MPI_ERR_RMA_RANGE and touches nothing. */
MPL_STATIC_INLINE_PREFIX int MPIDI_LLC_rma_range(const char *opname, MPIR_Win * win,
                                                 int target_rank, MPI_Aint disp, int count,
                                                 MPI_Datatype datatype)
{
    MPI_Aint lo, hi, size;
    int disp_unit;
    if (count == 0 || !MPIDI_LLC_win_part_extent(win, target_rank, &size, &disp_unit))
        return MPI_SUCCESS;
    MPIDI_LLC_rma_span(disp, disp_unit, count, datatype, &lo, &hi);
    if (likely(lo >= 0 && hi <= size))
        return MPI_SUCCESS;
    return MPIDI_LLC_rma_range_error(opname, target_rank, lo, hi, size);
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
    MPIDI_LLC_VCI(MPIDI_LLC_win_vci(win))->copied = 1;

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

    if (part == NULL) {
        MPIDI_LLC_win_peer_t *peer = MPIDI_LLC_win_cma_peer(win, target_rank);
        int done = 0, mpi_errno = MPI_SUCCESS;
        int range_errno = MPIDI_LLC_rma_range("MPI_Put", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        if (peer)
            mpi_errno = MPIDI_LLC_rma_cma(1, (void *) origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, peer, &done);
        else if (MPIDI_LLC_win_net_target(win, target_rank))
            mpi_errno = MPIDI_LLC_rma_net(1, (void *) origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, addr, NULL, &done);
        if (done || mpi_errno)
            return mpi_errno;
        return MPIDIG_mpi_put(origin_addr, origin_count, origin_datatype, target_rank,
                              target_disp, target_count, target_datatype, win);
    }
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

    if (part == NULL) {
        MPIDI_LLC_win_peer_t *peer = MPIDI_LLC_win_cma_peer(win, target_rank);
        int done = 0, mpi_errno = MPI_SUCCESS;
        int range_errno = MPIDI_LLC_rma_range("MPI_Get", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        if (peer)
            mpi_errno = MPIDI_LLC_rma_cma(0, origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, peer, &done);
        else if (MPIDI_LLC_win_net_target(win, target_rank))
            mpi_errno = MPIDI_LLC_rma_net(0, origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, addr, NULL, &done);
        if (done || mpi_errno)
            return mpi_errno;
        return MPIDIG_mpi_get(origin_addr, origin_count, origin_datatype, target_rank,
                              target_disp, target_count, target_datatype, win);
    }
    return MPIDI_LLC_rma_local(0, origin_addr, origin_count, origin_datatype, target_rank,
                               target_disp, target_count, target_datatype, win, part, size,
                               disp_unit);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_rput(const void *origin_addr, int origin_count,
                                               MPI_Datatype origin_datatype, int target_rank,
                                               MPI_Aint target_disp, int target_count,
                                               MPI_Datatype target_datatype, MPIR_Win * win,
                                               MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr,
                                               MPIR_Request ** request)
{
    int mpi_errno;
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_local_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        MPIDI_LLC_win_peer_t *peer = MPIDI_LLC_win_cma_peer(win, target_rank);
        int done = 0;
        int range_errno = MPIDI_LLC_rma_range("MPI_Put", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        if (peer) {
            mpi_errno = MPIDI_LLC_rma_cma(1, (void *) origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, peer, &done);
            MPIR_ERR_CHECK(mpi_errno);
        } else if (MPIDI_LLC_win_net_target(win, target_rank)) {
            mpi_errno = MPIDI_LLC_rma_net(1, (void *) origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, addr, request, &done);
            if (done || mpi_errno)
                return mpi_errno;       /* *request is the operation's: complete when it is */
        }
        if (!done)
            return MPIDIG_mpi_rput(origin_addr, origin_count, origin_datatype, target_rank,
                                   target_disp, target_count, target_datatype, win, request);
        MPIDI_RMA_REQUEST_CREATE_COMPLETE(*request);
        return MPI_SUCCESS;
    }
    mpi_errno = MPIDI_LLC_rma_local(1, (void *) origin_addr, origin_count, origin_datatype,
                                    target_rank, target_disp, target_count, target_datatype, win,
                                    part, size, disp_unit);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_RMA_REQUEST_CREATE_COMPLETE(*request);
  fn_fail:
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_rget(void *origin_addr, int origin_count,
                                               MPI_Datatype origin_datatype, int target_rank,
                                               MPI_Aint target_disp, int target_count,
                                               MPI_Datatype target_datatype, MPIR_Win * win,
                                               MPIDI_av_entry_t * addr, MPIDI_winattr_t winattr,
                                               MPIR_Request ** request)
{
    int mpi_errno;
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_local_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        MPIDI_LLC_win_peer_t *peer = MPIDI_LLC_win_cma_peer(win, target_rank);
        int done = 0;
        int range_errno = MPIDI_LLC_rma_range("MPI_Get", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        if (peer) {
            mpi_errno = MPIDI_LLC_rma_cma(0, origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, peer, &done);
            MPIR_ERR_CHECK(mpi_errno);
        } else if (MPIDI_LLC_win_net_target(win, target_rank)) {
            mpi_errno = MPIDI_LLC_rma_net(0, origin_addr, origin_count, origin_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, win, addr, request, &done);
            if (done || mpi_errno)
                return mpi_errno;       /* *request is the operation's: complete when it is */
        }
        if (!done)
            return MPIDIG_mpi_rget(origin_addr, origin_count, origin_datatype, target_rank,
                                   target_disp, target_count, target_datatype, win, request);
        MPIDI_RMA_REQUEST_CREATE_COMPLETE(*request);
        return MPI_SUCCESS;
    }
    mpi_errno = MPIDI_LLC_rma_local(0, origin_addr, origin_count, origin_datatype, target_rank,
                                    target_disp, target_count, target_datatype, win, part, size,
                                    disp_unit);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_RMA_REQUEST_CREATE_COMPLETE(*request);
  fn_fail:
    return mpi_errno;
}

/* The caller-applied accumulates (llc_win.c), for a target part found by
 * MPIDI_LLC_win_atomic_part.  MPIDI_LLC_rma_get_accumulate serves
 * MPI_Accumulate too (result_addr NULL), MPIDI_LLC_rma_fetch_and_op
 * MPI_Compare_and_swap too (compare_addr not NULL). */
int MPIDI_LLC_rma_get_accumulate(const char *opname, const void *origin_addr, int origin_count,
                                 MPI_Datatype origin_datatype, void *result_addr,
                                 int result_count, MPI_Datatype result_datatype, int target_rank,
                                 MPI_Aint target_disp, int target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPIR_Win * win,
                                 char *part, MPI_Aint size, int disp_unit);
int MPIDI_LLC_rma_fetch_and_op(const char *opname, const void *origin_addr,
                               const void *compare_addr, void *result_addr,
                               MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                               MPI_Op op, MPIR_Win * win, char *part, MPI_Aint size,
                               int disp_unit);

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_accumulate(const void *origin_addr, int origin_count,
                                                     MPI_Datatype origin_datatype,
                                                     int target_rank, MPI_Aint target_disp,
                                                     int target_count,
                                                     MPI_Datatype target_datatype, MPI_Op op,
                                                     MPIR_Win * win, MPIDI_av_entry_t * addr,
                                                     MPIDI_winattr_t winattr)
{
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_atomic_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        int range_errno = MPIDI_LLC_rma_range("MPI_Accumulate", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        return MPIDIG_mpi_accumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                     target_disp, target_count, target_datatype, op, win);
    }
    return MPIDI_LLC_rma_get_accumulate("MPI_Accumulate", origin_addr, origin_count,
                                        origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                                        target_rank, target_disp, target_count, target_datatype,
                                        op, win, part, size, disp_unit);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_raccumulate(const void *origin_addr, int origin_count,
                                                      MPI_Datatype origin_datatype,
                                                      int target_rank, MPI_Aint target_disp,
                                                      int target_count,
                                                      MPI_Datatype target_datatype, MPI_Op op,
                                                      MPIR_Win * win, MPIDI_av_entry_t * addr,
                                                      MPIDI_winattr_t winattr,
                                                      MPIR_Request ** request)
{
    int mpi_errno;
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_atomic_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        int range_errno = MPIDI_LLC_rma_range("MPI_Raccumulate", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        return MPIDIG_mpi_raccumulate(origin_addr, origin_count, origin_datatype, target_rank,
                                      target_disp, target_count, target_datatype, op, win,
                                      request);
    }
    mpi_errno = MPIDI_LLC_rma_get_accumulate("MPI_Raccumulate", origin_addr, origin_count,
                                             origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                                             target_rank, target_disp, target_count,
                                             target_datatype, op, win, part, size, disp_unit);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_RMA_REQUEST_CREATE_COMPLETE(*request);
  fn_fail:
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_get_accumulate(const void *origin_addr,
                                                         int origin_count,
                                                         MPI_Datatype origin_datatype,
                                                         void *result_addr, int result_count,
                                                         MPI_Datatype result_datatype,
                                                         int target_rank, MPI_Aint target_disp,
                                                         int target_count,
                                                         MPI_Datatype target_datatype,
                                                         MPI_Op op, MPIR_Win * win,
                                                         MPIDI_av_entry_t * addr,
                                                         MPIDI_winattr_t winattr)
{
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_atomic_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        int range_errno = MPIDI_LLC_rma_range("MPI_Get_accumulate", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        return MPIDIG_mpi_get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                         result_count, result_datatype, target_rank,
                                         target_disp, target_count, target_datatype, op, win);
    }
    return MPIDI_LLC_rma_get_accumulate("MPI_Get_accumulate", origin_addr, origin_count,
                                        origin_datatype, result_addr, result_count,
                                        result_datatype, target_rank, target_disp, target_count,
                                        target_datatype, op, win, part, size, disp_unit);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_rget_accumulate(const void *origin_addr,
                                                          int origin_count,
                                                          MPI_Datatype origin_datatype,
                                                          void *result_addr, int result_count,
                                                          MPI_Datatype result_datatype,
                                                          int target_rank, MPI_Aint target_disp,
                                                          int target_count,
                                                          MPI_Datatype target_datatype,
                                                          MPI_Op op, MPIR_Win * win,
                                                          MPIDI_av_entry_t * addr,
                                                          MPIDI_winattr_t winattr,
                                                          MPIR_Request ** request)
{
    int mpi_errno;
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_atomic_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        int range_errno = MPIDI_LLC_rma_range("MPI_Rget_accumulate", win, target_rank, target_disp,
                                              target_count, target_datatype);
        if (range_errno)
            return range_errno;
        return MPIDIG_mpi_rget_accumulate(origin_addr, origin_count, origin_datatype,
                                          result_addr, result_count, result_datatype,
                                          target_rank, target_disp, target_count,
                                          target_datatype, op, win, request);
    }
    mpi_errno = MPIDI_LLC_rma_get_accumulate("MPI_Rget_accumulate", origin_addr, origin_count,
                                             origin_datatype, result_addr, result_count,
                                             result_datatype, target_rank, target_disp,
                                             target_count, target_datatype, op, win, part, size,
                                             disp_unit);
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_RMA_REQUEST_CREATE_COMPLETE(*request);
  fn_fail:
    return mpi_errno;
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_fetch_and_op(const void *origin_addr,
                                                       void *result_addr,
                                                       MPI_Datatype datatype, int target_rank,
                                                       MPI_Aint target_disp, MPI_Op op,
                                                       MPIR_Win * win, MPIDI_av_entry_t * addr,
                                                       MPIDI_winattr_t winattr)
{
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_atomic_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        int range_errno = MPIDI_LLC_rma_range("MPI_Fetch_and_op", win, target_rank, target_disp,
                                              1, datatype);
        if (range_errno)
            return range_errno;
        return MPIDIG_mpi_fetch_and_op(origin_addr, result_addr, datatype, target_rank,
                                       target_disp, op, win);
    }
    return MPIDI_LLC_rma_fetch_and_op("MPI_Fetch_and_op", origin_addr, NULL, result_addr,
                                      datatype, target_rank, target_disp, op, win, part, size,
                                      disp_unit);
}

MPL_STATIC_INLINE_PREFIX int MPIDI_NM_mpi_compare_and_swap(const void *origin_addr,
                                                           const void *compare_addr,
                                                           void *result_addr,
                                                           MPI_Datatype datatype,
                                                           int target_rank, MPI_Aint target_disp,
                                                           MPIR_Win * win,
                                                           MPIDI_av_entry_t * addr,
                                                           MPIDI_winattr_t winattr)
{
    MPI_Aint size;
    int disp_unit;
    char *part = MPIDI_LLC_win_atomic_part(win, target_rank, &size, &disp_unit);

    if (part == NULL) {
        int range_errno = MPIDI_LLC_rma_range("MPI_Compare_and_swap", win, target_rank, target_disp,
                                              1, datatype);
        if (range_errno)
            return range_errno;
        return MPIDIG_mpi_compare_and_swap(origin_addr, compare_addr, result_addr, datatype,
                                           target_rank, target_disp, win);
    }
    return MPIDI_LLC_rma_fetch_and_op("MPI_Compare_and_swap", origin_addr, compare_addr,
                                      result_addr, datatype, target_rank, target_disp,
                                      MPI_REPLACE, win, part, size, disp_unit);
}

#endif /* LLC_RMA_H_INCLUDED */

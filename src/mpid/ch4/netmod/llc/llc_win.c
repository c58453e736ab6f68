/*
 * ch4:llc netmod - RMA windows, and the accumulates llc_rma.h leaves to a
 * function.  Windows are MPIDIG's (MPI_Win_allocate and
 * MPI_Win_allocate_shared put each node's windows in one shared segment);
 * when every process of such a window is on this node, its allocate hook
 * adds the lock of the caller-applied accumulates; the create hook of an
 * MPI_Win_create window gathers where the node's processes keep their
 * parts, for puts and gets by cross-memory attach; a window that spans
 * nodes registers every part with libllc for puts and gets to the other
 * nodes (llc_win_net.c).  Everything else is MPIDIG's active messages.
 */
#include <mpidimpl.h>
#include "llc_impl.h"
#include "mpidu_shm.h"
#include <errno.h>
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

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

/* Take (lock) or release the window's lock around one caller-applied
 * operation. */
static int acc_mutex(MPIR_Win * win, int lock, const char *opname)
{
    int mpi_errno = MPI_SUCCESS, err = MPL_SUCCESS;
    if (lock)
        MPL_proc_mutex_lock(MPIDI_LLC_WIN(win).acc_mutex, &err);
    else
        MPL_proc_mutex_unlock(MPIDI_LLC_WIN(win).acc_mutex, &err);
    MPIR_ERR_CHKANDJUMP1(err != MPL_SUCCESS, mpi_errno, MPI_ERR_OTHER, "**windows_mutex",
                         "**windows_mutex %s", opname);
  fn_fail:
    return mpi_errno;
}

/* The target's bytes of count elements of datatype at disp, or NULL with
 * MPI_ERR_RMA_RANGE in *mpi_errno when they are not all in its part. */
static char *acc_target(const char *opname, int target_rank, MPI_Aint disp, int count,
                        MPI_Datatype datatype, char *part, MPI_Aint size, int disp_unit,
                        int *mpi_errno)
{
    MPI_Aint lo, hi;
    MPIDI_LLC_rma_span(disp, disp_unit, count, datatype, &lo, &hi);
    if (unlikely(lo < 0 || hi > size)) {
        *mpi_errno = MPIDI_LLC_rma_range_error(opname, target_rank, lo, hi, size);
        return NULL;
    }
    return part + disp * disp_unit;
}

/* The predefined type a derived accumulate datatype is made of.  MPICH
 * records none (MPI_DATATYPE_NULL) for types built of pair types such as
 * MPI_LONG_DOUBLE_INT; follow the single old type of each constructor down
 * to the predefined one.  MPI_DATATYPE_NULL if there is none (a struct of
 * several types). */
static MPI_Datatype acc_element_type(MPI_Datatype datatype)
{
    MPI_Datatype t = datatype, basic;
    MPIR_Datatype_get_basic_type(datatype, basic);
    if (basic != MPI_DATATYPE_NULL)
        return basic;
    while (!MPIR_DATATYPE_IS_PREDEFINED(t)) {
        MPIR_Datatype *dtp;
        int *ints;
        MPI_Aint *aints, *counts;
        MPI_Datatype *types;
        MPIR_Datatype_get_ptr(t, dtp);
        if (dtp == NULL || dtp->contents == NULL || dtp->contents->nr_types != 1)
            return MPI_DATATYPE_NULL;
        MPIR_Datatype_access_contents(dtp->contents, &ints, &aints, &counts, &types);
        t = types[0];
    }
    return t;
}

int MPIDI_LLC_rma_get_accumulate(const char *opname, const void *origin_addr, int origin_count,
                                 MPI_Datatype origin_datatype, void *result_addr,
                                 int result_count, MPI_Datatype result_datatype, int target_rank,
                                 MPI_Aint target_disp, int target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPIR_Win * win,
                                 char *part, MPI_Aint size, int disp_unit)
{
    int mpi_errno = MPI_SUCCESS, locked = 0;
    MPI_Aint origin_sz = 0, target_sz, result_sz = 0;
    void *packed = NULL;
    const void *source = origin_addr;
    MPI_Datatype source_type = origin_datatype;
    int source_count = origin_count, source_packed = 0;
    char *target;

    MPIDIG_RMA_OP_CHECK_SYNC(target_rank, win);
    MPIDI_Datatype_check_size(target_datatype, target_count, target_sz);
    if (result_addr)
        MPIDI_Datatype_check_size(result_datatype, result_count, result_sz);
    if (op != MPI_NO_OP)
        MPIDI_Datatype_check_size(origin_datatype, origin_count, origin_sz);
    if (target_sz == 0 || (op == MPI_NO_OP && result_sz == 0))
        goto fn_exit;
    if (op != MPI_NO_OP && origin_sz != target_sz) {
        char what[200];
        snprintf(what, sizeof(what), "%s to rank %d: the origin has %ld bytes and the target "
                 "%ld; nothing was changed", opname, target_rank, (long) origin_sz,
                 (long) target_sz);
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_SIZE, "**fail", "**fail %s", what);
        goto fn_fail;
    }
    target = acc_target(opname, target_rank, target_disp, target_count, target_datatype, part,
                        size, disp_unit, &mpi_errno);
    if (target == NULL)
        goto fn_fail;

    /* MPIR_Typerep_op takes a predefined source: pack a derived one into
     * its basic elements first, outside the lock */
    if (op != MPI_NO_OP && !MPIR_DATATYPE_IS_PREDEFINED(origin_datatype)) {
        MPI_Aint basic_sz, packed_sz;
        source_type = acc_element_type(origin_datatype);
        if (source_type == MPI_DATATYPE_NULL) {
            char what[200];
            snprintf(what, sizeof(what), "%s to rank %d: the origin datatype is not made of one "
                     "predefined type, as accumulate operations require", opname, target_rank);
            MPIR_ERR_SET1(mpi_errno, MPI_ERR_TYPE, "**fail", "**fail %s", what);
            goto fn_fail;
        }
        MPIR_Datatype_get_size_macro(source_type, basic_sz);
        packed = MPL_malloc(origin_sz, MPL_MEM_RMA);
        MPIR_ERR_CHKANDJUMP(packed == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        mpi_errno = MPIR_Typerep_pack(origin_addr, origin_count, origin_datatype, 0, packed,
                                      origin_sz, &packed_sz);
        MPIR_ERR_CHECK(mpi_errno);
        source = packed;
        source_count = (int) (origin_sz / basic_sz);
        source_packed = 1;
    }

    mpi_errno = acc_mutex(win, 1, opname);
    MPIR_ERR_CHECK(mpi_errno);
    locked = 1;
    if (result_sz)
        mpi_errno = MPIR_Localcopy(target, target_count, target_datatype, result_addr,
                                   result_count, result_datatype);
    if (mpi_errno == MPI_SUCCESS && op != MPI_NO_OP)
        mpi_errno = MPIR_Typerep_op((void *) source, source_count, source_type, target,
                                    target_count, target_datatype, op, source_packed, -1);
    locked = 0;
    {
        int unlock_errno = acc_mutex(win, 0, opname);
        if (mpi_errno == MPI_SUCCESS)
            mpi_errno = unlock_errno;
    }
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_LLC_VCI(MPIDI_LLC_win_vci(win))->copied = 1;

  fn_exit:
    MPL_free(packed);
    return mpi_errno;
  fn_fail:
    if (locked)
        acc_mutex(win, 0, opname);
    goto fn_exit;
}

/* target += origin for the types counters are made of; 0 for others */
static int fop_sum(MPI_Datatype datatype, const void *origin, void *target)
{
#define LLC_FOP_SUM(type_) \
    do { type_ v_; memcpy(&v_, target, sizeof(v_)); v_ += *(const type_ *) origin; \
         memcpy(target, &v_, sizeof(v_)); } while (0)
    switch (datatype) {
        case MPI_INT:
        case MPI_INT32_T:
            LLC_FOP_SUM(int32_t);
            return 1;
        case MPI_UNSIGNED:
        case MPI_UINT32_T:
            LLC_FOP_SUM(uint32_t);
            return 1;
        case MPI_LONG:
        case MPI_LONG_LONG:
        case MPI_INT64_T:
        case MPI_AINT:
        case MPI_OFFSET:
            if (MPIR_Datatype_get_basic_size(datatype) != sizeof(int64_t))
                return 0;
            LLC_FOP_SUM(int64_t);
            return 1;
        case MPI_UNSIGNED_LONG:
        case MPI_UNSIGNED_LONG_LONG:
        case MPI_UINT64_T:
            if (MPIR_Datatype_get_basic_size(datatype) != sizeof(uint64_t))
                return 0;
            LLC_FOP_SUM(uint64_t);
            return 1;
        case MPI_DOUBLE:
            LLC_FOP_SUM(double);
            return 1;
        default:
            return 0;
    }
#undef LLC_FOP_SUM
}

int MPIDI_LLC_rma_fetch_and_op(const char *opname, const void *origin_addr,
                               const void *compare_addr, void *result_addr,
                               MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                               MPI_Op op, MPIR_Win * win, char *part, MPI_Aint size,
                               int disp_unit)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint sz;
    char *target;

    MPIDIG_RMA_OP_CHECK_SYNC(target_rank, win);
    MPIR_Datatype_get_size_macro(datatype, sz);
    target = acc_target(opname, target_rank, target_disp, 1, datatype, part, size, disp_unit,
                        &mpi_errno);
    if (target == NULL)
        goto fn_fail;

    mpi_errno = acc_mutex(win, 1, opname);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_Memcpy(result_addr, target, sz);
    if (compare_addr) {
        /* compare and swap: the types it takes (integers, logicals,
         * bytes) compare by their bits */
        if (memcmp(result_addr, compare_addr, sz) == 0)
            MPIR_Memcpy(target, origin_addr, sz);
    } else if (op == MPI_REPLACE) {
        MPIR_Memcpy(target, origin_addr, sz);
    } else if (op == MPI_SUM && fop_sum(datatype, origin_addr, target)) {
        /* done: a counter's add without MPIR_Typerep_op's dispatch */
    } else if (op != MPI_NO_OP) {
        mpi_errno = MPIR_Typerep_op((void *) origin_addr, 1, datatype, target, 1, datatype, op,
                                    false, -1);
    }
    {
        int unlock_errno = acc_mutex(win, 0, opname);
        if (mpi_errno == MPI_SUCCESS)
            mpi_errno = unlock_errno;
    }
    MPIR_ERR_CHECK(mpi_errno);
    MPIDI_LLC_VCI(MPIDI_LLC_win_vci(win))->copied = 1;

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Puts and gets of fewer bytes take MPIDIG's active messages even where
 * cross-memory attach could reach the target.  Measured with bench/rma
 * (--create, 2 processes of one node): one process_vm_writev costs about
 * 1 us here, so a single put plus flush is faster by attach from 1 KiB up
 * (1.07 against 1.77 us at 1 KiB, 3.2 against 8.2 us at 32 KiB), but a
 * window of 64 puts is faster through MPIDIG up to 32 KiB (7.4 against
 * 6.2 GB/s at 32 KiB), where the target copies out of the ring while the
 * origin writes the next message; from 64 KiB attach wins both (6.3
 * against 4.1 GB/s). */
#define MPIDI_LLC_CMA_MIN_BYTES 65536

int MPIDI_LLC_rma_cma(int is_put, void *origin_addr, int origin_count,
                      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                      int target_count, MPI_Datatype target_datatype, MPIR_Win * win,
                      MPIDI_LLC_win_peer_t * peer, int *done)
{
    int mpi_errno = MPI_SUCCESS, origin_contig, target_contig;
    size_t origin_sz, target_sz;
    MPI_Aint origin_lb, target_lb;
    char *remote_at = NULL;     /* the target's bytes, in its address space */
    MPIR_Datatype *dtp ATTRIBUTE((unused));
    const char *opname = is_put ? "MPI_Put" : "MPI_Get";
    struct iovec local, remote;
    ssize_t moved;

    *done = 0;
    MPIDI_Datatype_get_info(origin_count, origin_datatype, origin_contig, origin_sz, dtp,
                            origin_lb);
    MPIDI_Datatype_get_info(target_count, target_datatype, target_contig, target_sz, dtp,
                            target_lb);
    /* the caller checked the bounds (MPIDI_LLC_rma_range, against the
     * same peer table) */
    remote_at = (char *) (uintptr_t) peer->base + target_disp * peer->disp_unit;
    if (!origin_contig || !target_contig || origin_sz != target_sz ||
        origin_sz < MPIDI_LLC_CMA_MIN_BYTES)
        return MPI_SUCCESS;     /* MPIDIG's path packs, checks sizes, or is faster */
    MPIDIG_RMA_OP_CHECK_SYNC(target_rank, win);
    *done = 1;
    local.iov_base = (char *) origin_addr + origin_lb;
    local.iov_len = origin_sz;
    remote.iov_base = remote_at + target_lb;
    remote.iov_len = origin_sz;
    moved = is_put ? process_vm_writev(peer->pid, &local, 1, &remote, 1, 0)
        : process_vm_readv(peer->pid, &local, 1, &remote, 1, 0);
    if (moved == (ssize_t) origin_sz) {
        MPIDI_LLC_VCI(MPIDI_LLC_win_vci(win))->copied = 1;
        goto fn_exit;
    }
    if (moved < 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES)) {
        /* the kernel does not let this process attach to the others'
         * memory: this window's puts and gets take MPIDIG's path */
        MPL_free(MPIDI_LLC_WIN(win).peers);
        MPIDI_LLC_WIN(win).peers = NULL;
        *done = 0;
        goto fn_exit;
    }
    {
        char what[256];
        snprintf(what, sizeof(what), "%s to rank %d of the window (process %d): %s at byte %ld "
                 "of its part", opname, target_rank, peer->pid,
                 moved < 0 ? strerror(errno) : "moved part of the data only",
                 (long) (remote_at + target_lb - (char *) (uintptr_t) peer->base));
        MPIR_ERR_SET1(mpi_errno, MPI_ERR_RMA_RANGE, "**fail", "**fail %s", what);
        goto fn_fail;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
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

/* The netmod's part of a new window, before a creation hook adds to it:
 * every operation takes MPIDIG's path.  MPICH does not clear it, and the
 * fields are valid only while owner is the window (llc_pre.h). */
static void win_part_init(MPIR_Win * win)
{
    MPIDI_LLC_WIN(win).acc_mutex = NULL;
    MPIDI_LLC_WIN(win).lock_words = NULL;
    MPIDI_LLC_WIN(win).lock_held = NULL;
    MPIDI_LLC_WIN(win).lock_all_held = 0;
    MPIDI_LLC_WIN(win).peers = NULL;
    MPIDI_LLC_WIN(win).net = NULL;
    MPIDI_LLC_WIN(win).owner = win;
}

/* The segment of a window whose processes are all on this node: the lock
 * of the caller-applied accumulates (allocated windows; unused room in an
 * MPI_Win_create window's), then one passive-target lock word per process
 * of the window, each on a cache line of its own. */
#define LOCK_WORD_STRIDE 64
#define LOCK_WORDS_AT \
    ((sizeof(MPL_proc_mutex_t) + LOCK_WORD_STRIDE - 1) / LOCK_WORD_STRIDE * LOCK_WORD_STRIDE)

/* Whether every process of the window is on this node, so that its
 * processes can share a segment: the same answer in each of them. */
static int win_on_one_node(MPIR_Win * win)
{
    MPIR_Comm *comm = win->comm_ptr, *node_comm = comm->node_comm;
    return comm->local_size >= 2 && node_comm != NULL &&
        node_comm->local_size == comm->local_size && comm->intranode_table != NULL;
}

/* The segment of a window on one node (win_on_one_node): its lock words,
 * and with_mutex, the lock of the caller-applied accumulates.  Collective
 * over the node.  Without a segment (the node's shared memory could not be
 * mapped) the window keeps MPIDIG's locks and accumulates.  MPIDIG's
 * barrier after the creation hooks orders the segment's creation before
 * any use. */
static int lock_segment_create(MPIR_Win * win, int with_mutex)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *comm = win->comm_ptr, *node_comm = comm->node_comm;
    bool mapfail = false;
    char *segment = NULL;

    MPIDI_LLC_WIN(win).lock_held = MPL_calloc(comm->local_size, 1, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(MPIDI_LLC_WIN(win).lock_held == NULL, mpi_errno, MPI_ERR_NO_MEM,
                        "**nomem");
    /* a new segment is zero-filled: every lock word free */
    mpi_errno = MPIDU_shm_alloc(node_comm, LOCK_WORDS_AT + (size_t) comm->local_size *
                                LOCK_WORD_STRIDE, (void **) &segment, &mapfail);
    MPIR_ERR_CHECK(mpi_errno);
    if (mapfail) {
        MPL_free(MPIDI_LLC_WIN(win).lock_held);
        MPIDI_LLC_WIN(win).lock_held = NULL;
        goto fn_exit;
    }
    MPIDI_LLC_WIN(win).lock_words = (int *) (segment + LOCK_WORDS_AT);
    if (!with_mutex)
        goto fn_exit;
    MPIDI_LLC_WIN(win).acc_mutex = (MPL_proc_mutex_t *) segment;
    if (node_comm->rank == 0) {
        int err = MPL_SUCCESS;
        MPL_proc_mutex_create(MPIDI_LLC_WIN(win).acc_mutex, &err);
        MPIR_ERR_CHKANDJUMP1(err != MPL_SUCCESS, mpi_errno, MPI_ERR_OTHER, "**windows_mutex",
                             "**windows_mutex %s", "MPL_proc_mutex_create");
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Memory of each process's own: accumulates take MPIDIG's path; puts and
 * gets to the node's other processes go by cross-memory attach, after the
 * node's processes have told each other where their parts are.  A window
 * all of whose processes are on this node gets lock words as well, so that
 * its passive-target epochs need nothing of the target either. */
int MPIDI_LLC_mpi_win_create_hook(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *node_comm = win->comm_ptr->node_comm;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIDI_LLC_win_peer_t mine, *peers;

    win_part_init(win);
    mpi_errno = MPIDI_LLC_win_net_expose(win);
    MPIR_ERR_CHECK(mpi_errno);
    if (node_comm == NULL || win->comm_ptr->intranode_table == NULL)
        goto fn_exit;
    peers = MPL_malloc(sizeof(*peers) * node_comm->local_size, MPL_MEM_RMA);
    MPIR_ERR_CHKANDJUMP(peers == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    memset(&mine, 0, sizeof(mine));
    mine.base = (uint64_t) (uintptr_t) win->base;
    mine.size = win->size;
    mine.pid = (int) getpid();
    mine.disp_unit = win->disp_unit;
    mpi_errno = MPIR_Allgather(&mine, sizeof(mine), MPI_BYTE, peers, sizeof(mine), MPI_BYTE,
                               node_comm, &errflag);
    if (mpi_errno) {
        MPL_free(peers);
        MPIR_ERR_POP(mpi_errno);
    }
    MPIDI_LLC_WIN(win).peers = peers;
    if (win_on_one_node(win))
        mpi_errno = lock_segment_create(win, 0);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int *lock_word(MPIR_Win * win, int rank)
{
    return (int *) ((char *) MPIDI_LLC_WIN(win).lock_words + (size_t) rank * LOCK_WORD_STRIDE);
}

/* A lock word: the number of processes that hold it shared, or LOCK_WRITER
 * when one holds it exclusively; LOCK_WAITING while a process waits for it
 * exclusively, which makes later shared requests wait too (as MPIDIG's
 * queue at the target grants in order), so that readers cannot starve a
 * writer. */
#define LOCK_WRITER 0x40000000
#define LOCK_WAITING 0x20000000

static int lock_word_try(int *word, int exclusive)
{
    int v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if (exclusive) {
        if ((v & ~LOCK_WAITING) == 0)
            return __atomic_compare_exchange_n(word, &v, LOCK_WRITER, 0, __ATOMIC_ACQ_REL,
                                               __ATOMIC_ACQUIRE);
        if (!(v & LOCK_WAITING))
            __atomic_compare_exchange_n(word, &v, v | LOCK_WAITING, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
        return 0;
    }
    if (v & (LOCK_WRITER | LOCK_WAITING))
        return 0;
    return __atomic_compare_exchange_n(word, &v, v + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void lock_word_release(int *word, int exclusive)
{
    if (exclusive) {
        /* keep the mark of a writer that waits meanwhile */
        int v = __atomic_load_n(word, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(word, &v, v & LOCK_WAITING, 0, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED));
    } else {
        __atomic_fetch_sub(word, 1, __ATOMIC_RELEASE);
    }
}

/* Until this process has the word: progress meanwhile (the holder may need
 * this process for operations that take MPIDIG's path), and give the CPU
 * away once the wait is not short (more processes than cores: the holder
 * may be waiting for it). */
static int lock_word_take(MPIR_Win * win, int *word, int exclusive)
{
    int mpi_errno = MPI_SUCCESS, vci, tries = 0;

    if (lock_word_try(word, exclusive))
        return MPI_SUCCESS;
    vci = MPIDI_WIN(win, am_vci);
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    while (!lock_word_try(word, exclusive)) {
        mpi_errno = MPIDI_progress_test_vci(vci);
        MPIR_ERR_CHECK(mpi_errno);
        /* whichever critical section the build has (the other is a no-op) */
        MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
        MPID_THREAD_CS_YIELD(VCI, MPIDI_VCI(vci).lock);
        if (++tries >= 64)
            sched_yield();
    }
  fn_exit:
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* MPI_Win_lock on a window with lock words: MPIDIG keeps the epoch (its
 * checks and counts, as for MPI_MODE_NOCHECK, which sends nothing), the
 * word of the target excludes the other processes.  No message, nothing
 * done by the target. */
int MPIDI_LLC_win_lock(int lock_type, int rank, int assert, MPIR_Win * win)
{
    int mpi_errno = MPIDIG_mpi_win_lock(lock_type, rank, assert | MPI_MODE_NOCHECK, win);
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = lock_word_take(win, lock_word(win, rank), lock_type == MPI_LOCK_EXCLUSIVE);
    if (mpi_errno) {
        MPIDIG_mpi_win_unlock(rank, win);
        return mpi_errno;
    }
    MPIDI_LLC_WIN(win).lock_held[rank] = (unsigned char) lock_type;
    return MPI_SUCCESS;
}

/* MPIDIG's unlock completes the epoch's operations (and checks it), then
 * the word is released: the release orders every access of the epoch
 * before the next holder's. */
int MPIDI_LLC_win_unlock(int rank, MPIR_Win * win)
{
    int held = MPIDI_LLC_WIN(win).lock_held[rank];
    int mpi_errno = MPIDIG_mpi_win_unlock(rank, win);
    if (held == 0)
        return mpi_errno;       /* an epoch of MPI_MODE_NOCHECK, or none */
    /* released even when the epoch's operations failed: the error is
     * reported, and no other process is held up by it */
    MPIDI_LLC_WIN(win).lock_held[rank] = 0;
    lock_word_release(lock_word(win, rank), held == MPI_LOCK_EXCLUSIVE);
    return mpi_errno;
}

/* MPI_Win_lock_all: every word shared, in rank order. */
int MPIDI_LLC_win_lock_all(int assert, MPIR_Win * win)
{
    int mpi_errno = MPIDIG_mpi_win_lock_all(assert | MPI_MODE_NOCHECK, win);
    int n = win->comm_ptr->local_size;
    if (mpi_errno)
        return mpi_errno;
    for (int i = 0; i < n; i++) {
        mpi_errno = lock_word_take(win, lock_word(win, i), 0);
        if (mpi_errno) {
            while (i-- > 0)
                lock_word_release(lock_word(win, i), 0);
            MPIDIG_mpi_win_unlock_all(win);
            return mpi_errno;
        }
    }
    MPIDI_LLC_WIN(win).lock_all_held = 1;
    return MPI_SUCCESS;
}

int MPIDI_LLC_win_unlock_all(MPIR_Win * win)
{
    int n = win->comm_ptr->local_size;
    int mpi_errno = MPIDIG_mpi_win_unlock_all(win);
    if (!MPIDI_LLC_WIN(win).lock_all_held)
        return mpi_errno;       /* an epoch of MPI_MODE_NOCHECK, or none */
    MPIDI_LLC_WIN(win).lock_all_held = 0;
    for (int i = 0; i < n; i++)
        lock_word_release(lock_word(win, i), 0);
    return mpi_errno;
}

/* The lock of the caller-applied accumulates, for a window in shared memory
 * all of whose processes are on this node (llc_rma.h says why), and the
 * lock words of its passive-target epochs.  Every process of the window
 * decides alike: the segment and the node are the same for all. */
static int acc_lock_create(MPIR_Win * win)
{
    win_part_init(win);
    if (!win_on_one_node(win) || !MPL_proc_mutex_enabled() ||
        MPIDIG_WIN(win, mmap_addr) == NULL || MPIDIG_WIN(win, shared_table) == NULL)
        return MPI_SUCCESS;
    return lock_segment_create(win, 1);
}

int MPIDI_LLC_mpi_win_allocate_hook(MPIR_Win * win)
{
    int mpi_errno = acc_lock_create(win);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_LLC_win_net_expose(win);
    return mpi_errno;
}

int MPIDI_LLC_mpi_win_allocate_shared_hook(MPIR_Win * win)
{
    return acc_lock_create(win);
}

int MPIDI_LLC_mpi_win_create_dynamic_hook(MPIR_Win * win)
{
    /* memory attached later: every operation takes MPIDIG's path */
    win_part_init(win);
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

/* MPIDIG's barrier before the hook: no process uses the lock or reaches
 * this process's part any more. */
int MPIDI_LLC_mpi_win_free_hook(MPIR_Win * win)
{
    int mpi_errno = MPI_SUCCESS;
    MPL_proc_mutex_t *mutex;
    char *segment;

    if (MPIDI_LLC_WIN(win).owner != win)
        goto fn_exit;   /* no creation hook ran */
    mutex = MPIDI_LLC_WIN(win).acc_mutex;
    segment = MPIDI_LLC_WIN(win).lock_words ?
        (char *) MPIDI_LLC_WIN(win).lock_words - LOCK_WORDS_AT : NULL;
    MPIDI_LLC_win_net_free(win);
    MPIDI_LLC_WIN(win).owner = NULL;
    MPIDI_LLC_WIN(win).acc_mutex = NULL;
    MPIDI_LLC_WIN(win).lock_words = NULL;
    MPL_free(MPIDI_LLC_WIN(win).lock_held);
    MPIDI_LLC_WIN(win).lock_held = NULL;
    MPL_free(MPIDI_LLC_WIN(win).peers);
    MPIDI_LLC_WIN(win).peers = NULL;
    if (segment == NULL)
        goto fn_exit;
    if (mutex != NULL && win->comm_ptr->node_comm->rank == 0) {
        int err = MPL_SUCCESS;
        MPL_proc_mutex_destroy(mutex, &err);
        MPIR_ERR_CHKANDJUMP1(err != MPL_SUCCESS, mpi_errno, MPI_ERR_OTHER, "**windows_mutex",
                             "**windows_mutex %s", "MPL_proc_mutex_destroy");
    }
    mpi_errno = MPIDU_shm_free(segment);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/*
 * ch4:llc netmod - start-up and shut-down: libllc bootstraps through
 * MPICH's PMI, with the node mapping that the launcher reported.
 */
#include <mpidimpl.h>
#include "llc_impl.h"
#include <llc_coll.h>
#include <llc_counters.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>

/* MPI_THREAD_MULTIPLE: libllc hands an idle progress call's sleep to this
 * hook after it has left its context, and the sleep is taken with MPICH's
 * global critical section (or the VCI's lock, in a per-VCI build) released (as MPIDU_Thread_yield releases it for a
 * yield, whatever its recursion count), so that a thread waiting in MPI never
 * keeps another from sending.  Returns 0 (libllc waits itself, with its
 * wake-on-arrival sleep) for a yield, when the process is not threaded, or
 * when this thread does not hold the lock. */
static int idle_outside_lock(void *arg, unsigned sleep_us)
{
#if defined(MPICH_IS_THREADED) && MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL
    MPID_Thread_mutex_t *m = &MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX;
    MPL_thread_id_t self, owner;
    int same = 0, err = 0, count;

    (void) arg;
    /* A yield stays under the lock (libllc's own): MPID_Progress_wait
     * gives the lock up between polls in any case, and handing it over on
     * every idle poll as well made 4 threads per process ping-pong 2-5x
     * slower on 2 cores (bench/threads). */
    if (!MPIR_ThreadInfo.isThreaded || sleep_us == 0)
        return 0;
    MPL_thread_self(&self);
    owner = m->owner;
    MPL_thread_same(&self, &owner, &same);
    if (!same || m->count <= 0)
        return 0;
    count = m->count;
    m->count = 0;
    m->owner = 0;
    MPIDU_Thread_mutex_unlock(m, &err);
    {
        struct timespec ts = { (time_t) (sleep_us / 1000000), (long) (sleep_us % 1000000) * 1000 };
        nanosleep(&ts, NULL);
    }
    MPIDU_Thread_mutex_lock(m, &err, MPL_THREAD_PRIO_LOW);
    MPIR_Assert(m->count == 0);
    m->owner = self;
    m->count = count;
    return 1;
#elif defined(MPICH_IS_THREADED) && MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__VCI
    /* per-VCI critical sections: arg is the VCI, whose lock the progress
     * call holds (once: MPIDI_progress_test and MPIDI_progress_test_vci) */
    int vci = (int) (intptr_t) arg;

    if (!MPIR_ThreadInfo.isThreaded || sleep_us == 0)
        return 0;
    MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(vci).lock);
    {
        struct timespec ts = { (time_t) (sleep_us / 1000000), (long) (sleep_us % 1000000) * 1000 };
        nanosleep(&ts, NULL);
    }
    MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(vci).lock);
    return 1;
#else
    (void) arg;
    (void) sleep_us;
    return 0;
#endif
}

/* libllc's bootstrap over PMI.  PMI values are strings: binary values
 * travel hex-encoded.  libllc calls these at MPI_Init and, for a peer's address or a node's KVS
 * server that it looks up on first use, from the progress or send path of
 * any endpoint.  With per-VCI critical sections two threads may do so at
 * once under different VCI locks, and MPICH's PMI client (one socket to the
 * launcher, a request then its answer) is not thread-safe: two gets at once
 * read each other's answers.  One lock of the process orders them. */
static pthread_mutex_t boot_lock = PTHREAD_MUTEX_INITIALIZER;

static int boot_put(void *arg, const char *key, const void *value, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *v = value;
    int max = MPIR_pmi_max_val_size();
    int rc;

    if ((int) (2 * len + 1) > max)
        return 1;
    char *s = MPL_malloc(2 * len + 1, MPL_MEM_ADDRESS);
    if (s == NULL)
        return 1;
    for (size_t i = 0; i < len; i++) {
        s[2 * i] = hex[v[i] >> 4];
        s[2 * i + 1] = hex[v[i] & 15];
    }
    s[2 * len] = '\0';
    pthread_mutex_lock(&boot_lock);
    rc = MPIR_pmi_kvs_put(key, s);
    pthread_mutex_unlock(&boot_lock);
    MPL_free(s);
    return rc != MPI_SUCCESS;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static int boot_get(void *arg, int src_rank, const char *key, void *value, size_t * len)
{
    int max = MPIR_pmi_max_val_size();
    unsigned char *out = value;
    int rc = 1;
    char *s = MPL_malloc(max + 1, MPL_MEM_ADDRESS);

    if (s == NULL)
        return 1;
    pthread_mutex_lock(&boot_lock);
    int got = MPIR_pmi_kvs_get(src_rank, key, s, max + 1);
    pthread_mutex_unlock(&boot_lock);
    if (got != MPI_SUCCESS)
        goto done;
    size_t n = strlen(s);
    if (n % 2 || n / 2 > *len)
        goto done;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            goto done;
        out[i] = (unsigned char) (hi << 4 | lo);
    }
    *len = n / 2;
    rc = 0;
  done:
    MPL_free(s);
    return rc;
}

static int boot_fence(void *arg)
{
    pthread_mutex_lock(&boot_lock);
    int rc = MPIR_pmi_barrier();
    pthread_mutex_unlock(&boot_lock);
    return rc != MPI_SUCCESS;
}

/* Unless the user chose a selection file (MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE)
 * or asked for MPICH's own algorithms for both (LLC_BCAST=mpich and
 * LLC_ALLTOALL=mpich, read through libllccoll's settings table), route
 * MPI_Bcast and MPI_Alltoall straight to the netmod, where src/coll's
 * self-tuning versions run over the whole communicator.  Runs before ch4
 * builds its selection tree. */
static void select_llc_collectives(void)
{
#ifdef MPIDI_LLC_COLL_JSON
    const char *cur = MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE;

    if (cur && cur[0])
        return;
    if (llc_coll_native_only())
        return;
    if (access(MPIDI_LLC_COLL_JSON, R_OK) == 0) {
        /* string CVARs are heap copies that MPICH frees at finalize */
        char *path = MPL_strdup(MPIDI_LLC_COLL_JSON);
        if (path) {
            MPL_free((void *) cur);
            MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE = path;
        }
    }
#endif
}

int MPIDI_LLC_init_local(int *tag_bits)
{
    *tag_bits = MPIR_TAG_BITS_DEFAULT;
    select_llc_collectives();
    memset(MPIDI_LLC_global.vci, 0, sizeof(MPIDI_LLC_global.vci));
    MPIDI_LLC_global.nvcis = 0;
    MPIDI_LLC_global.nfast = 0;
    return MPI_SUCCESS;
}

/* MPI_Init fails right after this: MPICH prints its error stack (cut at
 * MPI_MAX_ERROR_STRING) and asks the process manager to abort the job, and
 * the launcher may tear the job down before it has forwarded that line.
 * Say the whole reason here and give the launcher time to pass it on. */
static void report_init_failure(const char *why)
{
    struct timespec pause = { 0, 300 * 1000 * 1000 };

    fprintf(stderr, "[llc] rank %d: MPI_Init failed: %s\n", MPIR_Process.rank, why);
    fflush(stderr);
    nanosleep(&pause, NULL);
}

/* A Slurm job step started without PMI (srun --mpi=none, or a slurm.conf
 * without MpiDefault=pmi2) gives every task a PMI world of size 1: the job
 * would silently run as N independent singletons.  Slurm tells each task
 * how many tasks its step has; with no PMI in the environment (PMI_FD /
 * PMI_PORT, which both Slurm's pmi2 plugin and hydra set) that mismatch is
 * a launch error.  MPIR_CVAR_CH4_LLC_SLURM_SINGLETONS=1 (cvars.txt) allows it
 * on purpose. */
static const char *slurm_without_pmi(void)
{
    static char why[400];
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS");

    if (MPIR_Process.size != 1 || ntasks == NULL || atoi(ntasks) <= 1)
        return NULL;
    if (getenv("PMI_FD") || getenv("PMI_PORT") || MPIR_CVAR_CH4_LLC_SLURM_SINGLETONS)
        return NULL;
    snprintf(why, sizeof(why), "this is task %s of a Slurm job step of %s tasks "
             "(SLURM_STEP_NUM_TASKS) but the launcher gave it no PMI, so each task "
             "would run alone as MPI_COMM_WORLD of size 1: launch with "
             "'srun --mpi=pmi2' (or set MpiDefault=pmi2 in slurm.conf); "
             "MPIR_CVAR_CH4_LLC_SLURM_SINGLETONS=1 allows singletons on purpose",
             getenv("SLURM_PROCID") ? getenv("SLURM_PROCID") : "?", ntasks);
    return why;
}

/* MPI_T performance variables (doc/counters.md): every libllc counter
 * (llc_counters.h) under its own name ("llc_<component>_<counter>"), bound to
 * no object, and every counter of the collectives (llc_coll.h,
 * "llc_coll_<collective>_<counter>"), bound to a communicator when it is one
 * per communicator; all read through callbacks.  MPICH keeps the variables
 * after MPI_Finalize, so libllc's values at finalize are kept for reads made
 * after it. */
#define MPIDI_LLC_PVARS_MAX 256
static int pvars_registered;
static int pvars_final_valid;
static uint64_t pvars_final[MPIDI_LLC_PVARS_MAX];

/* addr: libllc's counter index + 1.  The sum over the VCIs' endpoints (each
 * read under its VCI's lock). */
static void read_pvar(void *addr, void *obj_handle, int count, void *buf)
{
    int index = (int) ((intptr_t) addr - 1);
    uint64_t value = 0;
    MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    if (MPIDI_LLC_global.nvcis > 0) {
        for (int v = 0; v < MPIDI_LLC_global.nvcis; v++) {
            uint64_t one = 0;
            MPID_THREAD_CS_ENTER(VCI, MPIDI_VCI(v).lock);
            llc_counter_read(MPIDI_LLC_global.vci[v].ctx, index, 1, &one);
            MPID_THREAD_CS_EXIT(VCI, MPIDI_VCI(v).lock);
            value += one;
        }
    } else if (pvars_final_valid)
        value = pvars_final[index];
    MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    *(unsigned long long *) buf = value;
}

/* One read-only, continuous unsigned long long variable in the category
 * "LLC"; addr carries index + 1 (MPICH wants a non-NULL address). */
static void register_pvar(int is_counter, const char *name, int index, MPIR_T_bind_t bind,
                          MPIR_T_pvar_get_value_cb * read, const char *help)
{
    MPIR_T_PVAR_REGISTER_impl(is_counter ? MPI_T_PVAR_CLASS_COUNTER : MPI_T_PVAR_CLASS_LEVEL,
                              MPI_UNSIGNED_LONG_LONG, name, (void *) (intptr_t) (index + 1), 1,
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_DETAIL, bind,
                              MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS, read, NULL,
                              "LLC", help);
}

/* addr: the collectives' counter index + 1; obj_handle: the MPI_Comm the
 * handle is bound to (per-communicator counters), whose state is read. */
static void read_coll_pvar(void *addr, void *obj_handle, int count, void *buf)
{
    int index = (int) ((intptr_t) addr - 1);
    uint64_t value = 0;
    MPIR_Comm *comm_ptr = NULL;
    MPID_THREAD_CS_ENTER(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    if (obj_handle && *(MPI_Comm *) obj_handle != MPI_COMM_NULL)
        MPIR_Comm_get_ptr(*(MPI_Comm *) obj_handle, comm_ptr);
    llc_coll_counter_read(comm_ptr ? comm_ptr->dev.ch4.netmod.llc.coll_state : NULL, index, &value);
    MPID_THREAD_CS_EXIT(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
    *(unsigned long long *) buf = value;
}

static void register_coll_pvars(void)
{
    for (int i = 0; i < llc_coll_counter_count(); i++) {
        llc_coll_counter_info_t info;
        if (llc_coll_counter_info(i, &info) != 0)
            break;
        register_pvar(info.counter_class == LLC_COLL_COUNTER_COUNT, info.name, i,
                      info.per_comm ? MPI_T_BIND_MPI_COMM : MPI_T_BIND_NO_OBJECT, read_coll_pvar,
                      info.help);
    }
}

static void register_pvars(void)
{
    int n = llc_counter_count();
    if (pvars_registered)
        return; /* MPICH refuses a second registration of an active variable */
    pvars_registered = 1;
    if (n > MPIDI_LLC_PVARS_MAX)
        n = MPIDI_LLC_PVARS_MAX;
    MPIR_T_cat_add_desc("LLC", "ch4:llc: libllc's messages, bytes, peers, connections and "
                        "protocol events per process, and the self-tuning collectives' rounds, "
                        "calls and learning");
    for (int i = 0; i < n; i++) {
        llc_counter_info_t info;
        if (llc_counter_info(i, &info) != LLC_OK)
            break;
        register_pvar(info.counter_class == LLC_COUNTER_COUNT, info.name, i, MPI_T_BIND_NO_OBJECT,
                      read_pvar, info.help);
    }
    register_coll_pvars();
}

/* Called before llc_finalize: the values a read after MPI_Finalize gives
 * (summed over the endpoints, as read_pvar). */
static void keep_final_pvars(void)
{
    uint64_t one[MPIDI_LLC_PVARS_MAX];
    int n = llc_counter_count();
    if (n > MPIDI_LLC_PVARS_MAX)
        n = MPIDI_LLC_PVARS_MAX;
    memset(pvars_final, 0, sizeof(pvars_final));
    pvars_final_valid = 1;
    for (int v = 0; v < MPIDI_LLC_global.nvcis; v++) {
        if (llc_counter_read(MPIDI_LLC_global.vci[v].ctx, 0, n, one) != LLC_OK) {
            pvars_final_valid = 0;
            return;
        }
        for (int i = 0; i < n; i++)
            pvars_final[i] += one[i];
    }
}

/* The endpoint of VCI v, collectively (doc/threads.md): its context (libllc
 * endpoint v), the idle hook, the handler of MPIDIG's active messages, its
 * fast paths to the node's processes (fast[j] for the peer whose address
 * entry has fast_plus1 j + 1, set while making endpoint 0) and its poll. */
static int open_endpoint(llc_init_params_t * p, int v)
{
    int mpi_errno = MPI_SUCCESS;
    int rc;
    MPIDI_LLC_vci_t *ep = &MPIDI_LLC_global.vci[v];

    p->endpoint = v;
    rc = llc_init(p, &ep->ctx);
    if (rc != LLC_OK) {
        char why[600];
        snprintf(why, sizeof(why), "endpoint %d of %d (one per VCI): %s", v,
                 MPIDI_global.n_vcis, llc_last_error(NULL));
        report_init_failure(v == 0 ? llc_last_error(NULL) : why);
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s",
                             v == 0 ? llc_last_error(NULL) : why);
    }
    MPIDI_LLC_global.nvcis = v + 1;
    ep->deferred_errno = MPI_SUCCESS;
    MPIR_ERR_CHKANDJUMP1(!(llc_caps(ep->ctx) & LLC_CAP_TAGGED), mpi_errno,
                         MPI_ERR_OTHER, "**fail", "**fail %s",
                         "libllc has no tagged messages (LLC_CAP_TAGGED): mismatched libllc?");
    llc_set_idle_hook(ep->ctx, idle_outside_lock, (void *) (intptr_t) v);
    ep->fast = MPL_calloc(MPIR_Process.local_size, sizeof(llc_fast_peer_t *), MPL_MEM_ADDRESS);
    MPIR_ERR_CHKANDJUMP(ep->fast == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < MPIR_Process.size; i++) {
        MPIDI_av_entry_t *av = &MPIDIU_get_av(0, i);
        llc_fast_peer_t *fast = NULL;
        if (v == 0) {
            av->netmod.llc.dest_plus1 = i + 1;
            av->netmod.llc.fast_plus1 = 0;
            if (MPIR_Process.node_map[i] == MPIR_Process.node_map[MPIR_Process.rank])
                fast = llc_fast_peer(ep->ctx, i, LLC_FAST_LAYOUT);
            if (fast && MPIDI_LLC_global.nfast < MPIR_Process.local_size) {
                ep->fast[MPIDI_LLC_global.nfast++] = fast;
                av->netmod.llc.fast_plus1 = MPIDI_LLC_global.nfast;
            }
        } else if (av->netmod.llc.fast_plus1) {
            /* every endpoint has the fast path to a peer, or none uses it */
            fast = llc_fast_peer(ep->ctx, i, LLC_FAST_LAYOUT);
            if (fast)
                ep->fast[av->netmod.llc.fast_plus1 - 1] = fast;
            else
                av->netmod.llc.fast_plus1 = 0;
        }
    }
    ep->poll = llc_fast_poll(ep->ctx, LLC_FAST_LAYOUT);
    rc = llc_am_register(ep->ctx, MPIDI_LLC_AM_ID, MPIDI_LLC_am_recv_handler, ep);
    MPIR_ERR_CHKANDJUMP1(rc != LLC_OK, mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s",
                         llc_last_error(ep->ctx));
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_LLC_init_world(void)
{
    int mpi_errno = MPI_SUCCESS;
    llc_init_params_t p;

    MPIR_FUNC_ENTER;

    const char *no_pmi = slurm_without_pmi();
    if (no_pmi) {
        report_init_failure(no_pmi);
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s", no_pmi);
    }

    memset(&p, 0, sizeof(p));
    p.api_version = LLC_API_VERSION;
    p.rank = MPIR_Process.rank;
    p.size = MPIR_Process.size;
    p.node_of_rank = MPIR_Process.node_map;
    p.job_id = MPIR_pmi_job_id();
    p.boot.arg = NULL;
    p.boot.put = boot_put;
    p.boot.get = boot_get;
    p.boot.fence = boot_fence;
    p.boot.allgather = NULL;

    /* one endpoint per VCI, in the same order in every process */
    for (int v = 0; v < MPIDI_global.n_vcis; v++) {
        mpi_errno = open_endpoint(&p, v);
        MPIR_ERR_CHECK(mpi_errno);
    }
    register_pvars();

    if (MPIR_CVAR_DEBUG_SUMMARY && MPIR_Process.rank == 0) {
        printf("==== LLC netmod ====\n");
        printf("endpoints (one per VCI): %d\n", MPIDI_LLC_global.nvcis);
        printf("eager buffer limit: %d\n", MPIDI_LLC_EAGER_BUF_LIMIT);
        printf("max am header: %d\n", (int) (LLC_AM_HDR_MAX - sizeof(MPIDI_LLC_am_hdr_t)));
        printf("====================\n");
    }

  fn_exit:
    MPIR_FUNC_EXIT;
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_LLC_post_init(void)
{
    return MPI_SUCCESS;
}

int MPIDI_LLC_mpi_finalize_hook(void)
{
    int mpi_errno = MPI_SUCCESS;
    int n = MPIDI_LLC_global.nvcis;

    if (n > 0) {
        /* MPI_THREAD_MULTIPLE: another thread still inside progress (its idle
         * sleep, or stopped on MPICH's lock that this thread keeps through
         * MPI_Finalize) would use libllc during or after llc_finalize; one
         * that comes to progress later sees `finalizing` and stops there */
        MPL_thread_self(&MPIDI_LLC_global.finalizer);
        MPL_atomic_store_int(&MPIDI_LLC_global.finalizing, 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);        /* pairs with MPIDI_LLC_do_progress's */
        int others = MPL_atomic_load_int(&MPIDI_LLC_global.in_progress);
        if (others > 0) {
            char msg[256];
            snprintf(msg, sizeof(msg), "ch4:llc: MPI_Finalize was called while %d other thread%s "
                     "still waiting inside MPI (MPI_THREAD_MULTIPLE: every thread must have "
                     "left MPI before MPI_Finalize)", others, others == 1 ? " was" : "s were");
            MPID_Abort(NULL, MPI_SUCCESS, 1, msg);
        }
        keep_final_pvars();
        MPIDI_LLC_global.nvcis = 0;
        MPIDI_LLC_global.nfast = 0;
        /* collective: one drain for every VCI's endpoint (a VCI left
         * unprogressed while another waits in its fence could hold a message
         * a peer waits for), then the fences in the reverse order of their
         * making; the first error is reported */
        llc_context_t *ctxs[MPIDI_CH4_MAX_VCIS];
        for (int v = n - 1; v >= 0; v--) {
            MPIDI_LLC_vci_t *ep = &MPIDI_LLC_global.vci[v];
            MPL_free(ep->fast);
            ep->fast = NULL;
            ep->poll = NULL;
            ctxs[n - 1 - v] = ep->ctx;
            ep->ctx = NULL;
        }
        if (llc_finalize_all(ctxs, n) != LLC_OK)
            MPIR_ERR_SET1(mpi_errno, MPI_ERR_OTHER, "**fail", "**fail %s", llc_last_error(NULL));
    }
    return mpi_errno;
}

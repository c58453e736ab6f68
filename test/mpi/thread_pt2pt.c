/* MPI_THREAD_MULTIPLE point-to-point under a seeded random plan: threads
 * of every process send, receive, probe and cancel at once, on communicators
 * of their own and on shared ones.  Every byte, every count, every status
 * and MPI's non-overtaking order per (communicator, source, tag) are
 * checked; a failed check aborts the job and names the seed to replay.
 *
 * Usage: thread_pt2pt [threads per process (default 4)] [messages (default 60)] [seed]
 * Without a seed, rank 0 picks one from the clock; it is printed first
 * ("thread_pt2pt: seed S"), and `thread_pt2pt T N S` replays the plan (the
 * interleaving of the threads is the operating system's).
 *
 * Phase 1, lanes: the threads form T/2 lanes, each a sender thread and a
 * receiver thread (an odd thread out keeps posting and cancelling receives
 * that nothing matches and probing for them, on the shared communicator,
 * while the lanes run).  The sender of lane l sends N messages to every
 * other rank, in the order (message, destination); message i goes on lane
 * l's own communicator or on the shared one (tags per lane), with a tag out
 * of 4, a size of 0 B, around libllc's 16 KiB eager limit, or up to 4 MiB
 * (rendezvous), by MPI_Send, MPI_Isend (up to 4 outstanding), MPI_Ssend or
 * MPI_Issend.  Now and then it also sends a message and cancels it at once,
 * then tells the receiver whether MPI_Test_cancelled said cancelled.  The
 * receiver of lane l takes the messages in the same order, each by one of
 * MPI_Recv, MPI_Recv with MPI_ANY_TAG (own communicator only), MPI_Irecv +
 * MPI_Wait or MPI_Test, MPI_Probe or MPI_Iprobe + MPI_Recv, MPI_Improbe or
 * MPI_Mprobe + MPI_Mrecv, or an MPI_Irecv cancelled at once (the message is
 * received again when the cancel did not take it).  Because everything
 * earlier from that source on that (communicator, tag) was already
 * received, the receive must match exactly message i: its size, source,
 * tag and every byte say it did.
 *
 * Phase 2, race: every thread of every process sends messages (16 B to
 * 40 KiB, eager and rendezvous) to every other rank on one communicator,
 * tag = its thread number, and receives as many with MPI_ANY_SOURCE and
 * MPI_ANY_TAG (MPI_Recv, MPI_Irecv + MPI_Wait, MPI_Improbe + MPI_Mrecv,
 * MPI_Mprobe + MPI_Mrecv).  Which thread gets which message is a race:
 * each message arrives exactly once, and each receiving thread sees the
 * messages of one sending thread in the order they were sent. */
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define NMETHODS 9
#define TAG_CANCEL 40 /* phase 1, own communicator: a send cancelled at once */
#define TAG_NOTE 41   /* phase 1, own communicator: was it cancelled */
#define TAG_NEVER 99  /* nothing is ever sent with it */
#define MAX_SIZE (4 << 20)

static int rank, size, nthreads = 4, nlanes, nmsg = 60;
static uint64_t seed;
static MPI_Comm *own, shared, race;
static int lanes_done;          /* atomic: receivers of phase 1 done */
/* atomic, summed at rank 0: receives by method, then sends and receives cancelled */
static uint64_t ops[NMETHODS + 2];
#define SENDS_CANCELLED NMETHODS
#define RECVS_CANCELLED (NMETHODS + 1)

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* the plan: a random word for (what, src, lane, dst, i), the same on every rank */
static uint64_t plan(int what, int src, int lane, int dst, int i)
{
    uint64_t h = mix(seed ^ (uint64_t) what);
    h = mix(h ^ (uint64_t) src);
    h = mix(h ^ (uint64_t) lane << 8);
    h = mix(h ^ (uint64_t) dst << 16);
    return mix(h ^ (uint64_t) i << 24);
}

static size_t plan_size(int src, int lane, int dst, int i)
{
    uint64_t r = plan(1, src, lane, dst, i), p = r % 100, x = r >> 8;
    if (p < 8)
        return 0;
    if (p < 30)
        return 1 + x % 64;
    if (p < 50)
        return 65 + x % 4000;
    if (p < 70)
        return 16384 - 64 + x % 128;    /* libllc's eager limit (LLC_TAG_EAGER_BYTES) */
    if (p < 80)
        return 65536 - 64 + x % 128;
    if (p < 94)
        return 70000 + x % 500000;
    return (1 << 20) + x % (3 << 20);   /* up to 4 MiB */
}

/* message i of lane l from src to dst: on lane l's communicator (1) or the shared one (0) */
static int plan_on_own(int src, int lane, int dst, int i)
{
    return plan(2, src, lane, dst, i) & 1;
}

static int plan_tag(int src, int lane, int dst, int i)
{
    int k = (int) (plan(3, src, lane, dst, i) % 4);
    return plan_on_own(src, lane, dst, i) ? k : 100 + lane * 4 + k;
}

/* every 7th message or so is followed by a send cancelled at once */
static int plan_cancel(int src, int lane, int dst, int i)
{
    return plan(4, src, lane, dst, i) % 7 == 0;
}

static void fill(char *buf, size_t len, uint64_t key)
{
    for (size_t j = 0; j < len; j++)
        buf[j] = (char) pattern((unsigned) key, j);
}

static size_t first_bad(const char *buf, size_t len, uint64_t key)
{
    for (size_t j = 0; j < len; j++)
        if (buf[j] != (char) pattern((unsigned) key, j))
            return j;
    return len;
}

#define FAIL_SEED(...)                                                                   \
    do {                                                                                 \
        fprintf(stderr, "thread_pt2pt: replay with seed %llu\n", (unsigned long long) seed); \
        CHECK(0, __VA_ARGS__);                                                           \
    } while (0)

/* checks a phase-1 message: status, count and bytes */
static void check_msg(const char *what, const MPI_Status *st, const char *buf, int src, int lane, int i,
                      int tag, size_t len, uint64_t key)
{
    int got;
    MPI_Get_count(st, MPI_CHAR, &got);
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || (size_t) got != len)
        FAIL_SEED("%s: lane %d message %d from rank %d: expected tag %d, %zu B; got source %d tag %d %d B "
                  "(order or matching)", what, lane, i, src, tag, len, st->MPI_SOURCE, st->MPI_TAG, got);
    size_t j = first_bad(buf, len, key);
    if (j != len)
        FAIL_SEED("%s: lane %d message %d from rank %d (%zu B): byte %zu wrong", what, lane, i, src, len, j);
}

/* ------------------------------------------------------------ phase 1: sender */

typedef struct {
    MPI_Request req;
    char *buf;
} pending_t;

static void sender(int lane)
{
    pending_t win[4] = { { MPI_REQUEST_NULL, NULL }, { MPI_REQUEST_NULL, NULL },
                         { MPI_REQUEST_NULL, NULL }, { MPI_REQUEST_NULL, NULL } };
    int slot = 0;
    for (int i = 0; i < nmsg; i++)
        for (int d = 0; d < size; d++) {
            if (d == rank)
                continue;
            size_t len = plan_size(rank, lane, d, i);
            int tag = plan_tag(rank, lane, d, i);
            MPI_Comm c = plan_on_own(rank, lane, d, i) ? own[lane] : shared;
            char *buf = malloc(len ? len : 1);
            CHECK(buf, "out of memory");
            fill(buf, len, plan(5, rank, lane, d, i));
            switch (plan(6, rank, lane, d, i) % 4) {
                case 0:
                    CHECK_MPI(MPI_Send(buf, (int) len, MPI_CHAR, d, tag, c));
                    free(buf);
                    break;
                case 1:
                    CHECK_MPI(MPI_Ssend(buf, (int) len, MPI_CHAR, d, tag, c));
                    free(buf);
                    break;
                default:
                    /* the oldest of 4 outstanding completes first: MPI_Isend or MPI_Issend */
                    if (win[slot].req != MPI_REQUEST_NULL) {
                        CHECK_MPI(MPI_Wait(&win[slot].req, MPI_STATUS_IGNORE));
                        free(win[slot].buf);
                    }
                    if (plan(6, rank, lane, d, i) % 4 == 2)
                        CHECK_MPI(MPI_Isend(buf, (int) len, MPI_CHAR, d, tag, c, &win[slot].req));
                    else
                        CHECK_MPI(MPI_Issend(buf, (int) len, MPI_CHAR, d, tag, c, &win[slot].req));
                    win[slot].buf = buf;
                    slot = (slot + 1) % 4;
            }
            if (plan_cancel(rank, lane, d, i)) {
                /* cancel a send at once; the receiver has both receives
                 * posted, so waiting for it ends either way */
                size_t xlen = plan_size(rank, lane, d, i + 1000);
                char *x = malloc(xlen ? xlen : 1);
                MPI_Request r;
                MPI_Status st;
                int cancelled = 0;
                CHECK(x, "out of memory");
                fill(x, xlen, plan(7, rank, lane, d, i));
                CHECK_MPI(MPI_Isend(x, (int) xlen, MPI_CHAR, d, TAG_CANCEL, own[lane], &r));
                CHECK_MPI(MPI_Cancel(&r));
                CHECK_MPI(MPI_Wait(&r, &st));
                CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
                if (cancelled)
                    __atomic_fetch_add(&ops[SENDS_CANCELLED], 1, __ATOMIC_RELAXED);
                CHECK_MPI(MPI_Send(&cancelled, 1, MPI_INT, d, TAG_NOTE, own[lane]));
                free(x);
            }
        }
    for (int k = 0; k < 4; k++)
        if (win[k].req != MPI_REQUEST_NULL) {
            CHECK_MPI(MPI_Wait(&win[k].req, MPI_STATUS_IGNORE));
            free(win[k].buf);
        }
}

/* ------------------------------------------------------------ phase 1: receiver */

static void receive_one(int lane, int s, int i, char *buf, uint64_t *rng)
{
    size_t len = plan_size(s, lane, rank, i);
    int tag = plan_tag(s, lane, rank, i), on_own = plan_on_own(s, lane, rank, i);
    MPI_Comm c = on_own ? own[lane] : shared;
    uint64_t key = plan(5, s, lane, rank, i);
    int count = (int) len + (int) (*rng % 3) * 17; /* a larger buffer than the message, sometimes */
    int method = (int) ((*rng = mix(*rng)) % NMETHODS);
    int rtag = tag, flag = 0, probed;
    MPI_Status st, pst;
    MPI_Request r;
    MPI_Message m;
    static const char *names[NMETHODS] = { "MPI_Recv", "MPI_Recv(MPI_ANY_TAG)", "MPI_Irecv+MPI_Wait",
                                           "MPI_Irecv+MPI_Test", "MPI_Probe+MPI_Recv", "MPI_Iprobe+MPI_Recv",
                                           "MPI_Improbe+MPI_Mrecv", "MPI_Mprobe+MPI_Mrecv",
                                           "MPI_Irecv+MPI_Cancel" };

    memset(buf, 0x5a, len);
    if (method == 1 && !on_own)
        method = 0; /* other lanes' tags flow on the shared communicator */
    if (method == 1)
        rtag = MPI_ANY_TAG;
    __atomic_fetch_add(&ops[method], 1, __ATOMIC_RELAXED);
    switch (method) {
        case 0:
        case 1:
            CHECK_MPI(MPI_Recv(buf, count, MPI_CHAR, s, rtag, c, &st));
            break;
        case 2:
            CHECK_MPI(MPI_Irecv(buf, count, MPI_CHAR, s, rtag, c, &r));
            CHECK_MPI(MPI_Wait(&r, &st));
            break;
        case 3:
            CHECK_MPI(MPI_Irecv(buf, count, MPI_CHAR, s, rtag, c, &r));
            do
                CHECK_MPI(MPI_Test(&r, &flag, &st));
            while (!flag);
            break;
        case 4:
        case 5:
            if (method == 4)
                CHECK_MPI(MPI_Probe(s, tag, c, &pst));
            else
                do
                    CHECK_MPI(MPI_Iprobe(s, tag, c, &flag, &pst));
                while (!flag);
            MPI_Get_count(&pst, MPI_CHAR, &probed);
            if (pst.MPI_SOURCE != s || pst.MPI_TAG != tag || (size_t) probed != len)
                FAIL_SEED("%s: lane %d message %d from rank %d: probed source %d tag %d %d B, expected tag %d %zu B",
                          names[method], lane, i, s, pst.MPI_SOURCE, pst.MPI_TAG, probed, tag, len);
            CHECK_MPI(MPI_Recv(buf, probed, MPI_CHAR, s, tag, c, &st));
            break;
        case 6:
        case 7:
            if (method == 7)
                CHECK_MPI(MPI_Mprobe(s, tag, c, &m, &pst));
            else
                do
                    CHECK_MPI(MPI_Improbe(s, tag, c, &flag, &m, &pst));
                while (!flag);
            MPI_Get_count(&pst, MPI_CHAR, &probed);
            if ((size_t) probed != len)
                FAIL_SEED("%s: lane %d message %d from rank %d: probed %d B, expected %zu B", names[method], lane,
                          i, s, probed, len);
            CHECK_MPI(MPI_Mrecv(buf, probed, MPI_CHAR, &m, &st));
            break;
        case 8: {
            /* a cancel racing with the message: either the receive is
             * cancelled (then received again) or it completed with it */
            int cancelled = 0;
            CHECK_MPI(MPI_Irecv(buf, count, MPI_CHAR, s, tag, c, &r));
            CHECK_MPI(MPI_Cancel(&r));
            CHECK_MPI(MPI_Wait(&r, &st));
            CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
            if (cancelled) {
                __atomic_fetch_add(&ops[RECVS_CANCELLED], 1, __ATOMIC_RELAXED);
                CHECK_MPI(MPI_Recv(buf, count, MPI_CHAR, s, tag, c, &st));
            }
            break;
        }
    }
    check_msg(names[method], &st, buf, s, lane, i, tag, len, key);

    if (plan_cancel(s, lane, rank, i)) {
        /* the sender cancelled a send at once and says if MPI_Test_cancelled said so */
        size_t xlen = plan_size(s, lane, rank, i + 1000);
        MPI_Request rx, rn;
        int cancelled = -1, rx_cancelled = 0;
        CHECK_MPI(MPI_Irecv(buf, (int) xlen, MPI_CHAR, s, TAG_CANCEL, own[lane], &rx));
        CHECK_MPI(MPI_Irecv(&cancelled, 1, MPI_INT, s, TAG_NOTE, own[lane], &rn));
        CHECK_MPI(MPI_Wait(&rn, MPI_STATUS_IGNORE));
        if (cancelled) {
            CHECK_MPI(MPI_Cancel(&rx));
            CHECK_MPI(MPI_Wait(&rx, &st));
            CHECK_MPI(MPI_Test_cancelled(&st, &rx_cancelled));
            if (!rx_cancelled)
                FAIL_SEED("lane %d: rank %d cancelled a send (MPI_Test_cancelled true) but it was received", lane,
                          s);
        } else {
            CHECK_MPI(MPI_Wait(&rx, &st));
            check_msg("send not cancelled", &st, buf, s, lane, i, TAG_CANCEL, xlen, plan(7, s, lane, rank, i));
        }
    }
}

static void receiver(int lane)
{
    char *buf = malloc(MAX_SIZE + 64);
    uint64_t rng = plan(8, rank, lane, 0, 0);
    CHECK(buf, "out of memory");
    for (int i = 0; i < nmsg; i++)
        for (int s = 0; s < size; s++)
            if (s != rank)
                receive_one(lane, s, i, buf, &rng);
    free(buf);
    __atomic_fetch_add(&lanes_done, 1, __ATOMIC_RELEASE);
}

/* the odd thread out: receives nothing ever matches, cancelled; probes that find nothing */
static void noise(void)
{
    int n = 0;
    while (__atomic_load_n(&lanes_done, __ATOMIC_ACQUIRE) < nlanes) {
        MPI_Request r;
        MPI_Status st;
        int v, flag = 1, cancelled = 0;
        CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, (n & 1) ? MPI_ANY_SOURCE : (rank + 1) % size, TAG_NEVER, shared, &r));
        CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, TAG_NEVER, shared, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "noise: probed a message nobody sent");
        CHECK_MPI(MPI_Cancel(&r));
        CHECK_MPI(MPI_Wait(&r, &st));
        CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled, "noise: a receive nothing matches was not cancelled");
        n++;
    }
}

/* ------------------------------------------------------------ phase 2: race */

typedef struct {
    int32_t src, thread, seq, len;
} hdr_t;

static int *race_seen; /* [src][thread][seq], atomic */

static size_t race_size(int src, int t, int dst, int i)
{
    uint64_t r = plan(9, src, t, dst, i);
    size_t s = (r % 3 == 0) ? 16384 + (r >> 8) % 24576 : 16 + (r >> 8) % 3000;
    return s < sizeof(hdr_t) ? sizeof(hdr_t) : s;
}

static void phase_race(int t, char *rbuf)
{
    int per = nmsg / 2 + 1, n = 0;
    int *last = malloc(sizeof(int) * (size_t) size * (size_t) nthreads);
    MPI_Request *sr = malloc(sizeof(MPI_Request) * (size_t) size * (size_t) per);
    char **sb = malloc(sizeof(char *) * (size_t) size * (size_t) per);
    uint64_t rng = plan(10, rank, t, 0, 0);
    CHECK(last && sr && sb, "out of memory");
    for (int k = 0; k < size * nthreads; k++)
        last[k] = -1;
    for (int i = 0; i < per; i++)
        for (int d = 0; d < size; d++) {
            if (d == rank)
                continue;
            size_t len = race_size(rank, t, d, i);
            hdr_t h = { rank, t, i, (int32_t) len };
            char *b = malloc(len);
            CHECK(b, "out of memory");
            fill(b, len, plan(11, rank, t, d, i));
            memcpy(b, &h, sizeof h);
            sb[n] = b;
            CHECK_MPI(MPI_Isend(b, (int) len, MPI_CHAR, d, t, race, &sr[n++]));
        }
    for (int k = 0; k < (size - 1) * per; k++) {
        MPI_Status st;
        MPI_Request r;
        MPI_Message m;
        int got, flag = 0;
        switch ((rng = mix(rng)) % 4) {
            case 0:
                CHECK_MPI(MPI_Recv(rbuf, 65536, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, race, &st));
                break;
            case 1:
                CHECK_MPI(MPI_Irecv(rbuf, 65536, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, race, &r));
                CHECK_MPI(MPI_Wait(&r, &st));
                break;
            case 2:
                do
                    CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, race, &flag, &m, &st));
                while (!flag);
                CHECK_MPI(MPI_Mrecv(rbuf, 65536, MPI_CHAR, &m, &st));
                break;
            default:
                CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, race, &m, &st));
                CHECK_MPI(MPI_Mrecv(rbuf, 65536, MPI_CHAR, &m, &st));
        }
        MPI_Get_count(&st, MPI_CHAR, &got);
        hdr_t h;
        if ((size_t) got < sizeof h)
            FAIL_SEED("race: %d B from rank %d", got, st.MPI_SOURCE);
        memcpy(&h, rbuf, sizeof h);
        if (h.src != st.MPI_SOURCE || h.thread != st.MPI_TAG || h.len != got || h.thread < 0 ||
            h.thread >= nthreads || h.seq < 0 || h.seq >= per)
            FAIL_SEED("race, thread %d: status source %d tag %d count %d, header rank %d thread %d seq %d len %d", t,
                      st.MPI_SOURCE, st.MPI_TAG, got, h.src, h.thread, h.seq, h.len);
        if ((size_t) got != race_size(h.src, h.thread, rank, h.seq))
            FAIL_SEED("race: message %d of rank %d thread %d has %d B", h.seq, h.src, h.thread, got);
        for (size_t b = sizeof h; b < (size_t) got; b++)
            if (rbuf[b] != (char) pattern((unsigned) plan(11, h.src, h.thread, rank, h.seq), b))
                FAIL_SEED("race: message %d of rank %d thread %d: byte %zu wrong", h.seq, h.src, h.thread, b);
        int key = h.src * nthreads + h.thread;
        if (h.seq <= last[key])
            FAIL_SEED("race, thread %d: from rank %d thread %d message %d after %d (order)", t, h.src, h.thread,
                      h.seq, last[key]);
        last[key] = h.seq;
        __atomic_fetch_add(&race_seen[(size_t) key * (size_t) per + (size_t) h.seq], 1, __ATOMIC_RELAXED);
    }
    CHECK_MPI(MPI_Waitall(n, sr, MPI_STATUSES_IGNORE));
    for (int k = 0; k < n; k++)
        free(sb[k]);
    free(sb);
    free(sr);
    free(last);
}

static pthread_barrier_t barrier;

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg;
    char *rbuf = malloc(65536);
    CHECK(rbuf, "out of memory");
    if (t < 2 * nlanes) {
        if (t % 2 == 0)
            sender(t / 2);
        else
            receiver(t / 2);
    } else {
        noise();
    }
    pthread_barrier_wait(&barrier);
    if (t == 0)
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    pthread_barrier_wait(&barrier);
    phase_race(t, rbuf);
    free(rbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE requested, %d provided", provided);
    CHECK(size >= 2, "needs at least 2 processes");
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        nmsg = atoi(argv[2]);
    CHECK(nthreads >= 2 && nthreads <= 32 && nmsg >= 1 && nmsg <= 1000,
          "usage: thread_pt2pt [threads, 2..32] [messages, 1..1000] [seed]");
    unsigned long long s = argc > 3 ? strtoull(argv[3], NULL, 0) : (unsigned long long) (MPI_Wtime() * 1e6);
    CHECK_MPI(MPI_Bcast(&s, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
    seed = s;
    nlanes = nthreads / 2;
    if (rank == 0) {
        printf("thread_pt2pt: seed %llu (replay: thread_pt2pt %d %d %llu)\n", s, nthreads, nmsg, s);
        fflush(stdout);
    }

    int per = nmsg / 2 + 1;
    own = malloc(sizeof(MPI_Comm) * (size_t) nlanes);
    race_seen = calloc((size_t) size * (size_t) nthreads * (size_t) per, sizeof(int));
    CHECK(own && race_seen, "out of memory");
    for (int l = 0; l < nlanes; l++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &own[l]));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &shared));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &race));
    pthread_barrier_init(&barrier, NULL, (unsigned) nthreads);

    double t0 = MPI_Wtime();
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t) nthreads);
    CHECK(th != NULL, "out of memory");
    for (int t = 0; t < nthreads; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t) == 0, "pthread_create");
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);

    /* phase 2: every message of every other rank's every thread, exactly once */
    for (int src = 0; src < size; src++)
        for (int t = 0; t < nthreads; t++)
            for (int i = 0; i < per; i++) {
                int seen = race_seen[((size_t) src * (size_t) nthreads + (size_t) t) * (size_t) per + (size_t) i];
                if (seen != (src == rank ? 0 : 1))
                    FAIL_SEED("race: message %d of rank %d thread %d received %d times", i, src, t, seen);
            }

    /* how often each receive method ran, and how many sends were cancelled */
    uint64_t sum[NMETHODS + 2];
    CHECK_MPI(MPI_Reduce(ops, sum, NMETHODS + 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD));
    for (int l = 0; l < nlanes; l++)
        CHECK_MPI(MPI_Comm_free(&own[l]));
    CHECK_MPI(MPI_Comm_free(&shared));
    CHECK_MPI(MPI_Comm_free(&race));
    if (rank == 0) {
        printf("thread_pt2pt: receives by Recv %llu, Recv(ANY_TAG) %llu, Irecv+Wait %llu, Irecv+Test %llu, "
               "Probe %llu, Iprobe %llu, Improbe %llu, Mprobe %llu, Irecv+Cancel %llu (cancelled %llu); sends cancelled %llu\n",
               (unsigned long long) sum[0], (unsigned long long) sum[1], (unsigned long long) sum[2],
               (unsigned long long) sum[3], (unsigned long long) sum[4], (unsigned long long) sum[5],
               (unsigned long long) sum[6], (unsigned long long) sum[7],
               (unsigned long long) sum[8], (unsigned long long) sum[RECVS_CANCELLED],
               (unsigned long long) sum[SENDS_CANCELLED]);
        printf("thread_pt2pt: %d processes x %d threads, %d messages per lane and peer, %.1f s: all checks passed\n",
               size, nthreads, nmsg, MPI_Wtime() - t0);
    }
    pthread_barrier_destroy(&barrier);
    free(th);
    free(own);
    free(race_seen);
    MPI_Finalize();
    return 0;
}

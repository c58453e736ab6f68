/* MPI_THREAD_MULTIPLE: several threads per process send, receive, probe,
 * cancel and run collectives at the same time, on their own communicators
 * and on a shared one.  Every byte, every count and MPI's order per
 * (communicator, source, tag) are checked; a failed check aborts the job.
 *
 * Usage: thread_multiple [threads per process (default 4)] [messages (default 100)]
 *
 * Phases (all threads of all processes take part in each):
 *  1. own communicator: a ring, messages of 8 B .. 1 MiB (the inline,
 *     eager, request-to-send and offered-receive paths), received in order
 *     with MPI_ANY_TAG, some by MPI_Irecv posted before the send;
 *  2. shared communicator, a tag per thread: every rank sends to every
 *     other; receives with MPI_ANY_SOURCE; per-source order checked;
 *  3. shared communicator, one tag: the threads of a process race for the
 *     same messages with MPI_ANY_SOURCE receives; every message arrives
 *     exactly once, and each receiving thread sees each sender's messages
 *     in the order they were sent;
 *  4. matched probes (MPI_Improbe/MPI_Mrecv) racing across threads;
 *  5. cancelled receives (MPI_Cancel + MPI_Test_cancelled), and
 *     MPI_Allreduce on each thread's own communicator. */
#include "check.h"
#include <pthread.h>
#include <stdint.h>
#include <string.h>

static int rank, size, nthreads = 4, nmsg = 100;
static MPI_Comm *own; /* a communicator per thread */

#define TAG_RACE 1000
#define TAG_PROBE 2000
#define TAG_NEVER 3000

/* message payload: a header then pattern bytes */
typedef struct {
    int32_t src, thread, seq, len;
} hdr_t;

static size_t size_of(int i)
{
    static const size_t sizes[] = { 8, 64, 1024, 8192, 16384, 20000, 65536, 8, 300, 1 << 20 };
    size_t s = sizes[i % 10];
    return s < sizeof(hdr_t) ? sizeof(hdr_t) : s;
}

static void fill(char *buf, size_t len, int src, int thread, int seq)
{
    hdr_t h = { src, thread, seq, (int32_t) len };
    memcpy(buf, &h, sizeof h);
    for (size_t i = sizeof h; i < len; i++)
        buf[i] = (char) pattern((unsigned) (src * 131 + thread * 7 + seq), i);
}

/* checks the bytes of a message against its own header; returns the header */
static hdr_t verify(const char *buf, size_t got, const char *what)
{
    hdr_t h;
    CHECK(got >= sizeof h, "%s: message of %zu bytes", what, got);
    memcpy(&h, buf, sizeof h);
    CHECK((size_t) h.len == got, "%s: header says %d bytes, received %zu", what, h.len, got);
    for (size_t i = sizeof h; i < got; i++)
        CHECK(buf[i] == (char) pattern((unsigned) (h.src * 131 + h.thread * 7 + h.seq), i),
              "%s: byte %zu of message %d from rank %d thread %d", what, i, h.seq, h.src, h.thread);
    return h;
}

static void phase_ring(int t, char *sbuf, char *rbuf)
{
    MPI_Comm c = own[t];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < nmsg; i++) {
        size_t len = size_of(i);
        MPI_Request rr = MPI_REQUEST_NULL, sr;
        MPI_Status st;
        int got;
        if (i % 3 == 0) /* posted before the message: offers for large ones */
            CHECK_MPI(MPI_Irecv(rbuf, 1 << 20, MPI_CHAR, left, MPI_ANY_TAG, c, &rr));
        fill(sbuf, len, rank, t, i);
        CHECK_MPI(MPI_Isend(sbuf, (int) len, MPI_CHAR, right, i, c, &sr));
        if (rr == MPI_REQUEST_NULL)
            CHECK_MPI(MPI_Recv(rbuf, 1 << 20, MPI_CHAR, left, MPI_ANY_TAG, c, &st));
        else
            CHECK_MPI(MPI_Wait(&rr, &st));
        CHECK_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        MPI_Get_count(&st, MPI_CHAR, &got);
        CHECK(st.MPI_TAG == i, "ring, thread %d: message %d arrived as tag %d (order)", t, i, st.MPI_TAG);
        hdr_t h = verify(rbuf, (size_t) got, "ring");
        CHECK(h.src == left && h.thread == t && h.seq == i, "ring, thread %d: got rank %d thread %d seq %d",
              t, h.src, h.thread, h.seq);
    }
}

static void phase_all_to_all(int t, char *sbuf, char *rbuf)
{
    int per = nmsg / 4 + 1, n = 0;
    int *next = calloc((size_t) size, sizeof(int));
    MPI_Request *sr = malloc(sizeof(MPI_Request) * (size_t) size * (size_t) per);
    CHECK(next && sr, "out of memory");
    /* all sends first (completed at the end): a rank that waited for its
     * rendezvous sends each round could wait on one that waits on it */
    for (int i = 0; i < per; i++) {
        size_t len = size_of(i) > 20000 ? 20000 : size_of(i); /* up to above the eager limit */
        char *b = sbuf + (size_t) i * 20480;
        fill(b, len, rank, t, i);
        for (int d = 0; d < size; d++)
            if (d != rank)
                CHECK_MPI(MPI_Isend(b, (int) len, MPI_CHAR, d, t, MPI_COMM_WORLD, &sr[n++]));
    }
    for (int k = 0; k < (size - 1) * per; k++) {
        MPI_Status st;
        int got;
        CHECK_MPI(MPI_Recv(rbuf, 1 << 20, MPI_CHAR, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_CHAR, &got);
        hdr_t h = verify(rbuf, (size_t) got, "all-to-all");
        CHECK(h.src == st.MPI_SOURCE && h.thread == t, "all-to-all, thread %d: from %d says rank %d thread %d", t,
              st.MPI_SOURCE, h.src, h.thread);
        CHECK(h.seq == next[h.src], "all-to-all, thread %d: from rank %d message %d, expected %d (order)", t, h.src,
              h.seq, next[h.src]);
        next[h.src]++;
    }
    CHECK_MPI(MPI_Waitall(n, sr, MPI_STATUSES_IGNORE));
    for (int d = 0; d < size; d++)
        CHECK(d == rank || next[d] == per, "all-to-all, thread %d: %d of %d messages from rank %d", t, next[d], per, d);
    free(next);
    free(sr);
}

/* phase 3: count[src * nthreads + sender thread] per receiving thread */
static int *race_seen;

static void phase_race(int t, char *sbuf, char *rbuf)
{
    int per = nmsg / 4 + 1;
    int expect = (size - 1) * per; /* this thread's share: each sender thread sends per messages to each rank */
    int *last = malloc(sizeof(int) * (size_t) (size * nthreads));
    MPI_Request *sr = malloc(sizeof(MPI_Request) * (size_t) size * (size_t) per);
    int n = 0;
    CHECK(last && sr, "out of memory");
    for (int k = 0; k < size * nthreads; k++)
        last[k] = -1;
    for (int i = 0; i < per; i++) {
        size_t len = (i % 2) ? sizeof(hdr_t) : 2048 + (size_t) i;
        char *b = sbuf + (size_t) i * 4096;
        fill(b, len, rank, t, i);
        for (int d = 0; d < size; d++)
            if (d != rank)
                CHECK_MPI(MPI_Isend(b, (int) len, MPI_CHAR, d, TAG_RACE, MPI_COMM_WORLD, &sr[n++]));
    }
    /* every thread receives as many as it sends; which ones is a race */
    for (int k = 0; k < expect; k++) {
        MPI_Status st;
        int got;
        CHECK_MPI(MPI_Recv(rbuf, 4096, MPI_CHAR, MPI_ANY_SOURCE, TAG_RACE, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_CHAR, &got);
        hdr_t h = verify(rbuf, (size_t) got, "race");
        int key = h.src * nthreads + h.thread;
        CHECK(h.src == st.MPI_SOURCE && h.thread >= 0 && h.thread < nthreads, "race: bad header");
        CHECK(h.seq > last[key], "race, thread %d: from rank %d thread %d message %d after %d (order)", t, h.src,
              h.thread, h.seq, last[key]);
        last[key] = h.seq;
        __atomic_fetch_add(&race_seen[(size_t) key * (size_t) per + (size_t) h.seq], 1, __ATOMIC_RELAXED);
    }
    CHECK_MPI(MPI_Waitall(n, sr, MPI_STATUSES_IGNORE));
    free(last);
    free(sr);
}

static void phase_probe(int t, char *sbuf, char *rbuf)
{
    int per = nmsg / 4 + 1;
    int expect = (size - 1) * per, n = 0;
    MPI_Request *sr = malloc(sizeof(MPI_Request) * (size_t) size * (size_t) per);
    CHECK(sr, "out of memory");
    for (int i = 0; i < per; i++) {
        size_t len = 16 + (size_t) (i * 97 % 3000);
        char *b = sbuf + (size_t) i * 4096;
        fill(b, len, rank, t, i);
        for (int d = 0; d < size; d++)
            if (d != rank)
                CHECK_MPI(MPI_Isend(b, (int) len, MPI_CHAR, d, TAG_PROBE, MPI_COMM_WORLD, &sr[n++]));
    }
    for (int k = 0; k < expect;) {
        int flag = 0, count;
        MPI_Message msg;
        MPI_Status st;
        CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, TAG_PROBE, MPI_COMM_WORLD, &flag, &msg, &st));
        if (!flag)
            continue;
        MPI_Get_count(&st, MPI_CHAR, &count);
        CHECK(count > 0 && count <= 4096, "probe: count %d", count);
        MPI_Status rst;
        int got;
        CHECK_MPI(MPI_Mrecv(rbuf, count, MPI_CHAR, &msg, &rst));
        MPI_Get_count(&rst, MPI_CHAR, &got);
        CHECK(got == count && rst.MPI_SOURCE == st.MPI_SOURCE, "probe: probed %d bytes from %d, received %d from %d",
              count, st.MPI_SOURCE, got, rst.MPI_SOURCE);
        verify(rbuf, (size_t) got, "probe");
        k++;
    }
    CHECK_MPI(MPI_Waitall(n, sr, MPI_STATUSES_IGNORE));
    free(sr);
}

static void phase_cancel_and_reduce(int t)
{
    for (int i = 0; i < 20; i++) {
        MPI_Request r;
        MPI_Status st;
        int v, cancelled = 0;
        CHECK_MPI(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, TAG_NEVER + t, MPI_COMM_WORLD, &r));
        CHECK_MPI(MPI_Cancel(&r));
        CHECK_MPI(MPI_Wait(&r, &st));
        CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled, "cancel, thread %d: a receive nobody matches was not cancelled", t);
    }
    for (int i = 0; i < 20; i++) {
        long in[3] = { rank, t, i }, out[3];
        CHECK_MPI(MPI_Allreduce(in, out, 3, MPI_LONG, MPI_SUM, own[t]));
        CHECK(out[0] == (long) size * (size - 1) / 2 && out[1] == (long) t * size && out[2] == (long) i * size,
              "allreduce, thread %d: got %ld %ld %ld", t, out[0], out[1], out[2]);
    }
}

static pthread_barrier_t phase_barrier;

static void *worker(void *arg)
{
    int t = (int) (intptr_t) arg;
    char *sbuf = malloc((size_t) 1 << 20), *rbuf = malloc((size_t) 1 << 20);
    CHECK(sbuf && rbuf, "out of memory");
    phase_ring(t, sbuf, rbuf);
    phase_all_to_all(t, sbuf, rbuf);
    pthread_barrier_wait(&phase_barrier);
    if (t == 0)
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* phase 3 starts when no earlier message is left */
    pthread_barrier_wait(&phase_barrier);
    phase_race(t, sbuf, rbuf);
    phase_probe(t, sbuf, rbuf);
    phase_cancel_and_reduce(t);
    free(sbuf);
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
    CHECK(nthreads >= 1 && nthreads <= 64 && nmsg >= 1 && nmsg <= 200,
          "usage: thread_multiple [threads, 1..64] [messages, 1..200]");

    int per = nmsg / 4 + 1;
    own = malloc(sizeof(MPI_Comm) * (size_t) nthreads);
    race_seen = calloc((size_t) size * (size_t) nthreads * (size_t) per, sizeof(int));
    CHECK(own && race_seen, "out of memory");
    for (int t = 0; t < nthreads; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &own[t]));
    pthread_barrier_init(&phase_barrier, NULL, (unsigned) nthreads);

    pthread_t *th = malloc(sizeof(pthread_t) * (size_t) nthreads);
    CHECK(th != NULL, "out of memory");
    for (int t = 0; t < nthreads; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *) (intptr_t) t) == 0, "pthread_create");
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);

    /* phase 3: every message from every other rank's every thread, exactly once */
    for (int s = 0; s < size; s++)
        for (int t = 0; t < nthreads; t++)
            for (int i = 0; i < per; i++) {
                int seen = race_seen[((size_t) s * (size_t) nthreads + (size_t) t) * (size_t) per + (size_t) i];
                CHECK(seen == (s == rank ? 0 : 1), "race: message %d of rank %d thread %d received %d times", i, s,
                      t, seen);
            }
    for (int t = 0; t < nthreads; t++)
        CHECK_MPI(MPI_Comm_free(&own[t]));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("thread_multiple: %d processes x %d threads, %d messages per phase: all checks passed\n", size,
               nthreads, nmsg);
    pthread_barrier_destroy(&phase_barrier);
    free(th);
    free(own);
    free(race_seen);
    MPI_Finalize();
    return 0;
}

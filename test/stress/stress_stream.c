/* stress_stream - the long job of test/stress/run (part B).
 *
 * Two ranks send each other a deterministic stream of messages of varying
 * sizes (1 B .. 4 MiB, sizes spread over every power of two) until BYTES
 * bytes have gone through in total, both directions together.  Every byte
 * that arrives is compared with the pattern expected for (direction, message
 * index, byte offset); a wrong length or a wrong byte is counted, not fatal,
 * so that the run ends with a summary.
 *
 * Every ~5 % of the bytes each rank prints a sample of its own memory and
 * descriptors (VmRSS from /proc/self/status, the entries of /proc/self/fd):
 *   stress_stream rank R: sample PCT% bytes B msgs M rss_kb K fds F secs S
 * and after the last message a line "... rank R: final ..." of the same form.
 * Rank 0 ends with
 *   stress_stream: summary bytes B msgs M secs S MB/s X mismatched_bytes N bad_lengths L
 *   stress_stream: OK            (or FAILED)
 *
 * Usage: stress_stream BYTES [WINDOW]
 *   BYTES   total bytes to move (suffix k, m, g allowed: 4g)
 *   WINDOW  messages in flight per direction (default 4)
 * Testing the checks (test/stress/run --self-test uses these):
 *   STRESS_CORRUPT_MSG=K   rank 0 flips one byte of its message K after filling it
 *   STRESS_LEAK_KB=N       each rank leaks N KiB (touched) at every sample
 *   STRESS_LEAK_FD=1       each rank opens /dev/null at every sample and keeps it
 */
#include <mpi.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MSG (4u << 20)

static int rank;

static void die(const char *what)
{
    fprintf(stderr, "stress_stream rank %d: %s\n", rank, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* size of message k from sender s: a power of two picked per message
 * (2^0 .. 2^22), plus a random part below it: every size class is hit */
static size_t msg_size(int s, uint64_t k)
{
    uint64_t h = mix64(((uint64_t) s << 56) ^ k ^ 0x5157u);
    unsigned e = (unsigned) (h % 23);
    size_t base = (size_t) 1 << e;
    size_t extra = e ? (size_t) ((h >> 8) % base) : 0;
    size_t n = base + extra;
    return n > MAX_MSG ? MAX_MSG : n;
}

/* the bytes of message k from sender s: 8 bytes per mix64 of
 * (sender, message, word offset) */
static void fill(unsigned char *buf, size_t n, int s, uint64_t k)
{
    uint64_t key = mix64(((uint64_t) s << 62) ^ (k * 0x100000001b3ull));
    size_t w = 0;
    for (; w + 8 <= n; w += 8) {
        uint64_t v = mix64(key ^ (w >> 3));
        memcpy(buf + w, &v, 8);
    }
    if (w < n) {
        uint64_t v = mix64(key ^ (w >> 3));
        memcpy(buf + w, &v, n - w);
    }
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

static int fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* not the descriptor of the opendir itself */
}

static uint64_t parse_bytes(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
    case '\0': break;
    default: return 0;
    }
    return v < 1 ? 0 : (uint64_t) v;
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        die("needs exactly 2 ranks");
    uint64_t total = argc > 1 ? parse_bytes(argv[1]) : 0;
    int window = argc > 2 ? atoi(argv[2]) : 4;
    if (total == 0 || window < 1 || window > 64)
        die("usage: stress_stream BYTES[k|m|g] [WINDOW 1..64]");
    long corrupt = getenv("STRESS_CORRUPT_MSG") ? atol(getenv("STRESS_CORRUPT_MSG")) : -1;
    long leak_kb = getenv("STRESS_LEAK_KB") ? atol(getenv("STRESS_LEAK_KB")) : 0;
    int leak_fd = getenv("STRESS_LEAK_FD") ? atoi(getenv("STRESS_LEAK_FD")) : 0;

    int peer = 1 - rank;
    unsigned char *sbuf[64], *rbuf[64], *expect = malloc(MAX_MSG);
    if (!expect)
        die("out of memory");
    for (int i = 0; i < window; i++) {
        sbuf[i] = malloc(MAX_MSG);
        rbuf[i] = malloc(MAX_MSG);
        if (!sbuf[i] || !rbuf[i])
            die("out of memory");
        memset(sbuf[i], 0, MAX_MSG);
        memset(rbuf[i], 0, MAX_MSG);
    }

    uint64_t done = 0, msgs = 0, mismatched = 0, bad_len = 0, next_sample = 1, reports = 0;
    uint64_t k = 0; /* message index, per direction */
    double t0 = MPI_Wtime();
    MPI_Request req[128];
    while (done < total) {
        int n = 0;
        size_t rs[64];
        for (int i = 0; i < window; i++) {
            rs[i] = msg_size(peer, k + i);
            MPI_Irecv(rbuf[i], MAX_MSG, MPI_BYTE, peer, (int) ((k + i) & 0x7fff), MPI_COMM_WORLD,
                      &req[n++]);
        }
        for (int i = 0; i < window; i++) {
            size_t ss = msg_size(rank, k + i);
            fill(sbuf[i], ss, rank, k + i);
            if (rank == 0 && corrupt >= 0 && (uint64_t) corrupt == k + i)
                sbuf[i][ss / 2] ^= 0x5a;
            MPI_Isend(sbuf[i], (int) ss, MPI_BYTE, peer, (int) ((k + i) & 0x7fff), MPI_COMM_WORLD,
                      &req[n++]);
        }
        MPI_Status st[128];
        if (MPI_Waitall(n, req, st) != MPI_SUCCESS)
            die("MPI_Waitall failed");
        for (int i = 0; i < window; i++) {
            int got = -1;
            MPI_Get_count(&st[i], MPI_BYTE, &got);
            if ((size_t) got != rs[i]) {
                if (bad_len++ < 5)
                    fprintf(stderr, "stress_stream rank %d: message %llu from rank %d: %d bytes, expected %zu\n",
                            rank, (unsigned long long) (k + i), peer, got, rs[i]);
                continue;
            }
            fill(expect, rs[i], peer, k + i);
            if (memcmp(expect, rbuf[i], rs[i]) != 0) {
                uint64_t wrong = 0;
                size_t first = 0;
                for (size_t b = 0; b < rs[i]; b++)
                    if (expect[b] != rbuf[i][b] && wrong++ == 0)
                        first = b;
                if (reports++ < 5)
                    fprintf(stderr, "stress_stream rank %d: message %llu from rank %d (%zu bytes): "
                            "%llu wrong bytes, first at offset %zu (0x%02x, expected 0x%02x)\n",
                            rank, (unsigned long long) (k + i), peer, rs[i],
                            (unsigned long long) wrong, first, rbuf[i][first], expect[first]);
                mismatched += wrong;
            }
            /* both directions of this index are counted alike on both ranks */
            done += rs[i] + msg_size(rank, k + i);
            msgs += 2;
        }
        k += window;
        if (done * 20 >= next_sample * total || done >= total) {
            if (leak_kb > 0) {
                char *p = malloc((size_t) leak_kb * 1024);
                if (p)
                    memset(p, 1, (size_t) leak_kb * 1024);
            }
            if (leak_fd)
                (void) open("/dev/null", O_RDONLY);
            unsigned pct = (unsigned) (done * 100 / total);
            if (pct > 100)
                pct = 100;
            printf("stress_stream rank %d: sample %u%% bytes %llu msgs %llu rss_kb %ld fds %d secs %.1f\n",
                   rank, pct, (unsigned long long) done, (unsigned long long) msgs, rss_kb(),
                   fd_count(), MPI_Wtime() - t0);
            fflush(stdout);
            while (done * 20 >= next_sample * total)
                next_sample++;
        }
    }
    double secs = MPI_Wtime() - t0;
    printf("stress_stream rank %d: final 100%% bytes %llu msgs %llu rss_kb %ld fds %d secs %.1f\n", rank,
           (unsigned long long) done, (unsigned long long) msgs, rss_kb(), fd_count(), secs);
    fflush(stdout);

    uint64_t mine[2] = { mismatched, bad_len }, all[2] = { 0, 0 };
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("stress_stream: summary bytes %llu msgs %llu secs %.1f MB/s %.1f mismatched_bytes %llu bad_lengths %llu\n",
               (unsigned long long) done, (unsigned long long) msgs, secs, done / secs / 1e6,
               (unsigned long long) all[0], (unsigned long long) all[1]);
        printf("stress_stream: %s\n", all[0] == 0 && all[1] == 0 ? "OK" : "FAILED");
        fflush(stdout);
    }
    for (int i = 0; i < window; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    free(expect);
    MPI_Finalize();
    return all[0] == 0 && all[1] == 0 ? 0 : 1;
}

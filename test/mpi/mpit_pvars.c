/* libllc's and the collectives' counters as MPI_T performance variables,
 * read by a plain MPI_T client as a profiling tool would:
 *   - at least 50 variables named llc_*, each an unsigned long long bound to
 *     no object (llc_coll_* ones: no object or a communicator), read-only,
 *     continuous, counter or level, with a description; MPI_T_pvar_get_index
 *     finds them by name;
 *   - after a ring of messages, llc_core_msgs_sent, llc_core_bytes_sent and
 *     llc_core_msgs_received have grown by at least what this rank sent and
 *     received (they count libllc's protocol messages too);
 *   - llc_coll_bcast_calls bound to a new communicator reads 0, then the
 *     number of MPI_Bcast calls made on it; bound to MPI_COMM_WORLD it does
 *     not move meanwhile;
 *   - a write is refused (read-only);
 *   - after MPI_Finalize the handles still read, and give at least the values
 *     read before it. */
#include "check.h"

#include <string.h>

#define ROUNDS 20
#define BYTES 1000

static int find(const char *name, int want_class)
{
    int index = -1;
    int rc = MPI_T_pvar_get_index(name, want_class, &index);
    CHECK(rc == MPI_SUCCESS && index >= 0, "MPI_T_pvar_get_index(%s) returned %d", name, rc);
    return index;
}

static unsigned long long read_one(MPI_T_pvar_session s, MPI_T_pvar_handle h, const char *what)
{
    unsigned long long v = 0;
    int rc = MPI_T_pvar_read(s, h, &v);
    CHECK(rc == MPI_SUCCESS, "MPI_T_pvar_read(%s) returned %d", what, rc);
    return v;
}

int main(int argc, char **argv)
{
    int rank, size, provided, num = 0, llc = 0;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread failed");

    CHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS, "MPI_T_pvar_get_num failed");
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int name_len = sizeof(name), desc_len = sizeof(desc);
        int verbosity, var_class, bind, readonly, continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum etype;
        CHECK(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &etype, desc, &desc_len,
                                  &bind, &readonly, &continuous, &atomic) == MPI_SUCCESS,
              "MPI_T_pvar_get_info(%d) failed", i);
        if (strncmp(name, "llc_", 4) != 0)
            continue;
        llc++;
        CHECK(type == MPI_UNSIGNED_LONG_LONG, "%s: not MPI_UNSIGNED_LONG_LONG", name);
        CHECK(bind == MPI_T_BIND_NO_OBJECT || (strncmp(name, "llc_coll_", 9) == 0 && bind == MPI_T_BIND_MPI_COMM),
              "%s: bound to object kind %d", name, bind);
        CHECK(readonly && continuous, "%s: readonly %d continuous %d", name, readonly, continuous);
        CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER || var_class == MPI_T_PVAR_CLASS_LEVEL, "%s: class %d", name,
              var_class);
        CHECK(desc_len > 10, "%s: no description", name);
        CHECK(find(name, var_class) == i, "%s: MPI_T_pvar_get_index gives another index", name);
    }
    CHECK(llc >= 50, "only %d MPI_T performance variables named llc_* (of %d)", llc, num);

    const char *names[3] = {"llc_core_msgs_sent", "llc_core_bytes_sent", "llc_core_msgs_received"};
    MPI_T_pvar_session session;
    MPI_T_pvar_handle h[3];
    unsigned long long before[3], after[3], final[3];
    CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS, "MPI_T_pvar_session_create failed");
    for (int k = 0; k < 3; k++) {
        int count = 0;
        CHECK(MPI_T_pvar_handle_alloc(session, find(names[k], MPI_T_PVAR_CLASS_COUNTER), NULL, &h[k], &count) ==
                  MPI_SUCCESS && count == 1,
              "MPI_T_pvar_handle_alloc(%s) failed or count %d", names[k], count);
    }
    /* a level: read like any other (peers, connections now) */
    int level_count = 0;
    MPI_T_pvar_handle level;
    CHECK(MPI_T_pvar_handle_alloc(session, find("llc_tcp_conns", MPI_T_PVAR_CLASS_LEVEL), NULL, &level,
                                  &level_count) == MPI_SUCCESS,
          "MPI_T_pvar_handle_alloc(llc_tcp_conns) failed");
    unsigned long long conns = read_one(session, level, "llc_tcp_conns");
    CHECK(conns <= (unsigned long long) size, "llc_tcp_conns %llu with %d ranks", conns, size);

    /* read before the barrier: no rank sends to us before we have read */
    for (int k = 0; k < 3; k++)
        before[k] = read_one(session, h[k], names[k]);
    MPI_Barrier(MPI_COMM_WORLD);

    static char out[BYTES], in[BYTES];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int r = 0; r < ROUNDS; r++) {
        memset(out, r, sizeof(out));
        CHECK_MPI(MPI_Sendrecv(out, BYTES, MPI_CHAR, right, r, in, BYTES, MPI_CHAR, left, r, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        CHECK(in[0] == (char) r && in[BYTES - 1] == (char) r, "round %d: wrong bytes", r);
    }
    for (int k = 0; k < 3; k++)
        after[k] = read_one(session, h[k], names[k]);
    if (size > 1) { /* MPICH copies a message to oneself without the netmod */
        CHECK(after[0] - before[0] >= ROUNDS, "llc_core_msgs_sent grew by %llu, sent %d", after[0] - before[0],
              ROUNDS);
        CHECK(after[1] - before[1] >= (unsigned long long) ROUNDS * BYTES, "llc_core_bytes_sent grew by %llu",
              after[1] - before[1]);
        CHECK(after[2] - before[2] >= ROUNDS, "llc_core_msgs_received grew by %llu, received %d",
              after[2] - before[2], ROUNDS);
    } else {
        for (int k = 0; k < 3; k++)
            CHECK(after[k] >= before[k], "%s went back", names[k]);
    }
    /* the broadcast's counter, per communicator */
    MPI_Comm dup;
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_T_pvar_handle bdup, bworld;
    int bcount = 0, bcast_index = find("llc_coll_bcast_calls", MPI_T_PVAR_CLASS_COUNTER);
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(MPI_T_pvar_handle_alloc(session, bcast_index, &dup, &bdup, &bcount) == MPI_SUCCESS && bcount == 1,
          "MPI_T_pvar_handle_alloc(llc_coll_bcast_calls, dup) failed");
    CHECK(MPI_T_pvar_handle_alloc(session, bcast_index, &world, &bworld, &bcount) == MPI_SUCCESS,
          "MPI_T_pvar_handle_alloc(llc_coll_bcast_calls, world) failed");
    unsigned long long world_before = read_one(session, bworld, "llc_coll_bcast_calls (world)");
    CHECK(read_one(session, bdup, "llc_coll_bcast_calls") == 0, "llc_coll_bcast_calls not 0 on a new communicator");
    for (int i = 0; i < 7; i++) {
        int word = rank == i % size ? 1000 + i : -1;
        CHECK_MPI(MPI_Bcast(&word, 1, MPI_INT, i % size, dup));
        CHECK(word == 1000 + i, "MPI_Bcast %d gave %d", i, word);
    }
    unsigned long long bcasts = read_one(session, bdup, "llc_coll_bcast_calls");
    if (size > 1) /* one process: MPICH's own path, nothing to tune */
        CHECK(bcasts == 7, "llc_coll_bcast_calls is %llu after 7 MPI_Bcast", bcasts);
    CHECK(read_one(session, bworld, "llc_coll_bcast_calls (world)") == world_before,
          "llc_coll_bcast_calls of MPI_COMM_WORLD moved with broadcasts on another communicator");
    MPI_T_pvar_handle_free(session, &bdup);
    MPI_T_pvar_handle_free(session, &bworld);
    CHECK_MPI(MPI_Comm_free(&dup));

    unsigned long long bogus = 1;
    CHECK(MPI_T_pvar_write(session, h[0], &bogus) == MPI_T_ERR_PVAR_NO_WRITE, "a write was not refused");

    CHECK_MPI(MPI_Finalize());
    for (int k = 0; k < 3; k++) {
        final[k] = read_one(session, h[k], names[k]);
        CHECK(final[k] >= after[k], "%s after MPI_Finalize: %llu < %llu", names[k], final[k], after[k]);
    }
    for (int k = 0; k < 3; k++)
        MPI_T_pvar_handle_free(session, &h[k]);
    MPI_T_pvar_handle_free(session, &level);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    if (rank == 0)
        printf("mpit_pvars: %d ranks, %d llc_* variables of %d, msgs_sent +%llu, bytes_sent +%llu OK\n", size, llc,
               num, after[0] - before[0], after[1] - before[1]);
    return 0;
}

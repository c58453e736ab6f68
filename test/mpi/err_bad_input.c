/* Bad input gets a clear error, not a crash or a hang: a send to a rank
 * that does not exist, and a message longer than the receive buffer
 * (MPI_ERR_TRUNCATE).  Errors are returned (MPI_ERRORS_RETURN). */
#include "check.h"
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, err, cls;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int v = 42;
    err = MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, msg, &len);
    CHECK(cls == MPI_ERR_RANK, "send to rank %d gave class %d (%s)", size, cls, msg);
    if (rank == 0)
        printf("send to invalid rank %d: %s\n", size, msg);

    err = MPI_Send(&v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_RANK, "send to rank -7 gave class %d", cls);

    if (size > 1) {
        if (rank == 1) {
            int big[100];
            for (int i = 0; i < 100; i++)
                big[i] = i;
            CHECK_MPI(MPI_Send(big, 100, MPI_INT, 0, 5, MPI_COMM_WORLD));
        } else if (rank == 0) {
            int small[10];
            MPI_Status st;
            err = MPI_Recv(small, 10, MPI_INT, 1, 5, MPI_COMM_WORLD, &st);
            MPI_Error_class(err, &cls);
            MPI_Error_string(err, msg, &len);
            CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive gave class %d (%s)", cls, msg);
            printf("truncated receive: %s\n", msg);
        }
    }
    /* the library still works afterwards */
    int sum = 0, one = 1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size, "allreduce after errors = %d", sum);
    if (rank == 0)
        printf("err_bad_input: OK\n");
    MPI_Finalize();
    return 0;
}

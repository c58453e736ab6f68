/* api1_client.h - see api1_client.c. */
#ifndef API1_CLIENT_H
#define API1_CLIENT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* llc_init as a version-1 client calls it, in a job of one process: its
 * return code, the api_version it passed, and llc_last_error(NULL). */
int api1_client_init(int *api_version_used, char *message, size_t message_len);

#ifdef __cplusplus
}
#endif

#endif

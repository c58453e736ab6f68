/*
 * api1_client.c - a libllc client compiled against the version-1 header
 * (llc_api1.h), linked into the unit tests with today's libllc: what an
 * application built before LLC_API_VERSION 2 sees (api1_test.cpp).
 */
#include "llc_api1.h"

#include <stdio.h>
#include <string.h>

#include "api1_client.h"

static int boot_put(void *arg, const char *key, const void *value, size_t len)
{
    (void) arg, (void) key, (void) value, (void) len;
    return 0;
}

static int boot_get(void *arg, int src_rank, const char *key, void *value, size_t *len)
{
    (void) arg, (void) src_rank, (void) key, (void) value, (void) len;
    return 1; /* a job of one process looks nothing up */
}

static int boot_fence(void *arg)
{
    (void) arg;
    return 0;
}

int api1_client_init(int *api_version_used, char *message, size_t message_len)
{
    static const int node_of_rank[1] = { 0 };
    llc_init_params_t p;
    llc_context_t *ctx = NULL;
    int rc;

    memset(&p, 0, sizeof(p));
    p.api_version = LLC_API_VERSION; /* 1: the header this file was built against */
    p.rank = 0;
    p.size = 1;
    p.node_of_rank = node_of_rank;
    p.job_id = "api1-client";
    p.boot.put = boot_put;
    p.boot.get = boot_get;
    p.boot.fence = boot_fence;
    *api_version_used = p.api_version;
    rc = llc_init(&p, &ctx);
    snprintf(message, message_len, "%s", llc_last_error(NULL));
    if (rc == LLC_OK)
        llc_finalize(ctx);
    return rc;
}

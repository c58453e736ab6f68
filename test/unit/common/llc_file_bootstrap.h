/*
 * llc_file_bootstrap.h - a bootstrap for libllc programs launched without
 * a process manager (llc_pair, bench/hybrid/burst): a key-value store of
 * files in a directory every process sees (network namespaces share the
 * file system) and a barrier of marker files.  Header-only, C.
 *
 *   struct file_boot fb = {dir, rank, size, 0};
 *   llc_context_t *ctx = file_boot_init(&fb, node_of_rank, "job-id");
 *   (or file_boot_attach(&fb, &params) to fill params.boot only)
 */
#ifndef LLC_FILE_BOOTSTRAP_H
#define LLC_FILE_BOOTSTRAP_H

#include "llc.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct file_boot {
    const char *dir; /* shared directory */
    int rank;
    int size;
    int fences; /* barriers so far */
};

static double file_boot_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int file_boot_put(void *arg, const char *key, const void *value, size_t len)
{
    const struct file_boot *fb = (const struct file_boot *)arg;
    char path[4096], tmp[4200];
    snprintf(path, sizeof(path), "%s/kv-%d-%s", fb->dir, fb->rank, key);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return 1;
    int bad = fwrite(value, 1, len, f) != len;
    bad |= fclose(f) != 0;
    return bad || rename(tmp, path) != 0;
}

static int file_boot_get(void *arg, int src, const char *key, void *value, size_t *len)
{
    const struct file_boot *fb = (const struct file_boot *)arg;
    char path[4096];
    snprintf(path, sizeof(path), "%s/kv-%d-%s", fb->dir, src, key);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    size_t n = fread(value, 1, *len, f);
    fclose(f);
    *len = n;
    return 0;
}

/* Every rank creates fence-N-RANK, then waits (60 s at most) for all the others'. */
static int file_boot_fence(void *arg)
{
    struct file_boot *fb = (struct file_boot *)arg;
    char path[4096];
    int n = fb->fences++;
    snprintf(path, sizeof(path), "%s/fence-%d-%d", fb->dir, n, fb->rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd < 0)
        return 1;
    close(fd);
    double end = file_boot_now_s() + 60;
    for (int r = 0; r < fb->size; r++) {
        struct stat st;
        snprintf(path, sizeof(path), "%s/fence-%d-%d", fb->dir, n, r);
        while (stat(path, &st) != 0) {
            if (file_boot_now_s() > end)
                return 1;
            usleep(1000);
        }
    }
    return 0;
}

static void file_boot_attach(struct file_boot *fb, llc_init_params_t *p)
{
    p->boot.put = file_boot_put;
    p->boot.get = file_boot_get;
    p->boot.fence = file_boot_fence;
    p->boot.arg = fb;
}

/* llc_init for fb's rank and size with this bootstrap; node_of_rank must
 * outlive the call.  Prints why on failure and returns NULL. */
static llc_context_t *file_boot_init(struct file_boot *fb, const int *node_of_rank, const char *job_id)
{
    llc_init_params_t p;
    memset(&p, 0, sizeof(p));
    p.api_version = LLC_API_VERSION;
    p.rank = fb->rank;
    p.size = fb->size;
    p.node_of_rank = node_of_rank;
    p.job_id = job_id;
    file_boot_attach(fb, &p);
    llc_context_t *ctx = NULL;
    if (llc_init(&p, &ctx) != LLC_OK) {
        fprintf(stderr, "%s: rank %d: llc_init: %s\n", job_id, fb->rank, llc_last_error(NULL));
        return NULL;
    }
    return ctx;
}

#endif

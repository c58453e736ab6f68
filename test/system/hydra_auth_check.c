/* hydra_auth_check - the SHA-256 and HMAC-SHA256 of the hydra patches
 * (maint/patches/hydra/0002-*, src/pm/hydra/include/hydra_auth.h of the
 * grafted tree) against OpenSSL's, on random keys and messages of every
 * length from 0 to 300 bytes split into pieces at random.  mpiexec and its
 * proxies use the same code, so a wrong hash would not show in a launch;
 * this shows it.  Prints "ok: ..." or "FAIL: ..." (test/run-all section 1).
 *
 *   cc -I MPICH/src/pm/hydra/include hydra_auth_check.c -lcrypto */
#include "hydra_auth.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    unsigned char key[80], data[300], ours[32], theirs[32], back[32];
    char hex[65];
    unsigned int len;
    int bad = 0, trials = 0;

    srand(12345);
    for (size_t n = 0; n <= sizeof(data); n++) {
        for (int rep = 0; rep < 4; rep++, trials++) {
            size_t keylen = (size_t) (rand() % 65), cut = n ? (size_t) rand() % (n + 1) : 0;
            if (HYD_auth_random(key, sizeof(key)) || (n && HYD_auth_random(data, n))) {
                printf("FAIL: hydra_auth: no random bytes\n");
                return 1;
            }
            struct HYD_auth_sha256 c;
            HYD_auth_sha256_init(&c);
            HYD_auth_sha256_update(&c, data, cut);
            HYD_auth_sha256_update(&c, data + cut, n - cut);
            HYD_auth_sha256_final(&c, ours);
            SHA256(data, n, theirs);
            if (memcmp(ours, theirs, 32) != 0 && bad++ < 5)
                printf("FAIL: hydra_auth: SHA-256 of %zu bytes differs from OpenSSL's\n", n);

            const void *piece[2] = { data, data + cut };
            size_t plen[2] = { cut, n - cut };
            HYD_auth_hmac(key, keylen, 2, piece, plen, ours);
            HMAC(EVP_sha256(), key, (int) keylen, data, n, theirs, &len);
            if (memcmp(ours, theirs, 32) != 0 && bad++ < 5)
                printf("FAIL: hydra_auth: HMAC-SHA256 (key %zu, message %zu bytes) differs from OpenSSL's\n",
                       keylen, n);
        }
    }
    HYD_auth_to_hex(key, 32, hex);
    if (HYD_auth_from_hex(hex, back, 32) != 0 || memcmp(back, key, 32) != 0 ||
        HYD_auth_from_hex("zz", back, 1) == 0) {
        printf("FAIL: hydra_auth: hex round trip\n");
        bad++;
    }
    if (bad)
        return 1;
    printf("ok: hydra_auth: SHA-256 and HMAC-SHA256 equal OpenSSL's (%d random messages of 0..300 bytes)\n",
           trials);
    return 0;
}

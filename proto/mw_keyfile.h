/* mw_keyfile.h: CURVE key files (docs/security.md), shared by every component that uses them:
 * the collector, libmpiwatch.so, mpiwatch-steer, mpiwatch-feed, the viewer, mpiwatch-keygen.
 *
 * A key file is a small INI file (read with inih) with one [curve] section:
 *
 *   # comment lines
 *   [curve]
 *   public-key = <40 characters of Z85>
 *   secret-key = <40 characters of Z85>      (only in NAME.key)
 *
 * NAME.key holds a key pair and must be a regular file owned by this user (or root) that
 * neither group nor others can access (mode & 077 == 0); NAME.pub holds the public key alone.
 * A list of authorized clients is either a directory of *.pub files or one file of [curve]
 * sections (the .pub files concatenated); the directory and every key file must be owned by
 * this user (or root) and not writable by group or others. Every
 * function here returns 0, or -1 with a message naming the file in err.
 */
#ifndef MW_KEYFILE_H
#define MW_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#define MW_CURVE_KEY_BYTES 32
#define MW_CURVE_Z85_CHARS 40

/* Environment variables naming the client's key files (libmpiwatch.so, tools, viewer). */
#define MW_ENV_CURVE_SERVER "MPIWATCH_CURVE_SERVER" /* the collector's .pub file */
#define MW_ENV_CURVE_KEY "MPIWATCH_CURVE_KEY"       /* this client's .key file */

typedef struct {
    uint8_t public_key[MW_CURVE_KEY_BYTES];
    uint8_t secret_key[MW_CURVE_KEY_BYTES];
} mw_keypair_t;

/* What a client needs: the server's public key and its own key pair. */
typedef struct {
    uint8_t server_key[MW_CURVE_KEY_BYTES];
    mw_keypair_t own;
} mw_curve_client_t;

/* Parses key-file text (`name` only names it in messages). With want_secret, exactly one
 * public and one matching secret key; without, exactly one public key and no secret key.
 * Used by the loaders below; exposed for the unit tests. */
int mw_keyfile_parse(const char *text, const char *name, int want_secret, mw_keypair_t *out,
                     char *err, size_t errlen);

/* Reads NAME.key: a regular file of mode & 077 == 0 holding a matching key pair. */
int mw_keyfile_read_pair(const char *path, mw_keypair_t *out, char *err, size_t errlen);

/* Reads a .pub file: one public key, no secret key (a .key file given by mistake is refused,
 * so that a secret key is never handed around as a public one). */
int mw_keyfile_read_public(const char *path, uint8_t key[MW_CURVE_KEY_BYTES], char *err,
                           size_t errlen);

/* Reads the authorized client keys from a directory of *.pub files or from one file of
 * [curve] sections, each with one public-key. Calls add(user, key, source) for each key
 * (source: "FILE" or "FILE:LINE"); add returns 0, or -1 to stop with its own message in err.
 * At least one key is required. */
int mw_keyfile_read_clients(const char *path,
                            int (*add)(void *user, const uint8_t key[MW_CURVE_KEY_BYTES],
                                       const char *source, char *err, size_t errlen),
                            void *user, char *err, size_t errlen);

/* Writes NAME.key (mode 0600, created with O_EXCL) and NAME.pub (mode 0644) from a fresh
 * zmq_curve_keypair(). Without force an existing file is an error and nothing is written;
 * with force both are replaced (written aside, then renamed). The public key in Z85 goes to
 * z85_public (41 bytes) when it is not NULL. */
int mw_keyfile_generate(const char *name, int force, char *z85_public, char *err, size_t errlen);

/* Loads a client's keys: the server's .pub file and the client's own .key file. Either path
 * NULL or empty: the matching MPIWATCH_CURVE_* variable. Returns 1 when keys were loaded, 0
 * when neither path nor variable is set (CURVE off), -1 on an error (only one of the two set
 * is an error too). */
int mw_curve_client_load(const char *server_pub, const char *own_key, mw_curve_client_t *out,
                         char *err, size_t errlen);

/* Makes `sock` a CURVE client with those keys (before zmq_connect). */
int mw_curve_client_apply(void *sock, const mw_curve_client_t *keys, char *err, size_t errlen);

/* Overwrites secret material so that it does not linger in memory. */
void mw_keyfile_wipe(void *p, size_t len);

#endif

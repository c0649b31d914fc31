/* keygen.c: mpiwatch-keygen (`mpiwatch keygen`), makes a CURVE key pair for mpiwatch.
 *
 * DESIGN: `mpiwatch-keygen [--force] NAME` writes NAME.key (public and secret key, mode 0600,
 * created exclusively) and NAME.pub (the public key, mode 0644) through proto/mw_keyfile.c, the
 * module that also reads them, so the format has one definition. It refuses to overwrite either
 * file unless --force. It prints the two file names and the public key. Exit status 0, 1 when
 * the files could not be written (or exist), 2 for a usage error. docs/security.md.
 */
#include "mw_keyfile.h"
#include "mw_version.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "Usage: mpiwatch keygen [--force] NAME\n"
                 "Write a CURVE key pair for mpiwatch: NAME.key (public and secret key, mode\n"
                 "0600: keep it private) and NAME.pub (the public key, mode 0644: give it to\n"
                 "the peers). Existing files are not replaced unless --force.\n");
    fputs("\n  -h, --help         print this help and exit\n"
          "      --version      print the version and exit\n",
          out);
}

int main(int argc, char **argv)
{
    const char *name = NULL;
    int force = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("mpiwatch-keygen %s\n", MW_VERSION_FULL);
            return 0;
        } else if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--force") == 0) {
            force = 1;
        } else if (strcmp(argv[i], "--") == 0 && i + 2 == argc && !name) {
            name = argv[++i];
        } else if (argv[i][0] == '-' || name) {
            fprintf(stderr, "mpiwatch-keygen: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            name = argv[i];
        }
    }
    if (!name || !name[0]) {
        usage(stderr);
        return 2;
    }
    char err[512], pub[MW_CURVE_Z85_CHARS + 1];
    if (mw_keyfile_generate(name, force, pub, err, sizeof err) != 0) {
        fprintf(stderr, "mpiwatch-keygen: %s\n", err);
        return 1;
    }
    printf("wrote %s.key (secret, mode 0600) and %s.pub\npublic key %s\n", name, name, pub);
    return fflush(stdout) == 0 ? 0 : 1;
}

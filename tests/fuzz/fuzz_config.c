/* fuzz_config.c: a libFuzzer target for the collector's configuration file parser
 * (collector/options.c, --config FILE).
 *
 * One input is a whole INI file, loaded with mw_collector_options_load() over the defaults, as the
 * collector does after its command line: inih (the system's libinih) splits the lines, every
 * key of [collector] goes through mw_collector_options_set(), the setter of the command-line flags.
 * A file that loads is then checked as a whole (mw_collector_options_check) and against the promise
 * of
 * --print-config (docs/collector.md): what mw_collector_options_print() writes,
 * mw_collector_options_load() reads back to the same settings. So the effective settings are
 * printed, loaded into fresh options, printed again, and the two texts must be equal; a difference
 * aborts (a finding), as does a leak or any sanitizer report.
 *
 * DESIGN: the loader takes a path, so the input is a memfd (memfile.h); the printed text goes
 * through open_memstream and a second memfd. Seeds: tests/fuzz/corpus/config/.
 */
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "memfile.h"
#include "fuzz.h"

/* The settings of o as --print-config prints them (malloc'd), or NULL: also when it refuses
 * settings it cannot write as INI (docs/collector.md: it prints nothing and exits 2 with the
 * reason), which keeps the promise and is no finding. */
static char *print(const mw_collector_options_t *o, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f)
        return NULL;
    int rc = mw_collector_options_print(f, o);
    if (fclose(f) != 0 || rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    mw__log_level = MW_LOG_ERROR;
    int fd = memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    mw_collector_options_t o;
    mw_collector_options_defaults(&o);
    if (mw_collector_options_load(&o, path, err, sizeof err) == 0) {
        (void)mw_collector_options_check(&o, err, sizeof err);
        size_t n1 = 0, n2 = 0;
        char *p1 = print(&o, &n1);
        char path2[64];
        int fd2 = p1 ? memfile((const uint8_t *)p1, n1, path2, sizeof path2) : -1;
        if (fd2 >= 0) {
            mw_collector_options_t back;
            mw_collector_options_defaults(&back);
            if (mw_collector_options_load(&back, path2, err, sizeof err) != 0) {
                fprintf(stderr, "fuzz_config: --print-config output does not load: %s\n%s", err,
                        p1);
                abort();
            }
            char *p2 = print(&back, &n2);
            if (!p2 || n1 != n2 || memcmp(p1, p2, n1) != 0) {
                fprintf(stderr,
                        "fuzz_config: --print-config does not read back the same:\n%s\n"
                        "---- read back and printed:\n%s",
                        p1, p2 ? p2 : "(refused)");
                abort();
            }
            free(p2);
            mw_collector_options_free(&back);
            close(fd2);
        }
        free(p1);
    }
    mw_collector_options_free(&o);
    close(fd);
    return 0;
}

/* fuzz_rules.c: a libFuzzer target for the collector's rules file parser (collector/rules.c,
 * --rules FILE, docs/steering.md).
 *
 * One input is a whole rules file. It is loaded with mw__rules_load(), the function the
 * collector calls at start-up and on SIGHUP: inih splits the lines (the system's libinih,
 * not instrumented), rules.c parses every key (metric, op, threshold, scope, ranks lists,
 * persistence, rate limits, actions with their argv and placeholders) and checks each rule as
 * a whole. A file that loads is asked for its rule count and each rule's firing count (0), then
 * freed: a leak, an out-of-bounds access or undefined behaviour anywhere on the way is a
 * finding. Nothing is run: rules only act when windows are evaluated, which this target does
 * not do (the actions start programs).
 *
 * DESIGN: the parser takes a path, so the input is a memfd (memfile.h). Seeds are the rules
 * files of the docs and tests (tests/fuzz/corpus/rules/), one per kind of rule and action.
 */
#include <stdlib.h>

#include "collector.h"
#include "memfile.h"
#include "rules.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    mw__log_level = MW_LOG_ERROR;
    int fd = memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    mw_rules_t *rs = mw__rules_load(path, err, sizeof err);
    if (rs) {
        (void)mw__rules_count(rs);
        (void)mw__rules_fired(rs, "r");
        (void)mw__rules_running(rs);
        mw__rules_free(rs);
    }
    close(fd);
    return 0;
}

/* fuzz.h: the entry points libFuzzer calls in a target (declared here so that every target
 * defines them against a prototype). */
#ifndef MW_FUZZ_H
#define MW_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

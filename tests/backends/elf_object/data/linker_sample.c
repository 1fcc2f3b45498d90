/* Test object for the in-process linker (tests/backends/elf/elf_object_test.cc).
 * Rebuild (clang 14, x86_64):
 *   clang -O2 -fPIC -fcommon -fno-asynchronous-unwind-tables -c linker_sample.c -o linker_sample.o
 * It exercises .init_array/.fini_array, a COMMON symbol, a GOT load of a
 * global, a PLT call to an allow-listed libm function and local PC32 data. */
#include <math.h>

int sample_common_counter; /* COMMON with -fcommon */
int sample_initialized = 0;
static const float kTable[4] = {0.5f, 1.5f, 2.5f, 3.5f};
extern int sample_fini_runs; /* defined by the loading test through the import table */

__attribute__((constructor)) static void sample_init(void) {
  sample_initialized = 42;
  sample_common_counter += 7;
}

__attribute__((destructor)) static void sample_fini(void) { sample_fini_runs += 1; }

float sample_exp_of_table(int i) { return expf(kTable[i & 3]); }

int sample_read_state(void) { return sample_initialized * 1000 + sample_common_counter; }

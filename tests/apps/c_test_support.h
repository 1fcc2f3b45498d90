/* What the C test programs share: checks that end the program naming the
 * failed call or condition, and a reader of float32 .npy files. Header-only:
 * each program is one C file. */
#ifndef GRAPHRT_TESTS_APPS_C_TEST_SUPPORT_H_
#define GRAPHRT_TESTS_APPS_C_TEST_SUPPORT_H_

#include <tvm/runtime/c_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_CALL(call)                                                                              \
  do {                                                                                                \
    if ((call) != 0) {                                                                                \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, TVMGetLastError());        \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)
#define CHECK_TRUE(cond)                                                                              \
  do {                                                                                                \
    if (!(cond)) {                                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                        \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)
/* A call that fails with error kind `kind`, its message naming `needle`. */
#define CHECK_REFUSED(kind, needle, call)                                                            \
  do {                                                                                               \
    int rc_ = (call);                                                                                \
    if (rc_ != -(kind) || strstr(TVMGetLastError(), (needle)) == NULL) {                             \
      fprintf(stderr, "%s:%d: %s returned %d, not -%d naming '%s' (%s)\n", __FILE__, __LINE__, #call, \
              rc_, kind, needle, rc_ ? TVMGetLastError() : "");                                      \
      exit(1);                                                                                       \
    }                                                                                                \
  } while (0)
/* A float32 .npy file (format 1.0, C order): its shape and values. */
typedef struct {
  int ndim;
  int64_t shape[8];
  float* values;
  size_t count;
} Npy;

static Npy read_npy(const char* dir, const char* name) {
  char path[4096], *header, *at;
  unsigned char prefix[10];
  size_t header_len;
  Npy a;
  FILE* f;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  f = fopen(path, "rb");
  memset(&a, 0, sizeof(a));
  CHECK_TRUE(f != NULL);
  CHECK_TRUE(fread(prefix, 1, 10, f) == 10);
  header_len = (size_t)prefix[8] | ((size_t)prefix[9] << 8);
  header = (char*)calloc(header_len + 1, 1);
  CHECK_TRUE(header && fread(header, 1, header_len, f) == header_len);
  CHECK_TRUE(strstr(header, "'<f4'") != NULL);
  at = strstr(header, "'shape': (");
  CHECK_TRUE(at != NULL);
  at += strlen("'shape': (");
  a.count = 1;
  while (*at != ')') {
    char* end;
    long long d = strtoll(at, &end, 10);
    if (end == at) break;
    CHECK_TRUE(a.ndim < 8);
    a.shape[a.ndim++] = d;
    a.count *= (size_t)d;
    at = end;
    while (*at == ',' || *at == ' ') ++at;
  }
  free(header);
  /* 64-byte aligned: what a graph executor's zero-copy input needs. */
  a.values = (float*)aligned_alloc(64, (a.count * sizeof(float) + 64) / 64 * 64);
  CHECK_TRUE(a.values && fread(a.values, sizeof(float), a.count, f) == a.count);
  fclose(f);
  return a;
}

#endif

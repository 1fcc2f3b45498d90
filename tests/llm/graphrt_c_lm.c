/* The language-model C API from C: graphrt_c_lm FOLDER generate|chat|tokenize TEXT MAX_TOKENS [DEVICE]
 * (DEVICE cpu, the default, or opencl: the folder's <name>-opencl.so on opencl:0) prints the greedy completion (chat: TEXT is the messages' JSON), or the ids as a JSON array,
 * on stdout. Streamed pieces must join to the returned text (else exit 1); errors go to stderr
 * with exit 1. tests/apps/test_language_model_cli.py compares the output with case.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphrt/c_api.h"

struct joined {
  char* text;
  size_t size;
  int pieces;
};

static int collect(const char* piece, size_t size, void* user_data) {
  struct joined* j = (struct joined*)user_data;
  char* grown = (char*)realloc(j->text, j->size + size + 1);
  if (!grown) return 1;
  j->text = grown;
  memcpy(j->text + j->size, piece, size);
  j->size += size;
  j->text[j->size] = '\0';
  ++j->pieces;
  return 0;
}

static int fail(const char* what) {
  fprintf(stderr, "graphrt_c_lm: %s: %s (kind %d)\n", what, TVMGetLastError(), graphrt_last_error_kind());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: graphrt_c_lm FOLDER generate|chat|tokenize TEXT MAX_TOKENS [cpu|opencl]\n");
    return 2;
  }
  const int device_type = argc == 6 && strcmp(argv[5], "opencl") == 0 ? 4 /* kDLOpenCL */ : 1 /* kDLCPU */;
  graphrt_lm_t lm = NULL;
  if (graphrt_lm_open(argv[1], NULL, device_type, 0, &lm) != 0) return fail("open");
  int status = 0;
  if (strcmp(argv[2], "tokenize") == 0) {
    const int32_t* ids = NULL;
    size_t count = 0;
    if (graphrt_lm_tokenize(lm, argv[3], &ids, &count) != 0) {
      status = fail("tokenize");
    } else {
      const char* back = NULL;
      printf("[");
      for (size_t i = 0; i < count; ++i) printf(i ? ", %d" : "%d", ids[i]);
      printf("]\n");
      if (graphrt_lm_detokenize(lm, ids, count, &back) != 0) status = fail("detokenize");
      else if (strcmp(back, argv[3]) != 0) status = (fprintf(stderr, "decode differs: %s\n", back), 1);
    }
  } else {
    char config[128];
    snprintf(config, sizeof config, "{\"temperature\": 0, \"max_tokens\": %d}", atoi(argv[4]));
    struct joined streamed = {NULL, 0, 0};
    const char* text = NULL;
    const char* result = NULL;
    int rc = strcmp(argv[2], "chat") == 0
                 ? graphrt_lm_chat(lm, argv[3], config, collect, &streamed, &text, &result)
                 : graphrt_lm_generate(lm, argv[3], config, collect, &streamed, &text, &result);
    if (rc != 0) {
      status = fail(argv[2]);
    } else if (strcmp(streamed.text ? streamed.text : "", text) != 0 || strstr(result, "\"finish_reason\"") == NULL) {
      fprintf(stderr, "graphrt_c_lm: the %d streamed pieces differ from the text\n", streamed.pieces);
      status = 1;
    } else {
      fputs(text, stdout);
    }
    free(streamed.text);
    /* A field out of range fails naming it. */
    if (status == 0 && graphrt_lm_generate(lm, "x", "{\"top_p\": 7}", NULL, NULL, &text, NULL) == 0) {
      fprintf(stderr, "graphrt_c_lm: top_p 7 was accepted\n");
      status = 1;
    } else if (status == 0 && strstr(TVMGetLastError(), "top_p") == NULL) {
      fprintf(stderr, "graphrt_c_lm: the error does not name top_p: %s\n", TVMGetLastError());
      status = 1;
    }
  }
  graphrt_lm_free(lm);
  return status;
}

/* A stand-in for libcuda.so.1 that runs on the host: memory is malloc'ed,
 * copies are memcpy, kernels are only recorded. It keeps the state a real
 * driver keeps where graphrt can get it wrong (the current context per
 * thread, the context each module and stream belongs to, streams' blocking
 * flag and capture state, destroyed streams) and fails the way the real
 * driver does: no or another context current, a destroyed stream, legacy-
 * stream use while a blocking stream captures (which also invalidates that
 * capture), synchronising a capturing stream. Every call is appended to
 * fake_cuda_state.log so the tests can check the order of calls.
 *
 * Captures build graphs of nodes (kernels with their parameter bytes,
 * memsets, copies) that cuGraphLaunch replays in order, running the kernels
 * a test defined (fake_cuda_define_kernel) on the host; kernel nodes can be
 * updated in an executable graph (cuGraphExecKernelNodeSetParams) as long as
 * the graph it came from is alive.
 *
 * Built twice: without cuGetProcAddress (graphrt then resolves every entry
 * point through dlsym) and, with FAKE_CUDA_EXPORT_GETPROC, with it. */
#define _GNU_SOURCE
#include "fake_libcuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

struct fake_cuda_state fake_cuda_state;

struct fake_kernel {
  char name[96];
  int nparams;
  int param_sizes[FAKE_CUDA_MAX_PARAMS];
  fake_cuda_kernel_fn run;
};
#define FAKE_MAX_KERNELS 32
static struct fake_kernel kernels[FAKE_MAX_KERNELS];
static int kernel_count;

struct fake_module;
struct fake_function {
  struct fake_module* module;
  const struct fake_kernel* kernel; /* NULL: not defined by the test */
  struct fake_function* next;       /* every function handed out, kept reachable */
};
static struct fake_function* all_functions;

enum { NODE_KERNEL = 1, NODE_MEMSET, NODE_COPY };
struct fake_graph;
struct fake_node {
  int kind, index;
  struct fake_graph* graph;
  struct fake_function* fn;
  unsigned grid[3], block[3], smem;
  int nparams;
  int param_sizes[FAKE_CUDA_MAX_PARAMS];
  unsigned char params[FAKE_CUDA_MAX_PARAMS][8];
  void* dst;
  const void* src;
  unsigned value;
  size_t n;
};
struct fake_graph {
  struct fake_node** nodes;
  int count, cap, destroyed;
  struct fake_graph* next; /* every graph, kept: a node of a destroyed graph must be seen as one */
};
static struct fake_graph* all_graphs;

struct fake_stream {
  int id, ctx, blocking, capturing, invalidated, destroyed;
  struct fake_graph* capture; /* the graph being captured */
  struct fake_node* last;     /* its last node: what the next captured work depends on */
};
struct fake_module {
  int ctx, unloaded;
  struct fake_module* next;  /* every module ever loaded, kept (see module_unload) */
};
static struct fake_module* all_modules;
struct fake_event {
  int id, ctx;
};
struct fake_exec {
  int ctx, destroyed;
  struct fake_graph* graph;
  int count;
  struct fake_node* nodes; /* copies: updating the exec leaves the graph as captured */
};

#define FAKE_MAX_STREAMS 1024
static struct fake_stream* streams[FAKE_MAX_STREAMS];
static int stream_count, event_count;
static char contexts[FAKE_CUDA_MAX_DEVICES];
static __thread int current_ctx; /* 0: none, else device + 1 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void note(const char* fmt, ...) {
  struct fake_cuda_state* s = &fake_cuda_state;
  if (s->log_len + 64 >= sizeof(s->log)) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(s->log + s->log_len, sizeof(s->log) - s->log_len, fmt, ap);
  va_end(ap);
  if (n > 0) s->log_len += (size_t)n;
  s->log[s->log_len++] = ' ';
  s->log[s->log_len] = '\0';
}

/* CU_STREAM_LEGACY (0x1) is the legacy stream too. */
static int is_legacy(void* s) { return s == NULL || (uintptr_t)s == 1; }
static int stream_id(void* s) { return is_legacy(s) ? 0 : ((struct fake_stream*)s)->id; }

static CUresult need_context(void) {
  if (current_ctx) return 0;
  fake_cuda_state.wrong_context++;
  return FAKE_CUDA_ERROR_INVALID_CONTEXT;
}

/* The legacy stream waits for every blocking stream of its context; that
 * wait cannot be captured, so it fails and invalidates the capture. */
static CUresult legacy_use(void) {
  CUresult r = 0;
  for (int i = 0; i < stream_count; ++i) {
    struct fake_stream* st = streams[i];
    if (st->destroyed || !st->blocking || !st->capturing || st->ctx != current_ctx) continue;
    st->invalidated = 1;
    fake_cuda_state.implicit_sync++;
    r = FAKE_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  }
  return r;
}

/* Checks a stream argument; *captured is set when the work is recorded into
 * a capture instead of running. */
static CUresult use_stream(void* s, int* captured) {
  *captured = 0;
  CUresult r = need_context();
  if (r) return r;
  if (is_legacy(s)) return legacy_use();
  struct fake_stream* st = s;
  if (st->destroyed) {
    fake_cuda_state.destroyed_stream++;
    return FAKE_CUDA_ERROR_INVALID_HANDLE;
  }
  if (st->ctx != current_ctx) {
    fake_cuda_state.wrong_context++;
    return FAKE_CUDA_ERROR_INVALID_CONTEXT;
  }
  if (st->capturing && st->invalidated) return FAKE_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  *captured = st->capturing;
  return 0;
}

static struct fake_node* capture_node(void* s, int kind) {
  struct fake_stream* st = s;
  struct fake_graph* g = st->capture;
  if (g->count == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 16;
    g->nodes = realloc(g->nodes, sizeof(*g->nodes) * (size_t)g->cap);
  }
  struct fake_node* node = calloc(1, sizeof(*node));
  node->kind = kind;
  node->index = g->count;
  node->graph = g;
  g->nodes[g->count++] = node;
  st->last = node;
  return node;
}

#define LOCKED(expr)               \
  do {                             \
    pthread_mutex_lock(&lock);     \
    CUresult locked_r_ = (expr);   \
    pthread_mutex_unlock(&lock);   \
    return locked_r_;              \
  } while (0)

CUresult cuGetErrorName(CUresult r, const char** s) { (void)r; *s = "FAKE_ERROR"; return 0; }
CUresult cuGetErrorString(CUresult r, const char** s) { (void)r; *s = "fake error"; return 0; }
CUresult cuDriverGetVersion(int* v) { *v = 12040; return 0; }
CUresult cuInit(unsigned f) {
  (void)f;
  const char* env = getenv("FAKE_CUDA_DEVICES");
  int n = env ? atoi(env) : 1;
  fake_cuda_state.device_count = n < 1 ? 1 : n > FAKE_CUDA_MAX_DEVICES ? FAKE_CUDA_MAX_DEVICES : n;
  return 0;
}
CUresult cuDeviceGetCount(int* n) { *n = fake_cuda_state.device_count; return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return i >= 0 && i < fake_cuda_state.device_count ? 0 : 101; }
CUresult cuDeviceGetName(char* s, int n, int d) { (void)d; strncpy(s, "fake", n); return 0; }
CUresult cuDeviceGetAttribute(int* v, int a, int d) { (void)a; (void)d; *v = 9; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { *c = &contexts[d]; return 0; }

static CUresult set_current(void* c) {
  fake_cuda_state.ctx_sets++;
  current_ctx = c ? (int)((char*)c - contexts) + 1 : 0;
  note("ctx:%d", current_ctx);
  return 0;
}
CUresult cuCtxSetCurrent(void* c) { LOCKED(set_current(c)); }
CUresult cuCtxGetCurrent(void** c) { *c = current_ctx ? &contexts[current_ctx - 1] : NULL; return 0; }

static CUresult mem_alloc(CUdeviceptr* p, size_t n) {
  CUresult r = need_context();
  if (r) return r;
  fake_cuda_state.allocs++;
  /* 256-byte aligned, as the real driver's allocations are. */
  size_t rounded = (n + 255) / 256 * 256;
  void* block = aligned_alloc(256, rounded ? rounded : 256);
  if (block) memset(block, 0, rounded ? rounded : 256);
  *p = (CUdeviceptr)(uintptr_t)block;
  return *p ? 0 : 2;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) { LOCKED(mem_alloc(p, n)); }
CUresult cuMemFree_v2(CUdeviceptr p) {
  pthread_mutex_lock(&lock);
  fake_cuda_state.frees++;
  pthread_mutex_unlock(&lock);
  free((void*)(uintptr_t)p);
  return 0;
}
static CUresult host_alloc(void** p, size_t n, unsigned flags) {
  CUresult r = need_context();
  if (r) return r;
  fake_cuda_state.host_allocs++;
  fake_cuda_state.host_alloc_flags = flags;
  note("host_alloc:%u", flags);
  *p = calloc(1, n ? n : 1);
  return *p ? 0 : 2;
}
CUresult cuMemHostAlloc(void** p, size_t n, unsigned flags) { LOCKED(host_alloc(p, n, flags)); }
CUresult cuMemFreeHost(void* p) {
  pthread_mutex_lock(&lock);
  fake_cuda_state.host_frees++;
  note("host_free");
  pthread_mutex_unlock(&lock);
  free(p);
  return 0;
}

static CUresult copy(const char* what, void* d, const void* s, size_t n, void* st) {
  int captured = 0;
  CUresult r = use_stream(st, &captured);
  note("%s:s%d%s", what, stream_id(st), r ? ":failed" : captured ? ":captured" : "");
  if (!r && !captured) memmove(d, s, n);
  if (!r && captured) {
    struct fake_node* node = capture_node(st, NODE_COPY);
    node->dst = d;
    node->src = s;
    node->n = n;
  }
  return r;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, void* st) {
  LOCKED(copy("htod", (void*)(uintptr_t)d, s, n, st));
}
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void* st) {
  LOCKED(copy("dtoh", d, (void*)(uintptr_t)s, n, st));
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void* st) {
  LOCKED(copy("dtod", (void*)(uintptr_t)d, (void*)(uintptr_t)s, n, st));
}
static CUresult memset32(CUdeviceptr d, unsigned v, size_t n, void* st) {
  int captured = 0;
  CUresult r = use_stream(st, &captured);
  note("memset:s%d", stream_id(st));
  if (!r && captured) {
    struct fake_node* node = capture_node(st, NODE_MEMSET);
    node->dst = (void*)(uintptr_t)d;
    node->value = v;
    node->n = n;
  }
  if (r || captured) return r;
  for (size_t i = 0; i < n; ++i) ((unsigned*)(uintptr_t)d)[i] = v;
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void* st) { LOCKED(memset32(d, v, n, st)); }

static CUresult stream_create(void** out, unsigned flags) {
  CUresult r = need_context();
  if (r) return r;
  if (stream_count == FAKE_MAX_STREAMS) return 2;
  struct fake_stream* st = calloc(1, sizeof(*st));
  st->id = stream_count + 1;
  st->ctx = current_ctx;
  st->blocking = (flags & 1) == 0; /* CU_STREAM_NON_BLOCKING = 1 */
  streams[stream_count++] = st;
  note("stream_create:s%d:%s", st->id, st->blocking ? "blocking" : "nonblocking");
  *out = st;
  return 0;
}
CUresult cuStreamCreate(void** s, unsigned f) { LOCKED(stream_create(s, f)); }
/* Streams are never freed, so that a use after destroy is seen, not a crash. */
static CUresult stream_destroy(void* s) {
  int captured = 0;
  CUresult r = use_stream(s, &captured);
  note("stream_destroy:s%d", stream_id(s));
  if (r) return r;
  if (is_legacy(s)) return FAKE_CUDA_ERROR_INVALID_HANDLE;
  ((struct fake_stream*)s)->destroyed = 1;
  return 0;
}
CUresult cuStreamDestroy_v2(void* s) { LOCKED(stream_destroy(s)); }
static CUresult stream_sync(void* s) {
  int captured = 0;
  CUresult r = use_stream(s, &captured);
  note("sync:s%d%s", stream_id(s), r ? ":failed" : "");
  if (r || !captured) return r;
  ((struct fake_stream*)s)->invalidated = 1;
  return FAKE_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}
CUresult cuStreamSynchronize(void* s) { LOCKED(stream_sync(s)); }

static CUresult event_create(void** e, unsigned flags) {
  CUresult r = need_context();
  if (r) return r;
  struct fake_event* ev = calloc(1, sizeof(*ev));
  ev->id = ++event_count;
  ev->ctx = current_ctx;
  note("event_create:e%d:%u", ev->id, flags);
  *e = ev;
  return 0;
}
CUresult cuEventCreate(void** e, unsigned flags) { LOCKED(event_create(e, flags)); }
static CUresult event_record(void* e, void* s) {
  int captured = 0;
  CUresult r = use_stream(s, &captured);
  note("record:e%d:s%d@%d%s", ((struct fake_event*)e)->id, stream_id(s), current_ctx, r ? ":failed" : "");
  return r;
}
CUresult cuEventRecord(void* e, void* s) { LOCKED(event_record(e, s)); }
static CUresult stream_wait(void* s, void* e, unsigned flags) {
  (void)flags;
  int captured = 0;
  CUresult r = use_stream(s, &captured);
  note("wait:s%d:e%d@%d%s", stream_id(s), ((struct fake_event*)e)->id, current_ctx, r ? ":failed" : "");
  return r;
}
CUresult cuStreamWaitEvent(void* s, void* e, unsigned flags) { LOCKED(stream_wait(s, e, flags)); }
static CUresult event_sync(void* e) {
  note("event_sync:e%d", ((struct fake_event*)e)->id);
  return 0;
}
CUresult cuEventSynchronize(void* e) { LOCKED(event_sync(e)); }
static CUresult event_destroy(void* e) {
  note("event_destroy:e%d", ((struct fake_event*)e)->id);
  free(e);
  return 0;
}
CUresult cuEventDestroy_v2(void* e) { LOCKED(event_destroy(e)); }

static CUresult module_load(void** m, const void* image) {
  CUresult r = need_context();
  if (r) return r;
  const char* text = image;
  struct fake_cuda_state* s = &fake_cuda_state;
  s->module_loads++;
  strncpy(s->image_head, text, sizeof(s->image_head) - 1);
  s->image_ptx = text[0] == '/' || text[0] == '.' || text[0] == '\n' || text[0] == ' ';
  s->image_ptx_terminated = s->image_ptx && strnlen(text, 1 << 20) < (1 << 20);
  struct fake_module* mod = calloc(1, sizeof(*mod));
  mod->ctx = current_ctx;
  mod->next = all_modules;
  all_modules = mod;
  note("module_load:ctx%d", current_ctx);
  *m = mod;
  return 0;
}
CUresult cuModuleLoadData(void** m, const void* image) { LOCKED(module_load(m, image)); }
/* The real driver unloads from the current context: with another one
 * current the module stays loaded. Modules are kept so that stays visible. */
static CUresult module_unload(void* m) {
  struct fake_module* mod = m;
  note("module_unload:ctx%d", current_ctx);
  if (mod->ctx != current_ctx) {
    fake_cuda_state.wrong_context++;
    return current_ctx ? FAKE_CUDA_ERROR_INVALID_HANDLE : FAKE_CUDA_ERROR_INVALID_CONTEXT;
  }
  mod->unloaded = 1;
  fake_cuda_state.module_unloads++;
  return 0;
}
CUresult cuModuleUnload(void* m) { LOCKED(module_unload(m)); }
void fake_cuda_define_kernel(const char* name, int nparams, const int* param_sizes, fake_cuda_kernel_fn run) {
  pthread_mutex_lock(&lock);
  struct fake_kernel* k = NULL;
  for (int i = 0; i < kernel_count && !k; ++i) {
    if (strcmp(kernels[i].name, name) == 0) k = &kernels[i];
  }
  if (!k && kernel_count < FAKE_MAX_KERNELS) k = &kernels[kernel_count++];
  if (k) {
    snprintf(k->name, sizeof(k->name), "%s", name);
    k->nparams = nparams < FAKE_CUDA_MAX_PARAMS ? nparams : FAKE_CUDA_MAX_PARAMS;
    for (int i = 0; i < k->nparams; ++i) k->param_sizes[i] = param_sizes[i];
    k->run = run;
  }
  pthread_mutex_unlock(&lock);
}
static CUresult get_function(void** f, void* m, const char* name) {
  struct fake_function* fn = calloc(1, sizeof(*fn));
  fn->module = m;
  for (int i = 0; i < kernel_count; ++i) {
    if (strcmp(kernels[i].name, name) == 0) fn->kernel = &kernels[i];
  }
  fn->next = all_functions;
  all_functions = fn;
  *f = fn;
  return 0;
}
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { LOCKED(get_function(f, m, name)); }
CUresult cuModuleGetGlobal_v2(CUdeviceptr* p, size_t* n, void* m, const char* name) {
  (void)p; (void)n; (void)m; (void)name;
  return 500;
}
static CUresult func_set_attribute(void* f, int a, int v) {
  (void)f;
  fake_cuda_state.func_attr_calls++;
  fake_cuda_state.func_attr = a;
  fake_cuda_state.func_attr_value = v;
  note("func_attr:%d:%d", a, v);
  return 0;
}
CUresult cuFuncSetAttribute(void* f, int a, int v) { LOCKED(func_set_attribute(f, a, v)); }

/* The parameter bytes the driver copies for a launch of `fn` into `out`:
 * the defined kernel's sizes, else the test's param_sizes. */
static int copy_params(const struct fake_function* fn, void** params, int* sizes_out,
                       unsigned char out[FAKE_CUDA_MAX_PARAMS][8]) {
  const int* sizes = fn->kernel ? fn->kernel->param_sizes : fake_cuda_state.param_sizes;
  int limit = fn->kernel ? fn->kernel->nparams : FAKE_CUDA_MAX_PARAMS;
  int n = 0;
  for (int i = 0; i < limit && sizes[i] > 0; ++i) {
    memset(out[i], 0, sizeof(out[i]));
    memcpy(out[i], params[i], (size_t)sizes[i]);
    sizes_out[i] = sizes[i];
    n = i + 1;
  }
  return n;
}
static void run_kernel(const struct fake_function* fn, unsigned char params[FAKE_CUDA_MAX_PARAMS][8],
                       const unsigned* grid, const unsigned* block) {
  if (!fn->kernel || !fn->kernel->run) return;
  void* ptrs[FAKE_CUDA_MAX_PARAMS];
  for (int i = 0; i < FAKE_CUDA_MAX_PARAMS; ++i) ptrs[i] = params[i];
  fn->kernel->run(ptrs, grid, block);
}
static CUresult launch(void* f, const unsigned* grid, const unsigned* block, unsigned smem, void* stream,
                       void** params) {
  int captured = 0;
  CUresult r = use_stream(stream, &captured);
  note("launch:s%d%s", stream_id(stream), r ? ":failed" : captured ? ":captured" : "");
  if (r) return r;
  if (!params) return FAKE_CUDA_ERROR_INVALID_VALUE;
  struct fake_function* fn = f;
  if (fn->module->ctx != current_ctx) {
    fake_cuda_state.wrong_context++;
    return FAKE_CUDA_ERROR_INVALID_HANDLE;
  }
  struct fake_cuda_state* s = &fake_cuda_state;
  if (captured) s->captured_launches++;
  else s->launches++;
  memcpy(s->grid, grid, sizeof(s->grid));
  memcpy(s->block, block, sizeof(s->block));
  s->smem = smem;
  int sizes[FAKE_CUDA_MAX_PARAMS];
  s->nparams = copy_params(fn, params, sizes, s->params);
  if (captured) {
    struct fake_node* node = capture_node(stream, NODE_KERNEL);
    node->fn = fn;
    memcpy(node->grid, grid, sizeof(node->grid));
    memcpy(node->block, block, sizeof(node->block));
    node->smem = smem;
    node->nparams = copy_params(fn, params, node->param_sizes, node->params);
  } else {
    run_kernel(fn, s->params, grid, block);
  }
  return 0;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void* stream, void** params, void** extra) {
  (void)extra;
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  pthread_mutex_lock(&lock);
  int captured_before = fake_cuda_state.captured_launches;
  CUresult r = launch(f, grid, block, smem, stream, params);
  void (*hook)(void) = NULL;
  if (fake_cuda_state.captured_launches != captured_before) {
    hook = fake_cuda_state.on_captured_launch;
    fake_cuda_state.on_captured_launch = NULL;
  }
  pthread_mutex_unlock(&lock);
  if (hook) hook();
  return r;
}

static CUresult begin_capture(void* s, int mode) {
  int captured = 0;
  CUresult r = use_stream(s, &captured);
  note("begin_capture:s%d:mode%d", stream_id(s), mode);
  if (r) return r;
  if (is_legacy(s) || captured) return FAKE_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  struct fake_stream* st = s;
  st->capturing = 1;
  st->invalidated = 0;
  st->capture = calloc(1, sizeof(*st->capture));
  st->capture->next = all_graphs;
  all_graphs = st->capture;
  st->last = NULL;
  return 0;
}
CUresult cuStreamBeginCapture_v2(void* s, int mode) { LOCKED(begin_capture(s, mode)); }
static CUresult end_capture(void* s, void** g) {
  *g = NULL;
  note("end_capture:s%d", stream_id(s));
  if (is_legacy(s) || !((struct fake_stream*)s)->capturing) return FAKE_CUDA_ERROR_INVALID_VALUE;
  struct fake_stream* st = s;
  st->capturing = 0;
  struct fake_graph* graph = st->capture;
  st->capture = NULL;
  st->last = NULL;
  if (st->invalidated) {
    graph->destroyed = 1;
    return FAKE_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *g = graph;
  return 0;
}
CUresult cuStreamEndCapture(void* s, void** g) { LOCKED(end_capture(s, g)); }
/* cuStreamGetCaptureInfo_v2: status 1 is ACTIVE, 2 INVALIDATED. */
static CUresult capture_info(void* s, int* status, unsigned long long* id, void** graph, const void*** deps,
                             size_t* ndeps) {
  CUresult r = need_context();
  note("capture_info:s%d", stream_id(s));
  if (r) return r;
  *status = 0;
  if (id) *id = 0;
  if (graph) *graph = NULL;
  if (deps) *deps = NULL;
  if (ndeps) *ndeps = 0;
  if (is_legacy(s)) return 0;
  struct fake_stream* st = s;
  if (!st->capturing) return 0;
  *status = st->invalidated ? 2 : 1;
  if (id) *id = (unsigned long long)st->id;
  if (graph) *graph = st->capture;
  if (deps) *deps = (const void**)&st->last;
  if (ndeps) *ndeps = st->last ? 1 : 0;
  return 0;
}
CUresult cuStreamGetCaptureInfo_v2(void* s, int* status, unsigned long long* id, void** graph, const void*** deps,
                                   size_t* ndeps) {
  LOCKED(capture_info(s, status, id, graph, deps, ndeps));
}
static CUresult graph_nodes(void* g, void** nodes, size_t* n) {
  struct fake_graph* graph = g;
  if (!graph || graph->destroyed || !n) return FAKE_CUDA_ERROR_INVALID_VALUE;
  if (nodes) {
    for (size_t i = 0; i < *n && i < (size_t)graph->count; ++i) nodes[i] = graph->nodes[i];
  }
  *n = (size_t)graph->count;
  return 0;
}
CUresult cuGraphGetNodes(void* g, void** nodes, size_t* n) { LOCKED(graph_nodes(g, nodes, n)); }
static CUresult instantiate(void** e, void* g) {
  struct fake_graph* graph = g;
  if (!graph || graph->destroyed) return FAKE_CUDA_ERROR_INVALID_VALUE;
  struct fake_exec* ex = calloc(1, sizeof(*ex));
  ex->ctx = current_ctx;
  ex->graph = graph;
  ex->count = graph->count;
  ex->nodes = calloc((size_t)(graph->count ? graph->count : 1), sizeof(*ex->nodes));
  for (int i = 0; i < graph->count; ++i) ex->nodes[i] = *graph->nodes[i];
  *e = ex;
  return 0;
}
/* The layout of CUDA_KERNEL_NODE_PARAMS (v1). */
struct fake_kernel_node_params {
  void* func;
  unsigned grid[3], block[3], smem;
  void** params;
  void** extra;
};
static CUresult exec_set_kernel_params(void* e, void* n, const struct fake_kernel_node_params* p) {
  struct fake_exec* ex = e;
  struct fake_node* node = n;
  CUresult r = need_context();
  note("node_update:n%d%s", node ? node->index : -1, fake_cuda_state.refuse_node_updates ? ":refused" : "");
  if (r) return r;
  if (!ex || ex->destroyed || !node || node->graph->destroyed || node->graph != ex->graph)
    return FAKE_CUDA_ERROR_INVALID_HANDLE;
  if (node->kind != NODE_KERNEL || p->func != (void*)node->fn || !p->params || p->extra)
    return FAKE_CUDA_ERROR_INVALID_VALUE;
  if (fake_cuda_state.refuse_node_updates) return fake_cuda_state.refuse_node_updates;
  struct fake_node* target = &ex->nodes[node->index];
  memcpy(target->grid, p->grid, sizeof(target->grid));
  memcpy(target->block, p->block, sizeof(target->block));
  target->smem = p->smem;
  target->nparams = copy_params(node->fn, p->params, target->param_sizes, target->params);
  fake_cuda_state.node_updates++;
  return 0;
}
CUresult cuGraphExecKernelNodeSetParams(void* e, void* n, const struct fake_kernel_node_params* p) {
  LOCKED(exec_set_kernel_params(e, n, p));
}
CUresult cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long f) { (void)f; LOCKED(instantiate(e, g)); }
static CUresult graph_launch(void* e, void* s) {
  int captured = 0;
  CUresult r = use_stream(s, &captured);
  note("graph_launch:s%d%s", stream_id(s), r ? ":failed" : "");
  if (r) return r;
  struct fake_exec* ex = e;
  if (ex->destroyed) return FAKE_CUDA_ERROR_INVALID_HANDLE;
  fake_cuda_state.graph_launches++;
  for (int i = 0; i < ex->count; ++i) {
    struct fake_node* node = &ex->nodes[i];
    if (node->kind == NODE_KERNEL) {
      fake_cuda_state.replayed_kernels++;
      note("replay:n%d", i);
      run_kernel(node->fn, node->params, node->grid, node->block);
    } else if (node->kind == NODE_MEMSET) {
      for (size_t k = 0; k < node->n; ++k) ((unsigned*)node->dst)[k] = node->value;
    } else {
      memmove(node->dst, node->src, node->n);
    }
  }
  return 0;
}
CUresult cuGraphLaunch(void* e, void* s) { LOCKED(graph_launch(e, s)); }
static CUresult exec_destroy(void* e) {
  note("graph_exec_destroy");
  free(((struct fake_exec*)e)->nodes);
  free(e);
  return 0;
}
CUresult cuGraphExecDestroy(void* e) { LOCKED(exec_destroy(e)); }
/* The graph is kept (reachable from all_graphs) so that a later use of one
 * of its nodes is refused rather than a crash. */
static CUresult graph_destroy(void* g) {
  note("graph_destroy");
  if (!g) return FAKE_CUDA_ERROR_INVALID_VALUE;
  ((struct fake_graph*)g)->destroyed = 1;
  return 0;
}
CUresult cuGraphDestroy(void* g) { LOCKED(graph_destroy(g)); }

/* Test hook: what work elsewhere in the process can do to a capture. */
void fake_cuda_invalidate_captures(void) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < stream_count; ++i) {
    if (streams[i]->capturing) streams[i]->invalidated = 1;
  }
  pthread_mutex_unlock(&lock);
}

#ifdef FAKE_CUDA_EXPORT_GETPROC
/* Resolves the base name to the versioned export (name_v2) when there is one. */
static void* own_symbol(const char* name) {
  Dl_info info;
  if (!dladdr((void*)&cuInit, &info)) return NULL;
  void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!self) return NULL;
  char versioned[128];
  snprintf(versioned, sizeof(versioned), "%s_v2", name);
  void* fn = dlsym(self, versioned);
  if (!fn) fn = dlsym(self, name);
  dlclose(self);
  return fn;
}
CUresult cuGetProcAddress(const char* name, void** fn, int version, unsigned long long flags) {
  pthread_mutex_lock(&lock);
  struct fake_cuda_state* s = &fake_cuda_state;
  s->getproc_calls++;
  s->getproc_flags |= flags;
  s->getproc_version = version;
  if (flags != 1 /* CU_GET_PROC_ADDRESS_LEGACY_STREAM */) s->getproc_non_legacy++;
  pthread_mutex_unlock(&lock);
  *fn = own_symbol(name);
  return *fn ? 0 : 500;
}
#endif

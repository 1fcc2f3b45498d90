#include "module/library_support.h"
#include "module/library_module.h"
#include "layer_api/library_origin.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "graphrt/binary_loader.h"
#include "graphrt/runtime.h"
#include "module/import_tree.h"
#include "module/library_blob_ffi.h"
#include "threading/parallel_split.h"

namespace graphrt {

namespace {
// Context-function pointers the loader fills before anything runs (`__` + name).
const char* const kContextFunctions[] = {
    "TVMFuncCall",          "TVMAPISetLastError",       "TVMBackendGetFuncFromEnv",  "TVMBackendAllocWorkspace",
    "TVMBackendFreeWorkspace", "TVMBackendParallelLaunch", "TVMBackendParallelBarrier",
    // tvm-ffi (TVM v0.22+): host code finds and calls the functions of imported modules.
    "TVMFFIFunctionCall", "TVMFFIEnvModLookupFromImports", "TVMFFIHandleInitOnce",
};

// TVM v0.22+ (tvm-ffi): the blob, the context variable, and each function's prefix.
const char kFfiBlobSymbol[] = "__tvm_ffi__library_bin";
const char kFfiContextSymbol[] = "__tvm_ffi__library_ctx";
const char kFfiFunctionPrefix[] = "__tvm_ffi_";
// tvm-ffi's own data symbols (`__tvm_ffi__metadata_<name>`, ...) carry a second underscore.
const char kFfiDataPrefix[] = "__tvm_ffi__";

bool starts_with(const std::string& s, const char* prefix) { return s.compare(0, std::strlen(prefix), prefix) == 0; }

// TVM v0.21's transitional in-tree FFI wrote these (one underscore); its object
// layout is that of no other release.
void refuse_transitional_ffi(const Library& library) {
  for (const char* name : {"__tvm_ffi_library_bin", "__tvm_ffi_library_ctx"})
    if (library.symbol(name))
      throw Error(ErrorKind::kUnsupported,
                  std::string("a TVM v0.21 export (") + name +
                      ": the transitional FFI ABI of that release only) is not supported: export the model with "
                      "TVM v0.22 or later, or v0.20 or earlier")
          .with("file", library.origin()).with("symbol", name);
}

// The image's runtime data (context variable and slots, blob, entry name):
// symbols the loader reads or writes, never functions to call.
bool is_runtime_data_symbol(const std::string& name) {
  if (name == "__tvm_dev_mblob" || name == "__tvm_module_ctx") return true;
  if (starts_with(name, kFfiDataPrefix)) return true;
  for (const char* fn : kContextFunctions)
    if (name == std::string("__") + fn) return true;
  return false;
}

// Whether the image shows it was made by TVM (or for TVM's runtime): the blob,
// the context variable, a context-function slot, the AOT entry name, or an
// import of TVM's C ABI.
bool has_tvm_marker(const Library& library) {
  for (const char* name : {"__tvm_dev_mblob", "__tvm_module_ctx", "__tvm_main__", kFfiBlobSymbol, kFfiContextSymbol})
    if (library.symbol(name)) return true;
  for (const char* name : kContextFunctions)
    if (library.symbol(std::string("__") + name)) return true;
  for (const std::string& name : library.facts().imports)
    if (name.compare(0, 3, "TVM") == 0 && runtime_symbol(name)) return true;
  return false;
}

void require_tvm_library(const Library& library, const LoadOptions& options) {
  if (options.trust_exports || library.facts().registered_tvm_code || has_tvm_marker(library)) return;
  const std::string what = "not a TVM module: no __tvm_dev_mblob or __tvm_ffi__library_bin and no TVM-ABI symbol "
                           "(__tvm_module_ctx, __TVMAPISetLastError, a TVM* import), so its functions are not known "
                           "to be packed functions";
  // trust_exports only helps a library of hand-written packed functions: never a versioned
  // system library (libz.so.1, libm.so.6), nor a library that exports no function at all.
  const std::string origin = library.origin();
  // The file itself, past symlinks: /usr/lib/x86_64-linux-gnu/libz.so is libz.so.1.2.13.
  std::unique_ptr<char, decltype(&std::free)> real(realpath(origin.c_str(), nullptr), &std::free);
  const std::string resolved = real ? real.get() : origin;
  const std::string base = resolved.substr(resolved.find_last_of('/') + 1);
  bool system_library = base.find(".so.") != std::string::npos;
  for (const char* dir : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"})
    if (resolved.compare(0, std::strlen(dir), dir) == 0) system_library = true;
  bool exports_function = false;
  for (const std::string& name : library.symbol_names())
    if (!is_runtime_data_symbol(name) && library_symbol_is_function(library, name)) exports_function = true;
  std::string advice;
  if (system_library)
    advice = "; it looks like a system library, not a model: graphrt runs the file TVM's export_library writes "
             "(deploy.so, deploy.tar) or a graphrt-pack output";
  else if (!exports_function && !library.symbol_names().empty())
    advice = "; it exports no function, so it holds no kernels: graphrt runs the file TVM's export_library writes "
             "(deploy.so, deploy.tar) or a graphrt-pack output";
  else
    advice = "; load a TVM export or a graphrt-pack output, or opt in with the trust_exports load option for "
             "hand-written packed functions";
  Error error = Error(what + advice).with("file", origin);
  // Only where opting in could help: the apps name their flag for this option.
  if (!system_library && (exports_function || library.symbol_names().empty())) error.with("option", "trust_exports");
  throw error;
}
}  // namespace

LibraryModuleNode::~LibraryModuleNode() {
  if (split_launches_allowed_) parallel_split_forget_code(library_.get());
}

void LibraryModuleNode::allow_split_launches() {
  if (split_launches_allowed_) return;
  parallel_split_allow_code(library_.get(), split_launch_code(*library_));
  split_launches_allowed_ = true;
}

std::vector<CodeRange> split_launch_code(const Library& library) {
  // A barrier waits for every task at once, which more tasks than threads
  // could never reach: LLVM code calls it through its slot, C code by name.
  const std::vector<std::string>& imports = library.facts().imports;
  if (library.symbol("__TVMBackendParallelBarrier") ||
      std::find(imports.begin(), imports.end(), "TVMBackendParallelBarrier") != imports.end())
    return {};
  std::vector<CodeRange> code;
  for (const LibraryRange& r : library.facts().ranges)
    if (r.code) code.push_back(CodeRange{r.start, r.bytes});
  return code;
}

static bool library_speaks_ffi(const Library& library) {
  if (library.symbol(kFfiBlobSymbol) || library.symbol(kFfiContextSymbol)) return true;
  for (const std::string& name : library.facts().imports)
    if (starts_with(name, "TVMFFI")) return true;
  return false;
}

LibraryModuleNode::LibraryModuleNode(std::shared_ptr<Library> library)
    : library_(std::move(library)), speaks_ffi_(library_speaks_ffi(*library_)) {}

PackedFunc LibraryModuleNode::find_function(const std::string& name, const Module& self) {
  if (speaks_ffi_) {
    // Only the library's own `__tvm_ffi_<name>` functions: a plain name there is no packed function.
    const std::string symbol = kFfiFunctionPrefix + name;
    if (is_runtime_data_symbol(symbol)) return PackedFunc();
    void* address = library_->symbol(symbol);
    if (!address || !library_symbol_is_function(*library_, symbol)) return PackedFunc();
    return make_ref<FunctionNode>(FunctionNode::FfiSafeCall{address}, name, Ref<Object>(self));
  }
  std::string symbol = name;
  if (name == "__tvm_main__") {
    auto* entry = static_cast<const char*>(library_->symbol("__tvm_main__"));
    if (!entry) return PackedFunc();
    symbol = std::string(entry, strnlen(entry, std::min<size_t>(1024, readable_symbol_bytes(*library_, name, entry))));
  }
  if (is_runtime_data_symbol(symbol)) return PackedFunc();
  void* address = library_->symbol(symbol);
  if (!address || !library_symbol_is_function(*library_, symbol)) return PackedFunc();
  return make_ref<FunctionNode>(reinterpret_cast<TVMBackendPackedCFunc>(address), symbol, Ref<Object>(self));
}

std::vector<std::string> LibraryModuleNode::function_names() const {
  if (!speaks_ffi_) return library_->symbol_names();
  std::vector<std::string> names;
  for (const std::string& symbol : library_->symbol_names())
    if (starts_with(symbol, kFfiFunctionPrefix) && !starts_with(symbol, kFfiDataPrefix))
      names.push_back(symbol.substr(std::strlen(kFfiFunctionPrefix)));
  return names;
}

static Module load_legacy_blob(const Runtime& runtime, BlobReader& reader, uint64_t count, const Module& lib_module,
                               Module* ctx_out) {
  auto root = make_ref<LibraryModuleNode>(static_cast<LibraryModuleNode*>(lib_module.get())->library());
  for (uint64_t i = 0; i < count; ++i) {
    std::string tkey = reader.read_string("module type key");
    if (tkey == "_lib" || tkey == "_import_tree") throw reader.error("legacy blob contains a " + quote_untrusted(tkey) + " record");
    root->add_import(load_binary(runtime, tkey, reader));
  }
  *ctx_out = Module(root);
  return Module(root);
}

Module parse_module_blob(const uint8_t* data, size_t size, const std::string& origin, const Module& lib_module,
                         Module* ctx_out, bool pages_releasable) {
  return parse_module_blob(runtime(), data, size, origin, lib_module, ctx_out, pages_releasable);
}

Module parse_module_blob(const Runtime& runtime, const uint8_t* data, size_t size, const std::string& origin,
                         const Module& lib_module, Module* ctx_out, bool pages_releasable) {
  BlobReader outer(data, size, origin);
  uint64_t nbytes = outer.read_u64("blob size prefix");
  if (nbytes > outer.remaining())
    throw outer.error("blob size prefix says " + std::to_string(nbytes) + " bytes but only " +
                      std::to_string(outer.remaining()) + " follow");
  BlobReader reader(data + 8, nbytes, origin);
  reader.set_pages_releasable(pages_releasable);
  uint64_t count = reader.read_count("module record count", 8);
  std::vector<Module> modules;
  std::vector<uint64_t> row_ptr, children;
  bool has_tree = false, has_lib = false;
  for (uint64_t i = 0; i < count; ++i) {
    std::string tkey = reader.read_string("module type key");
    if (tkey == "_import_tree") {
      if (has_tree) throw reader.error("blob has two _import_tree records");
      row_ptr = reader.read_u64_vector("_import_tree row_ptr");
      children = reader.read_u64_vector("_import_tree child_indices");
      has_tree = true;
    } else if (tkey == "_lib") {
      if (has_lib) throw reader.error("blob has two _lib records");
      has_lib = true;
      modules.push_back(lib_module);
    } else {
      modules.push_back(load_binary(runtime, tkey, reader));
    }
  }
  if (!reader.at_end())
    throw reader.error(std::to_string(reader.remaining()) + " unparsed bytes after the last blob record");
  reader.release_consumed();
  if (!has_tree) {
    if (has_lib) throw reader.error("blob has a _lib record but no _import_tree");
    BlobReader again(data + 8, nbytes, origin);  // legacy layout: every record imported by a new root
    uint64_t legacy_count = again.read_u64("module record count");
    modules.clear();
    return load_legacy_blob(runtime, again, legacy_count, lib_module, ctx_out);
  }
  if (modules.empty()) throw reader.error("blob has an import tree but no modules");
  attach_imports(reader, modules, row_ptr, children);
  *ctx_out = has_lib ? lib_module : modules[0];
  return modules[0];
}

static void attach_environment_to_tree(ModuleNode* node, ModuleNode* ctx) {
  node->attach_environment(ctx);
  for (ModuleNode* child : imported_modules(*node)) child->attach_environment(ctx);
}

// Stores `value` in the image's pointer variable `name`, if it has one. The
// slot must lie in a writable segment; it need not be aligned. A slot that
// already holds the value is not written: kernels of the same image may be
// reading it on other threads.
static void write_pointer_slot(const Library& library, const std::string& name, const void* value) {
  void* slot = library.symbol(name);
  if (!slot) return;
  if (library_mapped_bytes(library, slot, true) < sizeof(value))
    throw Error(ErrorKind::kInternal, "pointer variable is not in a writable segment of the image").with("symbol", name)
        .with("file", library.origin());
  if (std::memcmp(slot, &value, sizeof(value)) != 0) std::memcpy(slot, &value, sizeof(value));
}

// Loads of a path the dynamic linker already has share its image, and with
// it the image's __tvm_module_ctx and context-function slots. One module tree
// per image, shared by every load and refcounted like any module, keeps the
// context valid for as long as any load's modules live. Loads are serialised
// by this table's mutex (recursive: a blob record may load a library itself).
// A tree's modules belong to the runtime it was loaded through (its record
// loaders made them, its devices serve them), so only loads through that
// runtime share it.
struct SharedTree {
  ModuleNode* root;        // not owning; the entry leaves in ~ModuleNode
  const Runtime* runtime;  // the runtime the tree was loaded through
};
struct SharedTrees {
  std::recursive_mutex mutex;
  std::map<const void*, SharedTree> roots;
};
// Process-wide, not the Runtime's: TVM's C ABI forces it (an image's
// __tvm_module_ctx slot exists once per loaded image in the process).
SharedTrees& shared_trees() {
  static SharedTrees* t = new SharedTrees();  // outlives static destructors that free modules
  return *t;
}

// What identifies the image: the address of its context variable, else of
// its first context-function slot; null when it has neither (then nothing is
// shared and nothing is written).
static const void* image_key(const Library& library) {
  if (const void* ctx = library.symbol("__tvm_module_ctx")) return ctx;
  if (const void* ctx = library.symbol(kFfiContextSymbol)) return ctx;
  if (const void* blob = library.symbol(kFfiBlobSymbol)) return blob;
  for (const char* name : kContextFunctions) {
    if (const void* slot = library.symbol(std::string("__") + name)) return slot;
  }
  return nullptr;
}

void forget_shared_tree(const void* image_key, ModuleNode* root) {
  SharedTrees& trees = shared_trees();
  std::lock_guard<std::recursive_mutex> lock(trees.mutex);
  auto it = trees.roots.find(image_key);
  if (it != trees.roots.end() && it->second.root == root) trees.roots.erase(it);
}

static void fill_context_functions(const Library& library) {
  for (const char* name : kContextFunctions)
    write_pointer_slot(library, std::string("__") + name, runtime_symbol(name));
}

using BlobParser = Module (*)(const Runtime&, const uint8_t*, size_t, const std::string&, const Module&, Module*, bool);

// Parses the blob symbol `name` of `library` with `runtime`'s record loaders,
// bounded by the symbol's size or its segment, whichever loader mapped it: a
// hostile size prefix must not send the parser past the image.
static Module parse_library_blob(const Runtime& runtime, const Library& library, const char* name,
                                 const Module& lib_module, Module* ctx, BlobParser parse) {
  auto* blob = static_cast<const uint8_t*>(library.symbol(name));
  size_t readable = readable_symbol_bytes(library, name, blob);
  if (readable < 8)
    throw Error(std::string(name) + " holds " + std::to_string(readable) + " bytes, less than its size prefix")
        .with("file", library.origin());
  uint64_t nbytes;
  std::memcpy(&nbytes, blob, 8);
  if (nbytes > readable - 8)
    throw Error("blob size prefix says " + std::to_string(nbytes) + " bytes but the symbol holds " +
                std::to_string(readable - 8))
        .with("file", library.origin()).with("symbol", name);
  try {
    return parse(runtime, blob, nbytes + 8, library.origin(), lib_module, ctx, library.facts().blob_pages_releasable);
  } catch (Error& e) {
    throw e.with("file", library.origin());
  }
}

// The image's live tree, loaded through another runtime than `loading`: its
// context slots point into that tree, so this load cannot have one of its own.
static Error image_loaded_through_other_runtime(const Library& library) {
  return Error(ErrorKind::kFailedPrecondition,
               "this library is already loaded through another runtime: a loaded image has one module tree in the "
               "process (its context variable points into it), whose modules belong to the runtime that loaded it; "
               "load it through that runtime, release that load first, or load it with the \"elf\" loader (an image of "
               "its own per load)")
      .with("file", library.origin());
}

Module load_module_from_library(std::shared_ptr<Library> library, const LoadOptions& options) {
  refuse_transitional_ffi(*library);
  require_tvm_library(*library, options);
  const Runtime& loading = options.runtime ? *options.runtime : runtime();
  SharedTrees& trees = shared_trees();
  std::lock_guard<std::recursive_mutex> lock(trees.mutex);
  const void* key = image_key(*library);
  if (key) {
    auto it = trees.roots.find(key);
    // A root whose count already reached zero is being destroyed: load anew.
    if (it != trees.roots.end() && it->second.root->try_inc_ref()) {
      Module shared = Module::adopt(it->second.root);
      if (it->second.runtime != &loading) throw image_loaded_through_other_runtime(*library);
      return shared;
    }
  }
  fill_context_functions(*library);
  Module lib_module(make_ref<LibraryModuleNode>(library));
  // Code TVM generated partitions its parallel loops by any num_task; code
  // trusted only by the caller's word may expect one task per thread.
  if (has_tvm_marker(*library))
    static_cast<LibraryModuleNode*>(lib_module.get())->allow_split_launches();
  Module root = lib_module;
  Module ctx = lib_module;
  if (library->symbol("__tvm_dev_mblob"))
    root = parse_library_blob(loading, *library, "__tvm_dev_mblob", lib_module, &ctx, &parse_module_blob);
  else if (library->symbol(kFfiBlobSymbol))
    root = parse_library_blob(loading, *library, kFfiBlobSymbol, lib_module, &ctx, &parse_ffi_module_blob);
  write_pointer_slot(*library, "__tvm_module_ctx", ctx.get());
  write_pointer_slot(*library, kFfiContextSymbol, ctx.get());
  attach_environment_to_tree(root.get(), ctx.get());
  if (key) {
    root->shared_image_key = key;
    trees.roots[key] = SharedTree{root.get(), &loading};
  }
  return root;
}

Module load_module(const std::string& path, const LoadOptions& options) {
  LibrarySource source;
  source.path = path;
  return load_module_from_library(load_library(options.runtime ? *options.runtime : runtime(), options.loader, source),
                                  options);
}

Module load_module_from_memory(const uint8_t* data, size_t size, const LoadOptions& options) {
  LibrarySource source;
  source.data = data;
  source.size = size;
  return load_module_from_library(load_library(options.runtime ? *options.runtime : runtime(), options.loader, source),
                                  options);
}

std::string write_module_blob(const std::vector<ModuleBlobRecord>& records,
                              const std::vector<std::vector<uint64_t>>& imports) {
  if (imports.size() > records.size()) throw Error("module blob: import rows for more modules than records");
  BlobWriter body;
  body.write_u64(records.size() + 1);  // the import tree is a record too
  for (const ModuleBlobRecord& r : records) {
    if (r.tkey == "_import_tree") throw Error("module blob: '_import_tree' is written by the blob writer itself");
    body.write_string(r.tkey);
    body.write_raw(r.payload.data(), r.payload.size());
  }
  std::vector<uint64_t> row_ptr{0}, children;
  std::vector<std::vector<uint64_t>> rows(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    for (uint64_t child : i < imports.size() ? imports[i] : std::vector<uint64_t>()) {
      if (child >= records.size() || child == i)
        throw Error("module blob: record " + std::to_string(i) + " (" + quote_untrusted(records[i].tkey) + ") imports " +
                    (child == i ? "itself" : "record " + std::to_string(child) + ", which does not exist"));
      children.push_back(child);
      rows[i].push_back(child);
    }
    row_ptr.push_back(children.size());
  }
  // The reader refuses cycles: the writer never makes one.
  const int64_t cyclic = module_on_import_cycle(rows);
  if (cyclic >= 0)
    throw Error("module blob: record " + std::to_string(cyclic) + " (" + quote_untrusted(records[cyclic].tkey) +
                ") imports itself through a cycle");
  body.write_string("_import_tree");
  body.write_u64(row_ptr.size());
  for (uint64_t v : row_ptr) body.write_u64(v);
  body.write_u64(children.size());
  for (uint64_t v : children) body.write_u64(v);
  BlobWriter whole;
  whole.write_u64(body.bytes().size());
  whole.write_raw(body.bytes().data(), body.bytes().size());
  return whole.take();
}

std::string library_origin(const ModuleNode* context) {
  auto* library = dynamic_cast<const LibraryModuleNode*>(context);
  return library ? library->library()->origin() : std::string();
}

}  // namespace graphrt

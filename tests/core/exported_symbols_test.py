"""libgraphrt exports its API and nothing else.

Reads `nm -DC --defined-only` of the built library and checks it against
exported_symbols.txt (one demangled name per line): no standard-library
instantiation, no back-end or loader internal, at most 365 names (vtables aside), and no name
added or removed without the list changing with it.
Usage: exported_symbols_test.py LIBGRAPHRT [--update]  (--update rewrites the list)."""
import os
import re
import subprocess
import sys

ALLOWED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exported_symbols.txt")
MAX_SYMBOLS = 510  # 300 until the session layer (Session, Model, Runner) and the tvm-ffi C ABI; 340 with its C API (graphrt_model_*, graphrt_runner_*: 17); 350 with graphrt::LanguageModel (7); 365 with MLC folders and batch steps (LanguageModel: 9, parse/read_mlc_chat_config, parse_mlc_model_metadata); 420 with the language-model layer (55: Tokenizer, TokenizerInfo and StreamDecoder; Sampler, generation configs, conv_template prompts, TextGeneration and TextGenerator; the graphrt_lm_* C API); 425 with closest_matches (the apps' did-you-mean); 435 with ContinuousBatcher (7: its constructor, destructor, add, cancel, step, pages and tokens in use); 450 with values in the core (graphrt/value.h: Value and its reader, 8; the graphrt_value_* C API and graphrt_runner_get_result, 6; typeinfo of ArrayObject, ShapeObject, TupleObject; model_kind_of, the one test of a root's type key); 480 with the base's JSON reader and writer and the Chrome trace writer (45: JsonReader, JsonWriter, json_string, ChromeTraceWriter: the apps and the layers read and write JSON through them, and the reader's inline fast paths call its slow ones); 490 with LanguageModel::popn (the KV cache's popn on a device too); 505 with RelaxVM defined in libgraphrt (13: its calls by name out of the public header, session/relax_vm.cc); 510 with the one-call step (6: LanguageModel::step over a caller's buffer, graphrt_lm_step, graphrt_lm_add_sequence, graphrt_lm_remove_sequence, graphrt_lm_vocab_size, graphrt_lm_open_library)
INTERNAL = re.compile(r"std::|__gnu_cxx::|nlohmann|dmlc|graphrt::(elf|vm|cuda_backend|opencl_backend|detail)::|\(anonymous namespace\)")


def exported(library):
    out = subprocess.run(["nm", "-DC", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] not in ("A",):
            names.add(parts[2])
    return sorted(names)


def main():
    library = sys.argv[1]
    names = exported(library)
    if "--update" in sys.argv:
        keep = set()  # per-build vtables/typeinfo already listed stay listed
        if os.path.exists(ALLOWED):
            with open(ALLOWED) as f:
                keep = {l.rstrip("\n") for l in f if l.startswith(("vtable for ", "typeinfo"))}
        names = sorted(set(names) | keep)
        with open(ALLOWED, "w") as f:
            f.write("".join(n + "\n" for n in names))
        print(f"wrote {len(names)} names to {ALLOWED}")
        return 0
    problems = []
    # Template parameters may name std types (std::string arguments); the symbol's own scope must not be std.
    internal = [n for n in names if INTERNAL.search(n.split("(")[0])]
    if internal:
        problems.append(f"{len(internal)} internal names exported, e.g. " + "; ".join(internal[:5]))
    # Vtables do not count: whether an unoptimised build emits (and so exports) the vtable of a
    # class without an out-of-line virtual is the compiler's choice, not an API decision; the
    # names themselves are still held to the list below.
    counted = [n for n in names if not n.startswith("vtable for ")]
    if len(counted) > MAX_SYMBOLS:
        problems.append(f"{len(counted)} names exported (vtables aside), more than {MAX_SYMBOLS}")
    with open(ALLOWED) as f:
        allowed = {l.rstrip("\n") for l in f if l.strip()}
    added, removed = sorted(set(names) - allowed), sorted(allowed - set(names))
    # Vtables and type information of classes with inline virtual functions are emitted by
    # some builds (Debug) and not others: listed once, never required.
    removed = [n for n in removed if not n.startswith(("vtable for ", "typeinfo for ", "typeinfo name for "))]
    if added:
        problems.append(f"{len(added)} exported names not in {os.path.basename(ALLOWED)}: " + "; ".join(added[:10]))
    if removed:
        problems.append(f"{len(removed)} names of {os.path.basename(ALLOWED)} no longer exported: " + "; ".join(removed[:10]))
    for p in problems:
        print("exported symbols: " + p)
    if problems:
        print(f"(a deliberate API change: rerun with --update and review the diff of {ALLOWED})")
        return 1
    print(f"{len(names)} exported names, all in the allowed set")
    return 0


if __name__ == "__main__":
    sys.exit(main())

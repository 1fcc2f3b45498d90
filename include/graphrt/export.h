/* graphrt's one export macro. libgraphrt is built with hidden visibility
 * (and a linker version script that keeps template instantiations of the
 * standard library private); what a public header declares between
 * `#pragma GCC visibility push(default)` and `pop` (its namespace graphrt
 * block), or marks with GRAPHRT_API, is what the library exports. Nothing
 * else is reachable from outside it. The pragma rather than an attribute on
 * the namespace: clang ignores a namespace's visibility attribute for
 * definitions written in another block of that namespace (the .cc files),
 * so a clang build exported none of the C++ API. */
#ifndef GRAPHRT_EXPORT_H_
#define GRAPHRT_EXPORT_H_

#if defined(_WIN32)
#define GRAPHRT_API __declspec(dllimport)
#else
#define GRAPHRT_API __attribute__((visibility("default")))
#endif

/* A free function defined in a public header: every program that calls it
 * compiles its own copy, so libgraphrt keeps its copy (emitted by unoptimised
 * builds) to itself instead of exporting it. */
#if defined(_WIN32)
#define GRAPHRT_HEADER_ONLY
#else
#define GRAPHRT_HEADER_ONLY __attribute__((visibility("hidden")))
#endif

#endif /* GRAPHRT_EXPORT_H_ */

// A graph model exported at several batch sizes: a version folder holding
// batch_<N>.so (or batch_<N>.tar) files, each the same model with N as the leading
// dimension of every input and output. Graph exports have fixed shapes, so this is
// how they batch: a batch of rows runs on the smallest export that fits, the rows
// beyond padded with zeros and their outputs dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/served_model.h"

namespace graphrt_serve {

struct BatchExport {
  int64_t batch = 0;  // the N of batch_<N>
  std::string file;   // name within the version folder (for messages)
  std::string path;
};

// The batch exports of a version folder, smallest batch first; empty when it holds
// none. Throws graphrt::Error naming the file when batch_<N> files are mixed with
// other files, or when two name the same N.
std::vector<BatchExport> find_batch_exports(const std::string& dir);

struct LoadedBatchExports {
  // As the protocol lists them: the leading dimension -1 (any number of rows up to the
  // largest export); graph outputs are output_0, output_1, ...
  std::vector<TensorMetadata> inputs, outputs;
  std::vector<std::unique_ptr<Instance>> instances;
  int64_t largest_batch = 0;
};

// Loads every export and `instance_count` instances over them (each instance holds one
// executor per export; executors of one export share its params). Throws graphrt::Error
// naming the file and tensor when an export is not a graph export, when a leading
// dimension is not the N of its file name, or when exports differ in anything but it
// (input names, datatypes, ranks, other dimensions; output count, datatypes, shapes).
LoadedBatchExports load_batch_exports(const std::vector<BatchExport>& exports, int instance_count);

}  // namespace graphrt_serve

// The paged KV cache's bookkeeping, without any tensor: which pages hold
// which sequence's tokens. TVM's contract (src/runtime/vm/paged_kv_cache.cc,
// attn_utils.h): a sequence is a chain of blocks, root first; a block owns
// whole pages, all full but its last; sequences forked from one another
// share their common leading blocks (a block referenced by more than one
// sequence or child block takes no new tokens). Page ids and block indices
// are handed out as TVM hands them out (pages from a free list that starts
// at page 0, blocks reused last-freed first), so that the kernels see the
// same page tables as under TVM.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace graphrt {
namespace relax {
namespace kv {

struct Block {
  std::vector<int32_t> pages;
  int32_t length = 0;     // tokens in this block
  int32_t start_pos = 0;  // position of its first token in the sequence (RoPE)
  int32_t parent = -1;    // index of the block before it, or -1
  int32_t refs = 0;       // sequences and child blocks that end in / continue from it
};

struct Sequence {
  int32_t last_block = -1;
  int32_t length = 0;  // tokens over all its blocks
};

class BlockTable {
 public:
  // Copies the first `length` tokens of page `src` into page `dst` (on every layer).
  using PageCopy = std::function<void(int32_t src, int32_t dst, int64_t length)>;

  BlockTable(int64_t page_size, int64_t num_pages);

  int64_t page_size() const { return page_size_; }
  int64_t num_pages() const { return num_pages_; }
  int64_t free_pages() const { return static_cast<int64_t>(free_pages_.size()); }
  int64_t total_length() const;
  bool empty() const;
  bool has(int64_t seq_id) const { return seqs_.count(seq_id) != 0; }
  // The sequence (it must exist: callers check has() first and name the argument).
  const Sequence& sequence(int64_t seq_id) const;
  Sequence& sequence(int64_t seq_id);
  const Block& block(int32_t index) const { return blocks_[static_cast<size_t>(index)]; }
  // The sequence's blocks, root first.
  std::vector<int32_t> trace(const Sequence& seq) const;
  // The same into *out (its capacity reused).
  void trace(const Sequence& seq, std::vector<int32_t>* out) const;
  // Pages that appending `n` tokens to the sequence would take from the free list.
  int64_t pages_needed(const Sequence& seq, int64_t n) const;
  // Whether the sequence's last block may take new tokens (no fork shares it).
  bool appendable(const Sequence& seq) const { return block(seq.last_block).refs == 1; }

  void clear();
  void add(int64_t seq_id);
  void remove(int64_t seq_id);
  // `fork_pos` in [0, parent length] (-1: the whole parent).
  void fork(int64_t parent_id, int64_t child_id, int64_t fork_pos, const PageCopy& copy);
  // Drops the last `n` tokens (0 <= n <= length).
  void pop(int64_t seq_id, int64_t n, const PageCopy& copy);
  // Grows the sequence's last block by `n` tokens, taking pages as needed
  // (the caller checked pages_needed() against free_pages()).
  void reserve(Sequence& seq, int64_t n);

 private:
  int32_t take_page();
  int32_t take_block();
  void release_block(int32_t index);
  void split_for_fork(Sequence& parent, int32_t forked, int32_t child, int64_t fork_pos, int64_t offset,
                      const PageCopy& copy);

  int64_t page_size_;
  int64_t num_pages_;
  std::vector<int32_t> free_pages_;  // taken from the back
  std::vector<Block> blocks_;
  std::vector<int32_t> free_blocks_;  // taken from the back
  std::unordered_map<int64_t, Sequence> seqs_;
};

}  // namespace kv
}  // namespace relax
}  // namespace graphrt

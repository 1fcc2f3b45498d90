#include "backends/relax/kv_cache/block_table.h"

#include <algorithm>
#include <string>

#include "graphrt/error.h"

namespace graphrt {
namespace relax {
namespace kv {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

Error internal(const std::string& message) { return Error(ErrorKind::kInternal, "KV cache: " + message); }

}  // namespace

BlockTable::BlockTable(int64_t page_size, int64_t num_pages) : page_size_(page_size), num_pages_(num_pages) {
  clear();
}

void BlockTable::clear() {
  seqs_.clear();
  blocks_.clear();
  free_blocks_.clear();
  free_pages_.clear();
  free_pages_.reserve(static_cast<size_t>(num_pages_));
  for (int64_t p = num_pages_ - 1; p >= 0; --p) free_pages_.push_back(static_cast<int32_t>(p));
}

int64_t BlockTable::total_length() const {
  int64_t total = 0;
  for (const auto& entry : seqs_) total += entry.second.length;
  return total;
}

bool BlockTable::empty() const {
  return seqs_.empty() && free_blocks_.size() == blocks_.size() && free_pages() == num_pages_;
}

const Sequence& BlockTable::sequence(int64_t seq_id) const {
  auto it = seqs_.find(seq_id);
  if (it == seqs_.end()) throw internal("sequence " + std::to_string(seq_id) + " is not in the cache");
  return it->second;
}

Sequence& BlockTable::sequence(int64_t seq_id) {
  return const_cast<Sequence&>(static_cast<const BlockTable*>(this)->sequence(seq_id));
}

std::vector<int32_t> BlockTable::trace(const Sequence& seq) const {
  std::vector<int32_t> blocks;
  trace(seq, &blocks);
  return blocks;
}

void BlockTable::trace(const Sequence& seq, std::vector<int32_t>* out) const {
  out->clear();
  for (int32_t b = seq.last_block; b != -1; b = block(b).parent) out->push_back(b);
  std::reverse(out->begin(), out->end());
}

int64_t BlockTable::pages_needed(const Sequence& seq, int64_t n) const {
  const Block& last = block(seq.last_block);
  const int64_t target = ceil_div(last.length + n, page_size_);
  return std::max<int64_t>(0, target - static_cast<int64_t>(last.pages.size()));
}

int32_t BlockTable::take_page() {
  if (free_pages_.empty()) throw Error(ErrorKind::kResourceExhausted, "KV cache: no free page left");
  const int32_t page = free_pages_.back();
  free_pages_.pop_back();
  return page;
}

int32_t BlockTable::take_block() {
  if (!free_blocks_.empty()) {
    const int32_t index = free_blocks_.back();
    free_blocks_.pop_back();
    blocks_[static_cast<size_t>(index)] = Block();
    return index;
  }
  blocks_.emplace_back();
  return static_cast<int32_t>(blocks_.size() - 1);
}

void BlockTable::release_block(int32_t index) {
  for (int32_t page : block(index).pages) free_pages_.push_back(page);
  free_blocks_.push_back(index);
}

void BlockTable::add(int64_t seq_id) {
  if (has(seq_id)) throw internal("sequence " + std::to_string(seq_id) + " is already in the cache");
  const int32_t b = take_block();
  blocks_[static_cast<size_t>(b)].refs = 1;
  seqs_[seq_id] = Sequence{b, 0};
}

void BlockTable::remove(int64_t seq_id) {
  const Sequence seq = sequence(seq_id);
  int32_t b = seq.last_block;
  while (b != -1 && block(b).refs == 1) {
    const int32_t parent = block(b).parent;
    release_block(b);
    b = parent;
  }
  if (b != -1) --blocks_[static_cast<size_t>(b)].refs;
  seqs_.erase(seq_id);
}

void BlockTable::fork(int64_t parent_id, int64_t child_id, int64_t fork_pos, const PageCopy& copy) {
  if (has(child_id)) throw internal("sequence " + std::to_string(child_id) + " is already in the cache");
  Sequence& parent = sequence(parent_id);
  if (fork_pos == -1) fork_pos = parent.length;
  if (fork_pos < 0 || fork_pos > parent.length) throw internal("fork position out of range");
  if (fork_pos % page_size_ != 0 && free_pages_.empty())
    throw Error(ErrorKind::kResourceExhausted, "KV cache: no free page left for the forked partial page");
  if (fork_pos == parent.length && fork_pos % page_size_ == 0 && block(parent.last_block).length > 0) {
    // The parent goes on in a new empty block, so that the forked one stays shared.
    const int32_t next = take_block();
    Block& nb = blocks_[static_cast<size_t>(next)];
    nb.start_pos = parent.length;
    nb.parent = parent.last_block;
    nb.refs = 1;
    parent.last_block = next;
  }
  const int32_t child = take_block();
  const std::vector<int32_t> blocks = trace(parent);
  int64_t offset = fork_pos;  // within the block the fork falls in
  for (int32_t b : blocks) {
    if (b != blocks.back() && block(b).length <= offset) {
      offset -= block(b).length;
      continue;
    }
    split_for_fork(parent, b, child, fork_pos, offset, copy);
    break;
  }
  int32_t length = 0;
  for (int32_t b = child; b != -1; b = block(b).parent) length += block(b).length;
  ++blocks_[static_cast<size_t>(child)].refs;
  seqs_[child_id] = Sequence{child, length};
}

// The fork falls `offset` tokens into block `forked`: the child continues
// from the whole pages before that point (split off into a shared block when
// the fork is not at the block's start) and copies the partial page.
void BlockTable::split_for_fork(Sequence& /*parent*/, int32_t forked, int32_t child, int64_t fork_pos,
                                int64_t offset, const PageCopy& copy) {
  const int64_t in_page = offset % page_size_;
  const int64_t moved = offset - in_page;
  const int64_t moved_pages = moved / page_size_;
  if (moved_pages == 0) {
    const int32_t shared = block(forked).parent;
    if (shared != -1) ++blocks_[static_cast<size_t>(shared)].refs;
    blocks_[static_cast<size_t>(child)].parent = shared;
  } else {
    const int32_t shared = take_block();
    Block& s = blocks_[static_cast<size_t>(shared)];
    Block& f = blocks_[static_cast<size_t>(forked)];
    s.parent = f.parent;
    f.parent = shared;
    blocks_[static_cast<size_t>(child)].parent = shared;
    s.refs = 2;
    s.pages.assign(f.pages.begin(), f.pages.begin() + moved_pages);
    f.pages.erase(f.pages.begin(), f.pages.begin() + moved_pages);
    s.start_pos = f.start_pos;
    f.start_pos += static_cast<int32_t>(moved);
    s.length = static_cast<int32_t>(moved);
    f.length -= static_cast<int32_t>(moved);
  }
  Block& c = blocks_[static_cast<size_t>(child)];
  c.start_pos = static_cast<int32_t>(fork_pos - in_page);
  c.length = static_cast<int32_t>(in_page);
  if (in_page > 0) {
    const int32_t src = block(forked).pages[0];
    const int32_t dst = take_page();
    blocks_[static_cast<size_t>(child)].pages.push_back(dst);
    copy(src, dst, in_page);
  }
}

void BlockTable::pop(int64_t seq_id, int64_t n, const PageCopy& copy) {
  Sequence& seq = sequence(seq_id);
  if (n < 0 || n > seq.length) throw internal("pop length out of range");
  int32_t b = seq.last_block;
  while (n > 0 && b != -1 && block(b).refs == 1) {
    Block& blk = blocks_[static_cast<size_t>(b)];
    if (n > blk.length) {
      n -= blk.length;
      seq.length -= blk.length;
      const int32_t parent = blk.parent;
      release_block(b);
      b = parent;
      seq.last_block = b;
      continue;
    }
    const size_t keep = static_cast<size_t>(ceil_div(blk.length - n, page_size_));
    while (blk.pages.size() > keep) {
      free_pages_.push_back(blk.pages.back());
      blk.pages.pop_back();
    }
    seq.length -= static_cast<int32_t>(n);
    blk.length -= static_cast<int32_t>(n);
    n = 0;
  }
  if (n == 0) return;
  // The tokens left to drop lie in blocks other sequences share: continue
  // the sequence as a fork of itself at the new length.
  const int64_t temp = -1 - seq_id;
  if (has(temp)) throw internal("the temporary sequence id of a pop is in use");
  fork(seq_id, temp, seq.length - n, copy);
  remove(seq_id);
  seqs_[seq_id] = seqs_[temp];
  seqs_.erase(temp);
}

void BlockTable::reserve(Sequence& seq, int64_t n) {
  Block& last = blocks_[static_cast<size_t>(seq.last_block)];
  const size_t target = static_cast<size_t>(ceil_div(last.length + n, page_size_));
  // Room for every page of the cache at the first growth: a decode taking a new page then
  // never reallocates the list (a block cannot hold more pages than there are).
  if (last.pages.capacity() < target) last.pages.reserve(std::max(target, static_cast<size_t>(num_pages_)));
  while (last.pages.size() < target) {
    const int32_t page = take_page();
    blocks_[static_cast<size_t>(seq.last_block)].pages.push_back(page);
  }
  blocks_[static_cast<size_t>(seq.last_block)].length += static_cast<int32_t>(n);
}

}  // namespace kv
}  // namespace relax
}  // namespace graphrt

// tvm::ffi::Map<K, V>: a minimal insertion-ordered map for deploy code's own bookkeeping.
// It does not cross calls (graphrt's exports take and return no maps).
#ifndef TVM_FFI_CONTAINER_MAP_H_
#define TVM_FFI_CONTAINER_MAP_H_

#include <tvm/ffi/error.h>
#include <tvm/ffi/optional.h>

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

namespace tvm {
namespace ffi {

template <typename K, typename V>
class Map {
 public:
  using value_type = std::pair<K, V>;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  Map() = default;
  Map(std::initializer_list<value_type> items) {
    for (const value_type& item : items) Set(item.first, item.second);
  }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  size_t count(const K& key) const { return find(key) != items_.end() ? 1 : 0; }
  Optional<V> Get(const K& key) const {
    const_iterator it = find(key);
    if (it == items_.end()) return Optional<V>();
    return Optional<V>(it->second);
  }
  const V& at(const K& key) const {
    const_iterator it = find(key);
    if (it == items_.end()) TVM_FFI_THROW(KeyError) << "key not in Map";
    return it->second;
  }
  const V& operator[](const K& key) const { return at(key); }
  void Set(const K& key, V value) {
    for (value_type& item : items_) {
      if (item.first == key) {
        item.second = std::move(value);
        return;
      }
    }
    items_.emplace_back(key, std::move(value));
  }
  void erase(const K& key) {
    const_iterator it = find(key);
    if (it != items_.end()) items_.erase(it);
  }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  const_iterator find(const K& key) const {
    for (const_iterator it = items_.begin(); it != items_.end(); ++it)
      if (it->first == key) return it;
    return items_.end();
  }

 private:
  std::vector<value_type> items_;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_MAP_H_

// Model::share_params: graph factories of one model at several batch sizes
// bind one decoded copy of their params instead of one each: the first
// factory's arrays, compared byte for byte with the others'; each factory's
// own copy is dropped through its TVM-compatible face (remove_params).
#include <cstring>

#include "model_state.h"

namespace graphrt {

namespace {

bool is_factory_model(const Model::State& s) {
  return s.kind == ModelKind::kGraph && !s.three_file;
}

// The factory's decoded arrays themselves: nothing is re-serialised or decoded again.
ParamList factory_params(const Model::State& s) { return graph_factory_info(s.root).params; }

bool same_array(const NDArray& a, const NDArray& b) {
  const DLTensor* x = a.handle();
  const DLTensor* y = b.handle();
  if (a.shape() != b.shape() || x->dtype.code != y->dtype.code || x->dtype.bits != y->dtype.bits ||
      x->dtype.lanes != y->dtype.lanes || a.nbytes() != b.nbytes())
    return false;
  return std::memcmp(static_cast<const char*>(x->data) + x->byte_offset,
                     static_cast<const char*>(y->data) + y->byte_offset, a.nbytes()) == 0;
}

bool same_params(const ParamList& a, const ParamList& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || !same_array(a[i].second, b[i].second)) return false;
  return true;
}

// `s` binds `params` from now on: its factory is replaced by one without params, and the
// executor made at load (over the factory's own copy) goes.
void bind_shared(Model::State& s, std::shared_ptr<const ParamList> params) {
  s.graph_json = graph_factory_info(s.root).graph_json;
  s.root = call_function(s.root->require_function("remove_params"), ArgList()).as_module();
  s.shared_params = std::move(params);
  std::lock_guard<std::mutex> lock(s.first_mutex);
  s.first_executor.reset();
}

}  // namespace

bool Model::share_params(Model& with) {
  State& me = *state_;
  State& other = *with.state_;
  if (!is_factory_model(me) || !is_factory_model(other)) return false;
  if (!other.shared_params) bind_shared(other, std::make_shared<const ParamList>(factory_params(other)));
  if (&me == &other) return true;
  if (me.shared_params) return me.shared_params == other.shared_params;
  if (!same_params(factory_params(me), *other.shared_params)) return false;
  bind_shared(me, other.shared_params);
  return true;
}

}  // namespace graphrt

// graphrt/value.h through libgraphrt's public API: a Runner's structured result
// against TVM's own outputs (the nested tuple of relax_tuple_io of both ABIs, a
// graph's three outputs), shapes and tuples made by TVM's constructors, and the
// reader's limits.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fixture_cases.h"
#include "graphrt/registry.h"
#include "graphrt/session.h"
#include "graphrt/value.h"
#include "test_support.h"

namespace {

graphrt::NDArray array_of(const graphrt_apps::NpyArray& a) {
  graphrt::NDArray out = graphrt::NDArray::empty(a.shape, a.dtype, graphrt::cpu());
  out.copy_from_bytes(a.data.data(), a.data.size());
  return out;
}

void expect_equal(const graphrt::Value& got, const std::string& npy) {
  const graphrt_apps::NpyArray want = graphrt_test::read_npy(graphrt_test::fixture_path(npy));
  ASSERT_EQ(graphrt::Value::Kind::kTensor, got.kind) << npy;
  EXPECT_EQ(want.shape, got.tensor.shape()) << npy;
  ASSERT_EQ(got.tensor.nbytes(), want.data.size()) << npy;
  EXPECT_EQ(0, std::memcmp(got.tensor->data, want.data.data(), want.data.size())) << npy;
}

graphrt::RetValue call_global(const char* name, std::vector<graphrt::RetValue> args) {
  return graphrt::call_with_values(graphrt::registry_get(name), args);
}

graphrt::RetValue int_value(int64_t v) {
  graphrt::RetValue r;
  r.set_int(v);
  return r;
}

// relax_tuple_io returns (s, (m, r)); case.json's output paths [0], [1, 0], [1, 1] name
// output_0..2.npy, TVM's own results (tolerance 0).
TEST(Value, RelaxRunnerResultIsTheNestedTupleTvmReturned) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt::Session session(graphrt::runtime(), graphrt::cpu());
  for (const std::string dir : {"relax/relax_tuple_io", "relax-ffi/relax_tuple_io"}) {
    SCOPED_TRACE(dir);
    std::shared_ptr<graphrt::Model> model = session.load({graphrt_test::fixture_path(dir + "/deploy_relax.so"), "", "", ""});
    std::unique_ptr<graphrt::Runner> runner = model->runner();
    EXPECT_THROW(runner->result(), graphrt::Error);  // before any run
    for (const char* name : {"x", "y"}) {
      const graphrt::NDArray in = array_of(graphrt_test::read_npy(graphrt_test::fixture_path(dir + "/input_" + name + ".npy")));
      runner->set_input(name, in.handle());
    }
    runner->run();
    const graphrt::Value result = runner->result();
    EXPECT_EQ("tuple[tensor, tuple[tensor, tensor]]", result.structure());
    ASSERT_EQ(2u, result.items.size());
    expect_equal(result.items[0], dir + "/output_0.npy");
    ASSERT_EQ(2u, result.items[1].items.size());
    expect_equal(result.items[1].items[0], dir + "/output_1.npy");
    expect_equal(result.items[1].items[1], dir + "/output_2.npy");
    // output(i) is the i-th tensor depth first, the same arrays.
    ASSERT_EQ(3, runner->num_outputs());
    EXPECT_EQ(result.items[1].items[1].tensor.handle(), runner->output(2).handle());
    // The result handed to C as one value and read back is the same structure.
    const graphrt::Value again = graphrt::Value::from(result.to_packed());
    EXPECT_EQ(result.structure(), again.structure());
    EXPECT_EQ(result.items[1].items[0].tensor.handle(), again.items[1].items[0].tensor.handle());
  }
}

// A graph's outputs as a tuple of tensors: multi_io's three, against TVM's.
TEST(Value, GraphRunnerResultIsATupleOfItsOutputs) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt::Session session(graphrt::runtime(), graphrt::cpu());
  std::shared_ptr<graphrt::Model> model = session.load({graphrt_test::fixture_path("multi_io/deploy_factory.so"), "", "", ""});
  std::unique_ptr<graphrt::Runner> runner = model->runner();
  for (const graphrt::TensorSpec& in : model->function().inputs)
    runner->set_input(in.name, array_of(graphrt_test::read_npy(graphrt_test::fixture_path("multi_io/input_" + in.name + ".npy"))).handle());
  runner->run();
  const graphrt::Value result = runner->result();
  EXPECT_EQ("tuple[tensor, tensor, tensor]", result.structure());
  for (size_t i = 0; i < result.items.size(); ++i) expect_equal(result.items[i], "multi_io/output_" + std::to_string(i) + ".npy");
  // TVM's by-name accessors read the same tuple once it is a packed value (TVM's faces).
  const graphrt::RetValue packed = result.to_packed();
  EXPECT_EQ(3, call_global("runtime.ArraySize", {packed}).as_int());
  EXPECT_EQ(result.items[2].tensor.handle(), call_global("runtime.ArrayGetItem", {packed, int_value(2)}).as_ndarray().handle());
}

TEST(Value, ShapesAndMixedTuplesFromTvmsConstructors) {
  const graphrt::RetValue shape = call_global("runtime.ShapeTuple", {int_value(1), int_value(784)});
  const graphrt::Value s = graphrt::Value::from(shape);
  ASSERT_EQ(graphrt::Value::Kind::kShape, s.kind);
  EXPECT_EQ((std::vector<int64_t>{1, 784}), s.dims);
  EXPECT_EQ(784, call_global("runtime.GetShapeTupleElem", {shape, int_value(1)}).as_int());
  graphrt::RetValue text;
  text.set_string("hi");
  graphrt::RetValue half;
  half.set_float(0.5);
  const graphrt::Value t = graphrt::Value::from(call_global("runtime.Array", {shape, int_value(-3), half, text}));
  EXPECT_EQ("tuple[shape, int, float, string]", t.structure());
  EXPECT_EQ(-3, t.items[1].int_value);
  EXPECT_EQ(0.5, t.items[2].float_value);
  EXPECT_EQ("hi", t.items[3].string_value);
  EXPECT_TRUE(t.flatten().empty());
}

TEST(Value, WrongKindsAndIndicesAreErrorsOfTheirKind) {
  graphrt::RetValue device;
  device.set_device(graphrt::cpu());
  try {
    graphrt::Value::from(device);
    FAIL() << "a device is no value";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kTypeMismatch, e.kind());
  }
  const graphrt::RetValue shape = call_global("runtime.ShapeTuple", {int_value(2)});
  try {
    call_global("runtime.ArraySize", {shape});
    FAIL() << "a shape is no array";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kTypeMismatch, e.kind());
  }
  try {
    call_global("runtime.GetShapeTupleElem", {shape, int_value(1)});
    FAIL() << "index 1 of a shape of rank 1";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kOutOfRange, e.kind());
  }
}

// A tuple nested past the reader's limit is refused, not read by unbounded recursion.
TEST(Value, ATupleNestedPastTheLimitIsRefused) {
  graphrt::Value deep;
  deep.kind = graphrt::Value::Kind::kInt;
  for (size_t i = 0; i < graphrt::Value::kMaxDepth + 1; ++i) {
    graphrt::Value outer;
    outer.kind = graphrt::Value::Kind::kTuple;
    outer.items.push_back(std::move(deep));
    deep = std::move(outer);
  }
  const graphrt::RetValue packed = deep.to_packed();
  try {
    graphrt::Value::from(packed);
    FAIL() << "nested " << graphrt::Value::kMaxDepth + 1 << " deep";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kResourceExhausted, e.kind());
  }
}

}  // namespace

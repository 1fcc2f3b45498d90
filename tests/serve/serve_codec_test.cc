// The server's codecs without a server: every protocol datatype decoded from JSON and from
// binary data into the exact bytes a model reads, encoded back, config.json and the metrics page.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "graphrt/error.h"
#include "graphrt/float16.h"
#include "generation/generate_request.h"
#include "generation/text_generate_request.h"
#include "metrics/metrics.h"
#include "models/model_config.h"
#include "openai/openai_request.h"
#include "protocol/infer_request.h"
#include "protocol/infer_response.h"

using namespace graphrt_serve;

namespace {

InferRequest decode(const std::string& body, const std::string* header = nullptr) {
  return decode_rest_request(body.data(), body.size(), header);
}

std::string one(const std::string& datatype, const std::string& shape, const std::string& data) {
  return R"({"inputs":[{"name":"t","datatype":")" + datatype + R"(","shape":)" + shape + R"(,"data":)" + data +
         "}]}";
}

template <typename T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

std::string decoded(const std::string& datatype, const std::string& shape, const std::string& data) {
  InferRequest r = decode(one(datatype, shape, data));
  EXPECT_EQ(r.inputs.size(), 1u);
  return std::string(r.inputs[0].data(), r.inputs[0].size());
}

std::string error_of(const std::string& body) {
  try {
    decode(body);
  } catch (const graphrt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ServeDecode, EveryDatatypeFromJson) {
  EXPECT_EQ(decoded("BOOL", "[3]", "[true,false,true]"), std::string("\1\0\1", 3));
  EXPECT_EQ(decoded("UINT8", "[2]", "[0,255]"), bytes_of<uint8_t>({0, 255}));
  EXPECT_EQ(decoded("UINT16", "[2]", "[1,65535]"), bytes_of<uint16_t>({1, 65535}));
  EXPECT_EQ(decoded("UINT32", "[1]", "[4294967295]"), bytes_of<uint32_t>({4294967295u}));
  EXPECT_EQ(decoded("UINT64", "[1]", "[18446744073709551615]"),
            bytes_of<uint64_t>({std::numeric_limits<uint64_t>::max()}));
  EXPECT_EQ(decoded("INT8", "[2]", "[-128,127]"), bytes_of<int8_t>({-128, 127}));
  EXPECT_EQ(decoded("INT16", "[2]", "[-32768,32767]"), bytes_of<int16_t>({-32768, 32767}));
  EXPECT_EQ(decoded("INT32", "[2]", "[-2147483648,2147483647]"),
            bytes_of<int32_t>({std::numeric_limits<int32_t>::min(), 2147483647}));
  EXPECT_EQ(decoded("INT64", "[2]", "[-9223372036854775808,9223372036854775807]"),
            bytes_of<int64_t>({std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(decoded("FP16", "[2]", "[1.5,-2]"),
            bytes_of<uint16_t>({graphrt::float16_from_double(1.5), graphrt::float16_from_double(-2)}));
  EXPECT_EQ(decoded("BF16", "[1]", "[0.25]"), bytes_of<uint16_t>({graphrt::bfloat16_from_double(0.25)}));
  EXPECT_EQ(decoded("FP32", "[2]", "[0.1,3]"), bytes_of<float>({0.1f, 3.0f}));
  EXPECT_EQ(decoded("FP64", "[1]", "[0.1]"), bytes_of<double>({0.1}));
  EXPECT_EQ(decoded("BYTES", "[2]", R"(["ab",""])"), std::string("\2\0\0\0ab\0\0\0\0", 10));
  // Nested data of the shape's rank, and a scalar.
  EXPECT_EQ(decoded("INT32", "[2,2]", "[[1,2],[3,4]]"), bytes_of<int32_t>({1, 2, 3, 4}));
  EXPECT_EQ(decoded("INT32", "[]", "[7]"), bytes_of<int32_t>({7}));
  EXPECT_EQ(decoded("FP32", "[0,3]", "[]"), "");
}

TEST(ServeDecode, RangeAndTypeErrorsNameTensorAndField) {
  for (const char* body : {R"({"inputs":[{"name":"t","datatype":"UINT8","shape":[1],"data":[256]}]})",
                           R"({"inputs":[{"name":"t","datatype":"INT8","shape":[1],"data":[-129]}]})",
                           R"({"inputs":[{"name":"t","datatype":"UINT64","shape":[1],"data":[-1]}]})",
                           R"({"inputs":[{"name":"t","datatype":"INT32","shape":[1],"data":[1.5]}]})",
                           R"({"inputs":[{"name":"t","datatype":"BOOL","shape":[1],"data":[1]}]})",
                           R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":["1"]}]})",
                           R"({"inputs":[{"name":"t","datatype":"BYTES","shape":[1],"data":[1]}]})"}) {
    const std::string e = error_of(body);
    EXPECT_NE(e.find("tensor: t"), std::string::npos) << body << ": " << e;
    EXPECT_NE(e.find("field: data"), std::string::npos) << body << ": " << e;
  }
  EXPECT_NE(error_of(one("FP32", "[4611686018427387904,4]", "[1]")).find("overflows"), std::string::npos);
  EXPECT_NE(error_of(one("FP32", "[3]", "[1,2]")).find("holds 2 elements"), std::string::npos);
  EXPECT_NE(error_of(one("FP32", "[1]", "[1,2]")).find("more elements"), std::string::npos);
}

TEST(ServeDecode, StreamedAndTreeDataAgree) {
  // "datatype" before "data" streams the elements; after it, the tree path converts them.
  const std::string streamed = R"({"inputs":[{"name":"t","datatype":"INT16","shape":[2,2],"data":[[1,-2],[3,4]]}]})";
  const std::string tree = R"({"inputs":[{"data":[[1,-2],[3,4]],"name":"t","shape":[2,2],"datatype":"INT16"}]})";
  EXPECT_EQ(std::string(decode(streamed).inputs[0].data(), 8), bytes_of<int16_t>({1, -2, 3, 4}));
  EXPECT_EQ(std::string(decode(tree).inputs[0].data(), 8), bytes_of<int16_t>({1, -2, 3, 4}));
  // Several inputs, one streamed and one not, keep their own data.
  InferRequest two = decode(
      R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1],"data":[0.5]},)"
      R"({"data":[7],"name":"b","datatype":"INT64","shape":[1]}],"outputs":[{"name":"o","data":[1]}]})");
  EXPECT_EQ(std::string(two.inputs[0].data(), 4), bytes_of<float>({0.5f}));
  EXPECT_EQ(std::string(two.inputs[1].data(), 8), bytes_of<int64_t>({7}));
  // Element errors while streaming name the tensor, even before its name was read.
  EXPECT_NE(error_of(R"({"inputs":[{"datatype":"UINT8","data":[300],"name":"late","shape":[1]}]})").find("input 0"),
            std::string::npos);
  // Repeated keys cannot smuggle data past the checks.
  for (const char* body :
       {R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[1]}],"inputs":[]})",
        R"({"inputs":[{"name":"t","datatype":"FP32","shape":[2],"data":[1],"data":[2]}]})",
        R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[1],"datatype":"INT32"}]})",
        R"({"inputs":[{"name":"t","datatype":"FP32","shape":[2],"data":[1,{"x":2}]}]})",
        R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[[[1]]]}]})",
        R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[1,2]}]})",
        R"({"inputs":[5,{"name":"t","datatype":"FP32","shape":[1],"data":[1]}]})"}) {
    EXPECT_NE(error_of(body), "") << body;
  }
}

TEST(ServeDecode, ExactNumbersAndTheReadersRefusals) {
  // Elements are parsed exactly: int64's ends, and a double's nearest value narrowed to FP32.
  EXPECT_EQ(decoded("INT64", "[1]", "[-9223372036854775808]"), bytes_of<int64_t>({INT64_MIN}));
  EXPECT_EQ(decoded("FP32", "[3]", "[1e-3, -0.0, 3.4028234663852886e38]"),
            bytes_of<float>({0.001f, -0.0f, 3.4028234663852886e38f}));
  EXPECT_EQ(decoded("FP64", "[1]", "[5e-324]"), bytes_of<double>({5e-324}));
  // Data before its datatype is read once the datatype is known, with the same checks.
  EXPECT_EQ(std::string(decode(R"({"inputs":[{"data":[[1.5],[2]],"shape":[2,1],"datatype":"FP64","name":"t"}]})")
                            .inputs[0].data(), 16),
            bytes_of<double>({1.5, 2.0}));
  const std::string late = error_of(R"({"inputs":[{"data":[1,2],"shape":[1],"datatype":"FP32","name":"late"}]})");
  EXPECT_NE(late.find("tensor: late"), std::string::npos) << late;
  EXPECT_NE(late.find("more elements"), std::string::npos) << late;
  // A repeated member anywhere, malformed text and a number past double's range: the body's fault,
  // named by its byte offset (a repeated member also by its name).
  const std::string repeated = error_of(R"({"inputs":[],"parameters":{"a":1,"a":2}})");
  EXPECT_NE(repeated.find("given twice in one object"), std::string::npos) << repeated;
  EXPECT_NE(repeated.find("field: a"), std::string::npos) << repeated;
  for (const char* body : {R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[1e999]}]})",
                           R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[01]}]})",
                           R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[1]}]} x)",
                           R"({"inputs":[{"name":"t","datatype":"FP32","shape":[1],"data":[1])"}) {
    const std::string e = error_of(body);
    EXPECT_NE(e.find("not valid JSON"), std::string::npos) << body << ": " << e;
    EXPECT_NE(e.find("field: body"), std::string::npos) << body << ": " << e;
    EXPECT_NE(e.find("offset: "), std::string::npos) << body << ": " << e;
  }
  // The repository extension's bodies.
  EXPECT_TRUE(decode_index_request(R"({"ready": true})"));
  EXPECT_FALSE(decode_index_request(""));
  EXPECT_THROW(decode_index_request(R"({"ready": 1})"), graphrt::Error);
  EXPECT_THROW(decode_index_request(R"({"ready": true, "ready": false})"), graphrt::Error);
  EXPECT_NO_THROW(check_load_request(R"({"parameters": {"x": "y"}})"));
  EXPECT_THROW(check_load_request(R"({"parameters": {"file:1/model.so": "..."}})"), graphrt::Error);
}

TEST(ServeDecode, BinaryDataAndLyingLengths) {
  const std::string header =
      R"({"inputs":[{"name":"a","datatype":"INT16","shape":[2],"parameters":{"binary_data_size":4}},)"
      R"({"name":"b","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":7}}],)"
      R"("outputs":[{"name":"o","parameters":{"binary_data":true}}],"parameters":{"binary_data_output":false}})";
  const std::string binary = bytes_of<int16_t>({-1, 2}) + std::string("\3\0\0\0xyz", 7);
  const std::string body = header + binary;
  const std::string hlen = std::to_string(header.size());
  InferRequest r = decode(body, &hlen);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(std::string(r.inputs[0].data(), r.inputs[0].size()), bytes_of<int16_t>({-1, 2}));
  EXPECT_EQ(r.inputs[0].data(), body.data() + header.size());  // a view, not a copy
  EXPECT_EQ(std::string(r.inputs[1].data(), r.inputs[1].size()), std::string("\3\0\0\0xyz", 7));
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].binary, 1);
  EXPECT_FALSE(r.binary_output);
  for (const std::string& bad : {std::to_string(header.size() + 1), std::to_string(body.size() + 1), std::string("x"),
                                 std::string(""), std::string("99999999999999999999")}) {
    EXPECT_THROW(decode(body, &bad), graphrt::Error) << bad;
  }
  const std::string short_body = body.substr(0, body.size() - 1);
  EXPECT_THROW(decode(short_body, &hlen), graphrt::Error);
  const std::string long_body = body + "!";
  EXPECT_THROW(decode(long_body, &hlen), graphrt::Error);
  // A BYTES element whose length runs past its tensor's data.
  std::string lying = header + bytes_of<int16_t>({-1, 2}) + std::string("\x09\0\0\0xyz", 7);
  EXPECT_THROW(decode(lying, &hlen), graphrt::Error);
}

OutputTensor owned_output(const std::string& name, Datatype type, std::vector<int64_t> shape, std::string bytes) {
  OutputTensor t;
  t.name = name;
  t.datatype = type;
  t.shape = std::move(shape);
  t.owned = std::move(bytes);
  return t;
}

TEST(ServeEncode, JsonValuesRoundTripAndBinaryOutputs) {
  InferRequest req;
  req.outputs.push_back(RequestedOutput{"b", 1});
  InferResponse resp;
  resp.model_name = "m";
  resp.model_version = "2";
  resp.has_id = true;
  resp.id = "q\"1";
  OutputTensor a = owned_output("a", Datatype::kFp32, {3}, bytes_of<float>({0.1f, -0.0f, 1e-45f}));
  OutputTensor b = owned_output("b", Datatype::kInt64, {1}, bytes_of<int64_t>({-5}));
  OutputTensor c = owned_output("c", Datatype::kBool, {2}, std::string("\1\0", 2));
  OutputTensor d = owned_output("d", Datatype::kFp32, {3}, bytes_of<float>({NAN, INFINITY, -INFINITY}));
  resp.outputs = {a, b, c, d};
  size_t json_size = 0;
  const std::string body = encode_rest_response(resp, req, &json_size);
  const std::string json = body.substr(0, json_size);
  EXPECT_EQ(json,
            R"({"model_name":"m","model_version":"2","id":"q\"1","outputs":[)"
            R"({"name":"a","datatype":"FP32","shape":[3],"data":[0.1,-0.0,1e-45]},)"
            R"({"name":"b","datatype":"INT64","shape":[1],"parameters":{"binary_data_size":8}},)"
            R"({"name":"c","datatype":"BOOL","shape":[2],"data":[true,false]},)"
            R"({"name":"d","datatype":"FP32","shape":[3],"data":[NaN,Infinity,-Infinity]}]})");
  EXPECT_EQ(body.substr(json_size), bytes_of<int64_t>({-5}));
  EXPECT_EQ(json_string(std::string("a\x01\xff\xc3\xa9", 5)), "\"a\\u0001\\ufffd\xc3\xa9\"");
}

// A model's outputs reach the encoder as views of the run's memory (unaligned for all the
// encoder knows): encoded straight from them, the body is the one owned copies give.
TEST(ServeEncode, OutputViewsEncodeAsTheirBytes) {
  const std::string floats = bytes_of<float>({1.5f, -2.0f});
  const std::string ints = bytes_of<int32_t>({7, -8, 9});
  const std::string memory = "x" + floats + ints;  // floats at an odd address
  InferRequest req;
  req.outputs.push_back(RequestedOutput{"f", 0});
  req.outputs.push_back(RequestedOutput{"i", 1});
  InferResponse owned, viewed;
  owned.outputs = {owned_output("f", Datatype::kFp32, {2}, floats), owned_output("i", Datatype::kInt32, {3}, ints)};
  viewed.outputs = {owned_output("f", Datatype::kFp32, {2}, ""), owned_output("i", Datatype::kInt32, {3}, "")};
  viewed.outputs[0].view = memory.data() + 1;
  viewed.outputs[0].view_size = floats.size();
  viewed.outputs[1].view = memory.data() + 1 + floats.size();
  viewed.outputs[1].view_size = ints.size();
  size_t owned_json = 0, viewed_json = 0;
  const std::string body = encode_rest_response(viewed, req, &viewed_json);
  EXPECT_EQ(body, encode_rest_response(owned, req, &owned_json));
  EXPECT_EQ(viewed_json, owned_json);
  EXPECT_NE(body.find(R"("data":[1.5,-2])"), std::string::npos) << body;
  EXPECT_EQ(body.substr(viewed_json), ints);
}

TEST(ServeConfig, KnownKeysAndMistakes) {
  ModelConfig c = parse_model_config(
      R"({"instance_count":2,"max_queue_size":3,"timeout_us":5,"function":"f",)"
      R"("input":[{"name":"x","datatype":"FP32","shape":[-1,4]}],"output":[{"name":"y"}]})");
  EXPECT_EQ(c.instance_count, 2);
  EXPECT_EQ(c.max_queue_size, 3);
  EXPECT_EQ(c.function, "f");
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_EQ(c.inputs[0].shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(c.outputs[0].name, "y");
  for (const char* bad : {"{", "[]", R"({"instance_cont":2})", R"({"instance_count":0})",
                          R"({"input":[{"name":"x","datatype":"FP33"}]})", R"({"input":[{"nam":"x"}]})"}) {
    EXPECT_THROW(parse_model_config(bad), graphrt::Error) << bad;
  }
}

namespace {

// A config's refusal: its message and field.
std::pair<std::string, std::string> config_refusal(const std::string& text) {
  try {
    parse_model_config(text);
  } catch (const graphrt::Error& e) {
    return {e.what(), e.context_value("field")};
  }
  return {"accepted", ""};
}

}  // namespace

// Malformed text is named with its offset; a key given twice (a config's typo) is refused and
// named, at the top level, in the generation section and in a tensor entry.
TEST(ServeConfig, MalformedTextAndRepeatedKeys) {
  const auto malformed = config_refusal(R"({"instance_count": 2,})");
  EXPECT_NE(malformed.first.find("config.json is not valid JSON"), std::string::npos) << malformed.first;
  EXPECT_NE(malformed.first.find("at byte 21"), std::string::npos) << malformed.first;
  const std::pair<const char*, const char*> repeated[] = {
      {R"({"instance_count": 2, "instance_count": 3})", "instance_count"},
      {R"({"generation": {"page_size": 16, "page_size": 32}})", "generation.page_size"},
      {R"({"input": [{"name": "x", "name": "y"}]})", "input"},
  };
  for (const auto& [text, field] : repeated) {
    const auto refusal = config_refusal(text);
    EXPECT_NE(refusal.first.find("given twice in one object"), std::string::npos) << text << ": " << refusal.first;
    EXPECT_EQ(refusal.second, field) << text;
  }
  const ModelConfig c = parse_model_config(R"({"generation": {"page_size": 32, "create_cache": "f"}, "name": "m"})");
  EXPECT_EQ(c.generation.model.page_size, 32);
  EXPECT_EQ(c.generation.keys, (std::vector<std::string>{"page_size", "create_cache"}));
}

TEST(ServeMetrics, TextFormat) {
  Metrics m;
  auto mm = m.for_model("a\"b", "1");
  mm->request_success += 2;
  mm->compute_infer_ns += 1500;
  EXPECT_EQ(m.for_model("a\"b", "1"), mm);
  const std::string page = m.render();
  EXPECT_NE(page.find("graphrt_inference_request_success_total{model=\"a\\\"b\",version=\"1\"} 2\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("graphrt_inference_compute_infer_duration_seconds_total{model=\"a\\\"b\",version=\"1\"} "
                      "0.000001500\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("# TYPE graphrt_inference_count_total counter"), std::string::npos);
}

namespace {

// The decoder's refusal of `body`: its message and field.
std::pair<std::string, std::string> generate_refusal(const std::string& body) {
  try {
    decode_generate_request(body);
  } catch (const graphrt::Error& e) {
    return {e.what(), e.context_value("field")};
  }
  return {"accepted", ""};
}

}  // namespace

// A key given twice in one object is refused (the tree would keep the last silently), at the top
// level and inside parameters; the same key in two objects is not a repetition.
TEST(ServeGenerateDecode, RepeatedKeysAreRefused) {
  for (const char* body : {R"({"input_ids": [1], "input_ids": [2]})",
                           R"({"input_ids": [1], "parameters": {"max_tokens": 2, "max_tokens": 3}})",
                           R"({"id": "a", "input_ids": [1], "id": "b"})"}) {
    const auto refusal = generate_refusal(body);
    EXPECT_NE(refusal.first.find("given twice in one object"), std::string::npos) << body << ": " << refusal.first;
    EXPECT_FALSE(refusal.second.empty()) << body;
  }
  EXPECT_EQ(generate_refusal(R"({"input_ids": [1], "parameters": {"temperature": 1, "x": {"temperature": 2}}})").first
                .find("twice"), std::string::npos);
  const GenerateRequest r = decode_generate_request(R"({"input_ids": [5, 6], "parameters": {"max_tokens": 3}})");
  EXPECT_EQ(r.input_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(r.max_tokens, 3);
}

// A body over the limit is refused by its size before it is parsed (a 40 MB body of token ids
// never becomes a JSON tree of hundreds of MB): here one that is not even JSON past the limit.
// An array longer than the limit is refused while it is read.
TEST(ServeGenerateDecode, SizeLimitsHoldBeforeTheTreeIsBuilt) {
  std::string big = R"({"input_ids": [)";
  while (big.size() <= kMaxGenerateBodyBytes) big += "1,";
  const auto too_big = generate_refusal(big);  // unterminated: a parse would say "not JSON"
  EXPECT_NE(too_big.first.find("a generate request takes at most"), std::string::npos) << too_big.first;
  EXPECT_EQ(too_big.second, "body");

  std::string many = R"({"input_ids": [)";
  for (size_t i = 0; i <= kMaxGenerateTokenIds; ++i) many += "1,";
  many.back() = ']';
  many += "}";
  ASSERT_LE(many.size(), kMaxGenerateBodyBytes);
  const auto too_many = generate_refusal(many);
  EXPECT_NE(too_many.first.find("an array of more than 1048576 elements"), std::string::npos) << too_many.first;
  EXPECT_EQ(too_many.second, "input_ids");
}

namespace {

// The OpenAI decoder's refusal of `body`: its message and field.
std::pair<std::string, std::string> openai_refusal(const std::string& body,
                                                   OpenAIEndpoint endpoint = OpenAIEndpoint::kChat) {
  try {
    decode_openai_request(body, endpoint);
  } catch (const graphrt::Error& e) {
    return {e.what(), e.context_value("field")};
  }
  return {"accepted", ""};
}

std::pair<std::string, std::string> text_generate_refusal(const std::string& body) {
  try {
    decode_text_generate_request(body);
  } catch (const graphrt::Error& e) {
    return {e.what(), e.context_value("field")};
  }
  return {"accepted", ""};
}

}  // namespace

// A chat body as clients send it: messages (content as a string and as text parts), the fields
// the server reads itself, and the sampling fields passed on as written.
TEST(ServeOpenAIDecode, ChatBody) {
  const OpenAIRequest r = decode_openai_request(
      R"({"model": "chat", "messages": [{"role": "system", "content": "Be brief."},)"
      R"( {"role": "user", "name": "u", "content": [{"type": "text", "text": "Hi, "}, {"text": "you", "type": "text"}]},)"
      R"( {"role": "assistant", "content": null}], "stream": true, "stream_options": {"include_usage": true},)"
      R"( "n": 2, "temperature": 0.5, "stop": ["\n"], "max_completion_tokens": 7, "logprobs": true,)"
      R"( "response_format": {"type": "text"}, "tools": [], "user": "me"})",
      OpenAIEndpoint::kChat);
  EXPECT_EQ(r.model, "chat");
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(*r.messages[0].content, "Be brief.");
  EXPECT_EQ(*r.messages[1].content, "Hi, you");
  EXPECT_FALSE(r.messages[2].content.has_value());
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.n, 2);
  EXPECT_EQ(r.sampling_json, R"({"temperature":0.5,"stop":["\n"],"max_tokens":7,"logprobs":true})");
  const graphrt::GenerationConfig config = openai_generation_config(r, {}, 100);
  EXPECT_EQ(config.temperature, 0.5);
  EXPECT_EQ(config.max_tokens, 7);
  EXPECT_EQ(config.stop, (std::vector<std::string>{"\n"}));

  const OpenAIRequest c =
      decode_openai_request(R"({"prompt": ["Once"], "logprobs": 2, "max_tokens": null})", OpenAIEndpoint::kCompletions);
  EXPECT_EQ(c.prompt, "Once");
  EXPECT_EQ(c.sampling_json, R"({"logprobs":true,"top_logprobs":2})");
}

// Malformed text is refused with its byte offset (and the top-level field it was met in); a
// member given twice in one object is refused by its path, as are two names of one limit.
TEST(ServeOpenAIDecode, MalformedTextAndRepeatedMembers) {
  const auto malformed = openai_refusal(R"({"messages": [{"role": "user", "content": "x"}, "n": 1})");
  EXPECT_NE(malformed.first.find("the request body is not valid JSON"), std::string::npos) << malformed.first;
  EXPECT_NE(malformed.first.find("at byte 51"), std::string::npos) << malformed.first;
  EXPECT_EQ(malformed.second, "messages");
  // Malformed text in a value of the wrong type is reported as malformed, not as the type.
  const auto in_wrong_type = openai_refusal(R"({"stream": [1,}, "messages": []})");
  EXPECT_NE(in_wrong_type.first.find("not valid JSON"), std::string::npos) << in_wrong_type.first;
  EXPECT_EQ(in_wrong_type.second, "stream");

  const std::pair<const char*, const char*> repeated[] = {
      {R"({"messages": [{"role": "user", "content": "x"}], "n": 1, "n": 2})", "n"},
      {R"({"messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "a", "content": "b"}]})",
       "messages[1].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a", "text": "b"}]}]})",
       "messages[0].content.text"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stream": true,)"
       R"( "stream_options": {"include_usage": true, "include_usage": true}})",
       "stream_options.include_usage"},
  };
  for (const auto& [body, field] : repeated) {
    const auto refusal = openai_refusal(body);
    EXPECT_NE(refusal.first.find("given twice in one object"), std::string::npos) << body << ": " << refusal.first;
    EXPECT_EQ(refusal.second, field) << body;
  }
  const auto two_limits =
      openai_refusal(R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 3, "max_tokens": 2})");
  EXPECT_NE(two_limits.first.find("one limit"), std::string::npos) << two_limits.first;
  EXPECT_EQ(two_limits.second, "max_tokens");
  // The same member in two objects is no repetition.
  EXPECT_EQ(openai_refusal(R"({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]})").first,
            "accepted");
}

// Each field's refusal names it (OpenAI's "param"), names are quoted and cut, and a body over the
// limit is refused before it is read.
TEST(ServeOpenAIDecode, FieldsAreNamedAndTheBodyIsBounded) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"messages": "hi"})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": [{"role": "robot", "content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user", "content": 3}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "mood": "x"}]})", "messages[0].mood"},
      {R"({"messages": [{"role": "user"}], "n": 17})", "n"},
      {R"({"messages": [{"role": "user"}], "n": 1.5})", "n"},
      {R"({"messages": [{"role": "user"}], "stream_options": {"include_usage": true}})", "stream_options"},
      {R"({"messages": [{"role": "user"}], "stream": true, "stream_options": {"x": 1}})", "stream_options.x"},
      {R"({"messages": [{"role": "user"}], "echo": false})", "echo"},
      {R"({"messages": [{"role": "user"}], "tools": [{}]})", "tools"},
      {R"({"messages": [{"role": "user"}], "response_format": {"type": "json_object"}})", "response_format"},
      {R"({"messages": [{"role": "user"}], "logprobs": 1})", "logprobs"},
      {R"({"messages": [{"role": "user"}], "model": 1})", "model"},
      {R"({"model": "m"})", "messages"},
  };
  for (const auto& [body, field] : bad) EXPECT_EQ(openai_refusal(body).second, field) << body;
  EXPECT_EQ(openai_refusal(R"({"prompt": "x", "logprobs": 6})", OpenAIEndpoint::kCompletions).second, "logprobs");
  EXPECT_EQ(openai_refusal(R"({"prompt": ["a", "b"]})", OpenAIEndpoint::kCompletions).second, "prompt");
  EXPECT_EQ(openai_refusal(R"({"prompt": "x", "top_logprobs": 1})", OpenAIEndpoint::kCompletions).second,
            "top_logprobs");

  // A name with a terminal's escape (\u001b in the text) and 300 more bytes.
  const std::string name = "\x1b[31m" + std::string(300, 'k');
  const auto hostile = openai_refusal(R"({"messages": [{"role": "user"}], "\u001b[31m)" + std::string(300, 'k') + R"(": 1})");
  EXPECT_EQ(hostile.second, graphrt::quote_untrusted(name));
  EXPECT_EQ(hostile.first.find('\x1b'), std::string::npos) << hostile.first;

  std::string big = R"({"prompt": ")";
  big.append(kMaxOpenAIBodyBytes, 'a');
  const auto too_big = openai_refusal(big, OpenAIEndpoint::kCompletions);  // unterminated too
  EXPECT_NE(too_big.first.find("an OpenAI request takes at most"), std::string::npos) << too_big.first;
}

// Triton's generate with text: repeated members refused and named as their fields are, malformed
// text with its offset, TensorRT-LLM's names mapped once each.
TEST(ServeTextGenerateDecode, RepeatedMembersMalformedTextAndAliases) {
  for (const auto& [body, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"text_input": "a", "text_input": "b"})", "text_input"},
           {R"({"text_input": "a", "parameters": {"temperature": 0, "temperature": 1}})", "temperature"}}) {
    const auto refusal = text_generate_refusal(body);
    EXPECT_NE(refusal.first.find("given twice in one object"), std::string::npos) << body << ": " << refusal.first;
    EXPECT_EQ(refusal.second, field) << body;
  }
  const auto aliases = text_generate_refusal(R"({"text_input": "a", "seed": 1, "parameters": {"random_seed": 2}})");
  EXPECT_NE(aliases.first.find("random_seed is given twice"), std::string::npos) << aliases.first;
  const auto malformed = text_generate_refusal(R"({"text_input": "a", "parameters": {"max_tokens": 2,}})");
  EXPECT_NE(malformed.first.find("at byte 51"), std::string::npos) << malformed.first;
  EXPECT_EQ(malformed.second, "parameters");

  const TextGenerateRequest r = decode_text_generate_request(
      R"({"id": "q", "text_input": "Hi", "stream": false, "stop_words": [ ], "bad_words": "", "beam_width": 1,)"
      R"( "parameters": {"end_id": 2, "return_log_probs": true, "max_tokens": 4, "stop_words": ["."]}})");
  EXPECT_EQ(r.id, "q");
  EXPECT_EQ(r.text_input, "Hi");
  EXPECT_TRUE(r.has_stream);
  EXPECT_EQ(r.sampling_json, R"({"stop_token_ids":[2],"logprobs":true,"max_tokens":4,"stop":["."]})");
  EXPECT_EQ(text_generate_refusal(R"({"text_input": "a", "beam_width": 2})").second, "beam_width");
  EXPECT_EQ(text_generate_refusal(R"({"text_input": "a", "end_id": "2"})").second, "end_id");
  EXPECT_EQ(text_generate_refusal(R"({"parameters": {}})").second, "text_input");
}

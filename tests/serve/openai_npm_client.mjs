// The official `openai` npm package (v5) against graphrt-serve: argv[2] the server's URL, argv[3]
// a JSON file of the fixture's cases. Prints one JSON object of what the client got.
import fs from "node:fs";
import OpenAI from "openai";

const [url, casePath] = process.argv.slice(2);
const c = JSON.parse(fs.readFileSync(casePath, "utf8"));
const client = new OpenAI({ baseURL: url + "/v1", apiKey: "unused", maxRetries: 0 });
const out = {};

const g = c.greedy_completions[0];
const completion = await client.completions.create({ model: "chat", prompt: g.prompt, max_tokens: g.max_tokens,
                                                    temperature: 0 });
out.completion = completion.choices[0].text;
out.usage = completion.usage;

const chat = await client.chat.completions.create({ model: "chat", messages: c.chat.messages,
                                                    max_tokens: c.chat.max_tokens, temperature: 0 });
out.chat = chat.choices[0].message.content;

let streamed = "";
let usage = null;
const stream = await client.chat.completions.create({ model: "chat", messages: c.chat.messages, stream: true,
                                                      stream_options: { include_usage: true },
                                                      max_tokens: c.chat.max_tokens, temperature: 0 });
for await (const chunk of stream) {
  if (chunk.choices.length) streamed += chunk.choices[0].delta.content ?? "";
  if (chunk.usage) usage = chunk.usage;
}
out.chat_stream = streamed;
out.chat_stream_usage = usage;

try {
  await client.completions.create({ model: "nope", prompt: "x" });
  out.not_found = null;
} catch (e) {
  out.not_found = { status: e.status, name: e.constructor.name, param: e.param, code: e.code };
}
try {
  await client.completions.create({ model: "chat", prompt: "x", temperature: -1 });
  out.bad = null;
} catch (e) {
  out.bad = { status: e.status, name: e.constructor.name, param: e.param };
}
console.log(JSON.stringify(out));

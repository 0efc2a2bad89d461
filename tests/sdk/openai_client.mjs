// tests/sdk/openai_client.mjs — the official OpenAI Node SDK (npm `openai`)
// used against the gateway as a client would use it. Prints one TAP line per
// check (no plan; gateway_sdk.t counts them) and `#` lines with details.
//
//   node openai_client.mjs NODE_MODULES_DIR SCENARIO
//
// The gateway's address and keys come from the environment:
//   SDK_BASE     http://127.0.0.1:PORT/v1
//   SDK_KEY      a key the gateway accepts (every role)
//   SDK_CHAT, SDK_EMBED, SDK_DOWN   model names: a chat role, the embedder,
//                and a role whose engine is down (503)
//   SDK_LIMITED  (scenario "keys") a key allowed the chat role only, with a
//                requests-per-minute limit of SDK_RPM
//
// Scenarios: "api" (models, chat, stream, tools, embeddings, responses and
// the error classes), "reuse" (100 sequential calls on one client: the
// number of TCP connections it opened, printed as `# connections=N`), "keys" (403 and 429 as the SDK's
// PermissionDeniedError and RateLimitError, with the rate-limit headers).
import { createRequire } from "module";
import diagnostics from "diagnostics_channel";

const [modules, scenario] = process.argv.slice(2);
const require = createRequire(modules.replace(/\/?$/, "/"));
const OpenAI = require("openai");
const env = process.env;
let n = 0;
const ok = (cond, name, detail) => {
	n++;
	console.log(`${cond ? "ok" : "not ok"} ${n} - ${name}`);
	if (!cond && detail !== undefined) console.log(`# ${String(detail).split("\n").join("\n# ")}`);
};
const client = (key = env.SDK_KEY) => new OpenAI({ baseURL: env.SDK_BASE, apiKey: key, maxRetries: 0, timeout: 20000 });

// Runs fn and returns the error it threw (or null).
async function thrown(fn) {
	try {
		await fn();
		return null;
	} catch (e) {
		return e;
	}
}

const say = (e) => (e ? `${e.constructor.name} ${e.status}: ${e.message}` : "no error");

async function api() {
	const c = client();
	const models = [];
	for await (const m of c.models.list()) models.push(m.id);
	ok(models.includes(env.SDK_CHAT) && models.includes(env.SDK_EMBED), `models.list() names ${env.SDK_CHAT} and ${env.SDK_EMBED}`, models.join(","));

	const q = { model: env.SDK_CHAT, messages: [{ role: "user", content: "Say hello." }], max_tokens: 8 };
	const chat = await c.chat.completions.create(q);
	ok(chat.object === "chat.completion" && typeof chat.choices[0].message.content === "string" && chat.choices[0].message.content.length > 0,
		"chat.completions.create() answers with a message", JSON.stringify(chat));
	ok(chat.usage && chat.usage.completion_tokens > 0, "with its usage", JSON.stringify(chat.usage));

	const stream = await c.chat.completions.create({ ...q, stream: true });
	let text = "", chunks = 0, finish = null;
	for await (const ch of stream) {
		chunks++;
		text += ch.choices[0]?.delta?.content ?? "";
		finish = ch.choices[0]?.finish_reason ?? finish;
	}
	ok(chunks > 1 && text === chat.choices[0].message.content, "a stream arrives in chunks that add up to the same answer", `${chunks} chunks: '${text}'`);
	ok(finish === chat.choices[0].finish_reason, "with the same finish reason", finish);

	const tools = [{ type: "function", function: { name: "get_weather", description: "Weather in a city",
		parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
	const tc = await c.chat.completions.create({ model: env.SDK_CHAT, max_tokens: 64, tools,
		messages: [{ role: "user", content: "What is the weather in Paris? Use the tool." }] });
	const call = tc.choices[0].message.tool_calls?.[0];
	let args = null;
	try { args = JSON.parse(call.function.arguments); } catch { /* checked below */ }
	ok(tc.choices[0].finish_reason === "tool_calls" && call?.function?.name === "get_weather" && args !== null,
		"a tool call comes back with its name and JSON arguments", JSON.stringify(tc.choices[0]));

	const emb = await c.embeddings.create({ model: env.SDK_EMBED, input: ["a cat", "a dog"] });
	ok(emb.data.length === 2 && emb.data[0].embedding.length > 0 && emb.data[0].embedding.every((x) => typeof x === "number"),
		"embeddings.create() answers one vector per input (the SDK decodes them)", JSON.stringify(emb).slice(0, 200));

	if (env.SDK_RESPONSES) {
		const r = await thrown(async () => {
			const resp = await c.responses.create({ model: env.SDK_CHAT, input: "Say hello.", max_output_tokens: 16 });
			ok(resp.object === "response" && resp.status === "completed" && resp.output_text.length > 0 &&
				resp.usage.output_tokens > 0 && resp.usage.output_tokens <= 16,
				"responses.create() answers through the gateway (the SDK's output_text, usage within max_output_tokens)",
				JSON.stringify(resp).slice(0, 300));
		});
		if (r) ok(false, "responses.create() answers through the gateway", say(r));
	}

	let e = await thrown(() => client("sk-not-this-one").chat.completions.create(q));
	ok(e instanceof OpenAI.AuthenticationError && e.status === 401, "a wrong key: AuthenticationError (401)", say(e));
	e = await thrown(() => c.chat.completions.create({ ...q, model: "no-such-model" }));
	ok(e instanceof OpenAI.NotFoundError && e.status === 404, "an unknown model: NotFoundError (404)", say(e));
	ok(e && e.error && typeof e.error.message === "string", "with the OpenAI error body the SDK reads", JSON.stringify(e && e.error));
	e = await thrown(() => c.chat.completions.create({ ...q, model: env.SDK_DOWN }));
	ok(e instanceof OpenAI.InternalServerError && e.status === 503, "a role whose engine is down: InternalServerError (503)", say(e));
	e = await thrown(() => c.chat.completions.create({ ...q, stream: true, model: env.SDK_DOWN }));
	ok(e instanceof OpenAI.InternalServerError && e.status === 503, "and a stream to it fails before any chunk, the same way", say(e));
}

async function reuse() {
	let connections = 0;
	diagnostics.subscribe("undici:client:connected", () => connections++);
	const c = client();
	let good = 0;
	for (let i = 0; i < 100; i++) {
		const r = i % 2
			? await c.chat.completions.create({ model: env.SDK_CHAT, messages: [{ role: "user", content: `hi ${i}` }], max_tokens: 2 })
			: await c.models.list();
		if (r) good++;
	}
	ok(good === 100, "100 sequential calls (chat and models.list) answer", good);
	// Node's fetch (undici) opens a second connection for the second call
	// before it has released the first one, against any HTTP/1.1 server;
	// from then on both are reused. A server that closed after each answer
	// would show 100 here. gateway_sdk.t compares the count with the same
	// run straight against the engine.
	console.log(`# connections=${connections}`);
	ok(connections >= 1 && connections <= 2, "over the same one or two TCP connections, not one per call", `${connections} connections opened`);
}

async function keys() {
	const c = client(env.SDK_LIMITED);
	const q = (model) => ({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
	let e = await thrown(() => c.embeddings.create({ model: env.SDK_EMBED, input: "x" }));
	ok(e instanceof OpenAI.PermissionDeniedError && e.status === 403, "a role outside the key's allowlist: PermissionDeniedError (403)", say(e));
	const rpm = Number(env.SDK_RPM);
	let passed = 0;
	for (let i = 0; i < rpm; i++) if (!(await thrown(() => c.chat.completions.create(q(env.SDK_CHAT))))) passed++;
	ok(passed === rpm, `the first ${rpm} requests of the minute pass`, passed);
	e = await thrown(() => c.chat.completions.create(q(env.SDK_CHAT)));
	ok(e instanceof OpenAI.RateLimitError && e.status === 429, "the next one: RateLimitError (429)", say(e));
	const h = e && e.headers;
	ok(h && Number(h.get("retry-after")) > 0, "with Retry-After", h && h.get("retry-after"));
	ok(h && h.get("x-ratelimit-limit-requests") === String(rpm) && h.get("x-ratelimit-remaining-requests") === "0",
		"and the x-ratelimit-*-requests headers the SDK's users read", h && JSON.stringify(Object.fromEntries(h.entries())));
}

const scenarios = { api, reuse, keys };
try {
	await scenarios[scenario]();
} catch (e) {
	ok(false, `scenario ${scenario} ran to its end`, e && e.stack);
}
if (n === 0) ok(false, `scenario ${scenario} made no check`);

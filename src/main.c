/*
 * main.c — global options, the command table, dispatch, exit codes.
 *
 * Global options (--json, --dir D, --no-color) may appear before or after the
 * verb; they are taken out of argv before the verb sees it. The only place
 * that prints a fatal error is here. stdout is flushed and checked at exit so
 * a full disk or closed pipe is an error, not silent truncation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/util/cleanup.h"
#include "lib/util/secret.h"
#include "version.h"

static const struct command commands[] = {
	{ "detect", cmd_detect, "lobes detect [--json]",
	  "detect the GPU card and the facts behind it",
	  "Gathers host facts read-only (NVML, then nvidia-smi name/compute_cap, then\n"
	  "Tegra files, /proc/meminfo) and resolves them to a card or `unknown`.\n"
	  "Each fact is printed with its source; an unknown fact says so.\n"
	  "environment:\n"
	  "  LOBES_SYSROOT         read host files under this root (fixture trees)\n"
	  "  LOBES_NVML_LIB        NVML library to dlopen (default libnvidia-ml.so.1)\n"
	  "  LOBES_NO_NVML=1       skip NVML\n"
	  "  LOBES_NVIDIA_SMI      nvidia-smi to run (default: from PATH)\n"
	  "  LOBES_SMI_TIMEOUT_MS  give up on nvidia-smi after this long (default 5000)\n" },
	{ "explain", cmd_explain, "lobes explain [--profile P] [--json] [ROLE]",
	  "show the per-role plan and why every knob has its value",
	  "  -p, --profile P  use profile P instead of the one the detected card selects\n"
	  "  ROLE          only this role (cortex, senses, hand, embedder, reranker)\n" },
	{ "render", cmd_render,
	  "lobes render [--target compose|kubernetes] [--profile P]... [--out DIR | --check DIR] "
	  "[--lobes-image REF] [--hf-cache-claim NAME]",
	  "render a profile's compose files, .env and gateway unit, or a kustomize tree for Kubernetes (same bytes on any machine)",
	  "Renders the profile for its own card. The result depends on the profile and\n"
	  "the knowledge only: the shipped data/ and the operator's files in\n"
	  "DIR/profiles/ (cards, traits, profiles, families, images, defaults; DIR is\n"
	  "--dir's deploy dir), never on this machine: no detection beyond picking the\n"
	  "default profile when none is named, no checkpoint reads. The same\n"
	  "DIR/profiles/ (or none) gives the same bytes anywhere.\n"
	  "  -t, --target T  compose (default) or kubernetes: a kustomize tree, base/ plus\n"
	  "                overlays/<profile>/ per card profile and kustomization.yaml for\n"
	  "                the whole cluster (docs/kubernetes.md)\n"
	  "  -p, --profile P  the profile (default: the one the detected card selects;\n"
	  "                with --check, the LOBES_PROFILE named in DIR/.env); repeat it\n"
	  "                with --target kubernetes (default there: every profile)\n"
	  "  -o, --out DIR write the files into DIR (docker-compose.yml,\n"
	  "                docker-compose.gpu.yml, .env, lobes-gateway@.service; or the\n"
	  "                kubernetes tree)\n"
	  "  -c, --check DIR  compare DIR with the render; exit 1 and print a diff if it differs\n"
	  "  --lobes-image REF     kubernetes: the image the gateway runs (`make image`;\n"
	  "                default lobes:latest)\n"
	  "  --hf-cache-claim NAME kubernetes: the Hugging Face cache from this\n"
	  "                PersistentVolumeClaim instead of a hostPath on each node\n"
	  "Without --out or --check the files are printed.\n" },
	{ "init", cmd_init, "lobes init [--dir D] [--target compose|kubernetes] [--profile P]... [--apply] "
	  "[--reset KEY]... [--keep-backups N]",
	  "detect, resolve and render into the deploy dir (dry-run unless --apply)",
	  "Prints the profile chosen and why, then a unified diff of every file it\n"
	  "would write: docker-compose.yml, docker-compose.gpu.yml, .env and the\n"
	  "gateway's systemd unit lobes-gateway@.service. Values you edited in .env\n"
	  "are kept (the diff names them).\n"
	  "  -p, --profile P   use profile P (a warning when it is not validated for this card)\n"
	  "  -a, --apply   write every file, the backups and the state as one atomic\n"
	  "                commit (a killed run is finished or rolled back by the next\n"
	  "                one); replaced files are kept as NAME.bak.N; .env is mode 0600\n"
	  "  -r, --reset KEY   forget your edit of .env KEY (repeatable)\n"
	  "  -k, --keep-backups N  keep the last N backups of each file (default: .env's\n"
	  "                LOBES_KEEP_BACKUPS, else 5; 0 keeps none)\n"
	  "  --target kubernetes  write `lobes render --target kubernetes` into\n"
	  "                DIR/kubernetes/ instead (--profile repeatable, default every\n"
	  "                profile; --lobes-image, --hf-cache-claim as for render): the\n"
	  "                same dry-run diff, and with --apply each directory of the tree\n"
	  "                as one commit under the deploy dir's lock (docs/kubernetes.md)\n" },
	{ "doctor", cmd_doctor, "lobes doctor [--profile P] [--image-probe] [--kubernetes DIR] [--fix [--apply]] [--json]",
	  "check the deploy dir against this box before a boot (read-only)",
	  "One line per finding (ok, info, warning, error), then what to do. Checks:\n"
	  "  profile       the profile in use and why; a warning when it is not\n"
	  "                validated for the detected card\n"
	  "  deploy-dir    .env and the compose files parse; drift from what\n"
	  "                `lobes init` would write now (a diff); your kept overrides\n"
	  "  image         each role's image: a digest prefix is an error (Docker\n"
	  "                rejects it), a tag a warning; whether its vLLM version is\n"
	  "                recorded (data/images/), and which\n"
	  "  env-registry  every VLLM_* name in the compose services' environment and\n"
	  "                in .env against the env registry of the role's vLLM (the\n"
	  "                full recorded list in data/vllm/<version>/): dead names are\n"
	  "                errors with their replacement, unregistered ones warnings\n"
	  "  vllm-args     every vllm serve flag, value, tool parser and reasoning\n"
	  "                parser against the recorded lists of the role's vLLM\n"
	  "  placeholder   a lobes placeholder (none, auto) or empty value in .env\n"
	  "                that would reach vLLM, or a .env value not in effect until\n"
	  "                `lobes init --apply`, with the fix\n"
	  "  fp8-kv        fp8 KV cache + a checkpoint without KV scales on the\n"
	  "                TRITON_ATTN path: the predicted `assert layer.k_scale > 0.0`\n"
	  "  traits        every shipped trait that holds on this box and that the\n"
	  "                deployed values do not follow\n"
	  "  memory        the roles' gpu_memory_utilization sum against the card's memory\n"
	  "  gateway       the gateway settings load (key file mode 0600, a key for a bind\n"
	  "                beyond loopback), its port answers or is free, and no engine\n"
	  "                listens beyond loopback (/proc/net/tcp, tcp6)\n"
	  "  docker, compose, gpu-runtime   engine reachable, compose v2 or v1, nvidia runtime\n"
	  "The deployed values are the compose files' vLLM flags with .env substituted.\n"
	  "  -p, --profile P compare with profile P instead of the deploy dir's LOBES_PROFILE\n"
	  "  --image-probe   ask each role's image (<ROLE>_IMAGE) for its own env registry with\n"
	  "                  `docker run --rm --pull never --entrypoint python3`; cached\n"
	  "                  by digest in DIR/cache/vllm-env/; never pulls\n"
	  "  --kubernetes DIR  check a tree `lobes render --target kubernetes` wrote, each\n"
	  "                  overlay against its own profile and card: image, vllm-args,\n"
	  "                  fp8-kv and traits as above, then kubernetes-nodes (the card's\n"
	  "                  GPU Feature Discovery labels), kubernetes-sidecars (native\n"
	  "                  sidecars with startupProbes in the bring-up order),\n"
	  "                  kubernetes-secrets (none in the ConfigMap or an env literal),\n"
	  "                  kubernetes-render (the files equal the render) and\n"
	  "                  kubernetes-restart (a restarted sidecar does not wait)\n"
	  "  --fix [--apply] heal plan (dry run; --apply writes it as one commit): each fix with\n"
	  "                  the finding it heals, then a diff; missing compose file/unit, missing\n"
	  "                  .env key (appended), placeholder/empty value (rendered value on the\n"
	  "                  named line), unregistered VLLM_* line (commented out), stale journal\n"
	  "environment: LOBES_DOCKER (docker CLI, default docker), LOBES_COMPOSE (the\n"
	  "compose command), HF_HUB_CACHE/HF_HOME (checkpoints), those of `lobes detect`.\n"
	  "Exit 1 when a check found an error, 0 otherwise, 3 when there is no deploy\n"
	  "dir or it cannot be read at all (the findings are printed all the same).\n" },
	{ "serve", cmd_serve, "lobes serve [--apply] [--drop-caches] [--no-gateway] [options]",
	  "bring the fleet up in a memory-safe order (dry-run unless --apply)",
	  "Starts the deployed roles in LOBES_ORDER. One window at a time (unified\n"
	  "memory): before each role a memory gate (MemFree >= budget + margin), then\n"
	  "start it, then wait until its boot log says memory profiling and the KV\n"
	  "cache are done before the next. Then every role must answer /health.\n"
	  "A role that dies or overruns a bound stops the wait (exit 1) with its last\n"
	  "log lines and the cause; roles already up keep running.\n"
	  "Then the gateway: `lobes gateway` is started in the background (its own\n"
	  "session; log DIR/gateway.log, pid DIR/gateway.pid) once it listens, or, when\n"
	  "the one serve started before still runs, told to reload the deploy dir\n"
	  "(SIGHUP). It starts even when a role failed: it answers 503 for that role.\n"
	  "Its settings are checked before any engine starts (exit 3 when bad).\n"
	  "The engines are started with compose (LOBES_COMPOSE, else `docker compose`,\n"
	  "else `docker-compose`) and watched through the Docker Engine API (DOCKER_HOST\n"
	  "unix://PATH, else /var/run/docker.sock; compose reads DOCKER_HOST itself).\n"
	  "  --apply             start the roles (default: print the plan)\n"
	  "  --no-gateway        leave the gateway alone (systemd runs it:\n"
	  "                      DIR/lobes-gateway@.service)\n"
	  "  --drop-caches       drop the page cache once at a gate that is short (root)\n"
	  "  --margin-gib N      memory kept free above each budget (default 1)\n"
	  "  --mem-wait S        bound on one memory gate (default 300)\n"
	  "  --window-wait S     bound on one role's start to its window closing (default 1800)\n"
	  "  --ready-wait S      bound on the final wait for /health (default 1800)\n"
	  "  --poll-ms N         how often to look (default 500)\n"
	  "  --mode M            one-at-a-time or together (default: LOBES_BRINGUP of .env)\n" },
	{ "status", cmd_status, "lobes status [--fleet | --watch] [--json]",
	  "show each role's container state, health, port, model and uptime",
	  "Read-only, no detection. Reads the deploy dir's .env (profile, roles,\n"
	  "<ROLE>_FEASIBLE, _PORT, _MODEL) and asks the Docker Engine (DOCKER_HOST\n"
	  "unix://PATH, else /var/run/docker.sock) for the containers of the compose\n"
	  "project (COMPOSE_PROJECT_NAME): per role the state, health check status,\n"
	  "port, model, uptime and restart count. An infeasible role shows\n"
	  "'not deployed (infeasible)'; a feasible role without a container shows\n"
	  "'not running'. A running role whose health check has not run yet (or that\n"
	  "has none) is asked GET http://127.0.0.1:PORT/health directly (2 s bound).\n"
	  "Exit 0 when every feasible role is running and healthy, 1 when some is not,\n"
	  "3 when the deploy dir has no .env (run `lobes init --apply`), 4 when the\n"
	  "Docker Engine cannot be reached.\n"
	  "  --fleet       every box at once: this box's gateway and each peer of\n"
	  "                peers.yaml are asked for /capabilities; one table, role x box:\n"
	  "                ready / not ready / proxied>BOX / refer>BOX / infeasible, with\n"
	  "                each box's profile and detected card (exit 1: a box is silent)\n"
	  "  --watch       the live view of `lobes top` (refreshed every second, q quits)\n" },
	{ "top", cmd_top, "lobes top [--once] [--interval S] [--json]",
	  "the fleet as it runs: load, KV cache, tokens/s, MTP acceptance, memory",
	  cmd_top_help },
	{ "logs", cmd_logs, "lobes logs ROLE [-n N] [-f] [--previous] [--list] [--json] | --collect [--once]",
	  "a role's engine log per boot, kept under DIR/logs/ROLE/",
	  cmd_logs_help },
	{ "probe", cmd_probe, "lobes probe [--timeout SECS] [--fleet | --via-gateway] [--json] [ROLE...]",
	  "ask each running role a question with a known answer (all at once)",
	  "Read-only. Probes every feasible role of the deploy dir's .env (or the ROLEs\n"
	  "named) on 127.0.0.1:<ROLE>_PORT, in parallel: cortex chat-capital, senses\n"
	  "chat-sky, hand chat-known-answer (the capital of France), embedder\n"
	  "embed-paraphrase (cosines), reranker rerank-order (the Paris document first).\n"
	  "A role rendered with a tool-call parser (.env <ROLE>_TOOL_CALL_PARSER) also\n"
	  "gets tool-call (get_weather for Paris: finish_reason tool_calls, arguments\n"
	  "{\"city\": \"Paris\"}, nothing in content); one with a reasoning parser\n"
	  "(<ROLE>_REASONING_PARSER) gets reasoning-split (the thinking in the reasoning\n"
	  "field, none of it in content).\n"
	  "A wrong answer, a timeout, a refused connection, an HTTP error or a malformed\n"
	  "body is a FAIL with its reason. A wrong answer the profile lists under\n"
	  "known_failures is reported as known-failure and does not fail the run; a\n"
	  "listed probe that passes is reported loudly so the entry can be removed.\n"
	  "  -t, --timeout SECS  bound on each probe (default 60)\n"
	  "  ROLE            only these roles; one not feasible in the deploy dir is a\n"
	  "                  usage error\n"
	  "  --via-gateway   send every probe through `lobes gateway` (its port and key\n"
	  "                  from the deploy dir) instead of each engine's port\n"
	  "Exit 1 when a probe fails, 0 otherwise, 3 when the deploy dir has no .env.\n"
	  "  --fleet          probe every role once wherever the fleet serves it (this\n"
	  "                   box first, then the peers of peers.yaml), through that box's\n"
	  "                   gateway with the key it accepts; exit 4 (could not verify)\n"
	  "                   when nothing was probed: no box answered, or none that did\n"
	  "                   serves a role\n" },
	{ "triage", cmd_triage, "lobes triage [--follow [--timeout S]] [--all] [--vllm-version V] [--json] [FILE... | --role R [--previous]]",
	  "say whether vLLM logs are fatal and name their causes (exit 1 when fatal)",
	  "Reads each log (FILE, or stdin for '-' or no FILE) twice in one pass: its\n"
	  "lifecycle (processes, tracebacks and their root exception, startup\n"
	  "complete, engine deaths, exit codes, native crashes, the container\n"
	  "runtime's errors), which says fatal or not without any signature, and the\n"
	  "signatures in data/signatures and DIR/signatures/*.yaml (an operator\n"
	  "signature with a shipped id replaces it), which name the cause. Lines are\n"
	  "normalised first: ANSI colour, compose/journald/kubectl/Ray prefixes and\n"
	  "timestamps go, and a wrapped message is joined. Prints the verdict first\n"
	  "(FATAL in PHASE: the cause, or \"no known cause: <root exception>\", where\n"
	  "it was raised), then FILE:LINE: SEVERITY id, the cause, the fix and the\n"
	  "implicated trait, then a summary per input. --json adds verdict, phase,\n"
	  "root_exception {type, message, frame}, the ranked causes and the lifecycle.\n"
	  "  -a, --all     every occurrence (default: each signature's first, with a count)\n"
	  "  -f, --follow  keep reading the one input as it grows (every 200 ms) until\n"
	  "                'Application startup complete.', a fatal log, the end of a pipe,\n"
	  "                --timeout, or an interrupt\n"
	  "  --timeout S   with --follow, stop after S seconds (default: no limit)\n"
	  "  --role R      the boot log of role R's container (Engine API), as it is now\n"
	  "  --previous    with --role: the boot before, as kept in DIR/logs/R/ (lobes logs)\n"
	  "  --vllm-version V  prefer the wording this vLLM version prints (default:\n"
	  "                the version in the log's banner, else none)\n"
	  "Exit 1 when a log is fatal, 0 otherwise, 3 when an input cannot be\n"
	  "read or a signature file is bad, 4 when a role's log cannot be fetched.\n" },
	{ "verify", cmd_verify, "lobes verify [--role R] [--no-probe] [--timeout S] [--max-tasks N] [--requests N] [--boot-wait S] QUESTION | --list",
	  "answer a recorded question against the running fleet and write an evidence record",
	  "Read-only: looks at the running role (effective args and env, boot log\n"
	  "signatures, image, vLLM version, checkpoint facts, its probe), routes the\n"
	  "observations through the question's recorded outcomes, and writes\n"
	  "DIR/evidence/DATE-QUESTION-CARD.txt and .json (mode 0600). Exit 0 decided,\n"
	  "1 undecided, 4 could not verify (no container, docker unreachable). The\n"
	  "questions are data/questions/ and the operator's DIR/questions/*.yaml (an\n"
	  "operator question with a shipped id replaces it; docs/knowledge.md). The\n"
	  "container is found through the Docker Engine API (DOCKER_HOST unix://PATH,\n"
	  "else /var/run/docker.sock).\n"
	  "A question with an experiment changes a knob for a while instead:\n"
	  "fp8-kv-accuracy boots the role (cortex) with the kv_cache_dtype it does not\n"
	  "run, then with the operator's own, each alone through serve's memory gate\n"
	  "(the rest of the fleet untouched), compares the two as `lobes eval compare`\n"
	  "does (auto the baseline), puts .env back byte for byte and routes on the\n"
	  "thresholds of data/questions/fp8-kv-accuracy.yaml: no measurable loss,\n"
	  "loss, or undecided. mtp-acceptance does the same with the cortex's\n"
	  "speculative_config (MTP off and on; the compose file is rendered with the\n"
	  "trial setting and put back byte for byte with .env): per run a bench at\n"
	  "concurrency 1 (TPOT, output tokens/s), the engine's spec-decode counters\n"
	  "(GET /metrics: acceptance = accepted / draft tokens) and the task set's\n"
	  "greedy answers; routes: helps, no gain, answers changed, or undecided.\n"
	  "The record holds both runs. Boot progress on stderr.\n"
	  "  --list         the questions there are\n"
	  "  --role R       look at role R instead of the question's\n"
	  "  --no-probe     skip the role's probe\n"
	  "  --timeout S    probe timeout, and an experiment's eval request bound (default 60)\n"
	  "  --max-tasks N  an experiment asks only the first N tasks of the task set\n"	  "  --requests N   mtp-acceptance: bench requests per run (default 8; 128\n"
	  "                 words in, 128 tokens out)\n"
	  "  --boot-wait S  an experiment's bound on one boot (default 1800)\n" },
	{ "gateway", cmd_gateway, "lobes gateway [--bind ADDR] [--port N] [--key-file F] [--pid-file F] [--check]",
	  "serve one OpenAI-compatible endpoint for the fleet (foreground)",
	  "Routes POST /v1/chat/completions, /v1/completions, /v1/embeddings,\n"
	  "/v1/rerank (/rerank, /v2/rerank), /v1/score to the role the request's\n"
	  "`model` names (role name, served checkpoint id or alias; none: the\n"
	  "cortex, so embeddings or rerank without one are a 400 naming the role\n"
	  "that serves them); GET /v1/models (ready roles),\n"
	  "/health and /capabilities (both keyless); GET /metrics (Prometheus text:\n"
	  "requests, latency and first-byte histograms, 429s, errors, tokens per role;\n"
	  "keyless unless LOBES_GATEWAY_METRICS_AUTH=key); GET /status (JSON: each\n"
	  "role's state, the box's memory, rates; the same setting) and GET /ui (a\n"
	  "status page for a browser). An infeasible role is 404\n"
	  "role_infeasible, a down engine 503 backend_unavailable (Retry-After),\n"
	  "an unknown model 404 model_not_found. Streams are relayed frame by frame;\n"
	  "a client that goes away cancels the engine's request. X-Request-Id (the\n"
	  "client's, else made) and a well-formed W3C traceparent/tracestate go to the\n"
	  "engine and back; access lines carry the id and the trace id.\n"
	  "  -b, --bind ADDR listen address (default LOBES_GATEWAY_BIND, else 127.0.0.1;\n"
	  "                  any other address needs an API key)\n"
	  "  -p, --port N    port (default LOBES_GATEWAY_PORT, else 8000; 0: any free)\n"
	  "  -k, --key-file F  the API key, in a file of mode 0600 (default\n"
	  "                  LOBES_GATEWAY_KEY_FILE, else DIR/gateway.key when present,\n"
	  "                  else LOBES_GATEWAY_API_KEY of .env)\n"
	  "  --pid-file F    once listening, write the pid to F; removed at exit\n"
	  "  -c, --check     validate the settings and exit\n"
	  "Two ways to run it: `lobes serve --apply` starts it in the background after\n"
	  "the engines (log DIR/gateway.log, pid DIR/gateway.pid) and `lobes stop\n"
	  "--apply` stops it before them; or systemd runs DIR/lobes-gateway@.service\n"
	  "(written by `lobes init`; see its head) and serve/stop take --no-gateway.\n"
	  "Settings in DIR/.env: LOBES_GATEWAY_MAX_BODY_BYTES (16 MiB),\n"
	  "_MAX_BUFFERED_BYTES (256 MiB: request bodies and relay buffers of all\n"
	  "connections together; 503 server_busy past it),\n"
	  "_MAX_INFLIGHT and _MAX_INFLIGHT_<ROLE> (1024), _MAX_CONNECTIONS (4096; past\n"
	  "it refused at once), _MAX_CONNECTIONS_PER_ADDRESS (1024), _HEADER_TIMEOUT\n"
	  "(10 s for a request head), _MIN_UPLOAD_RATE (1024 B/s, else 408),\n"
	  "_CONNECT_TIMEOUT (2 s), _FIRST_BYTE_TIMEOUT (300 s to the answer's head),\n"
	  "_READ_TIMEOUT (600 s between bytes after it), _REQUEST_TIMEOUT (0: none),\n"
	  "_IDLE_TIMEOUT (60 s), _DRAIN_TIMEOUT (30 s), _HEALTH_INTERVAL_MS (5000),\n"
	  "_HEALTH_TIMEOUT_MS (3000), _SWAP_MAX / _IOWAIT_MAX (percent; 100 = off),\n"
	  "_PEER_<ROLE> (hosted_by of an infeasible role: http(s)://HOST[:PORT]),\n"
	  "_PEER_CA_FILE (PEM CAs for https peers; default the system's), _WORKERS (worker loops,\n"
	  "1-64; default the online CPUs, at most 8; each serves its connections\n"
	  "wholly, all on the one port), _METRICS_AUTH (none, or key: /metrics and\n"
	  "/status need the API key). Aliases: data/gateway/ and DIR/gateway.yaml\n"
	  "(`aliases: {NAME: ROLE}`).\n"
	  "Signals: SIGHUP re-reads DIR (.env, gateway.yaml, the key, peers.yaml): new\n"
	  "requests get the new roles, ports, models, aliases, key, peers, limits,\n"
	  "timeouts, health and pressure settings; requests in flight keep the ones\n"
	  "they began with; a bad file is logged (reload-failed) and the old settings\n"
	  "stay; connection limits and timeouts apply to connections opened after\n"
	  "it. A restart is needed for the bind address, the port and _WORKERS (a\n"
	  "reload-warning is logged). SIGTERM/SIGINT stop\n"
	  "accepting, let in-flight requests finish within the drain timeout, then\n"
	  "exit 0. Access lines (JSON, no bodies, no keys) go to stderr. Exit 3 on\n"
	  "bad settings, 4 when the port cannot be bound.\n" },
	{ "bench", cmd_bench, "lobes bench [--via direct|gateway|both] [--concurrency N,..] [--rate R,..] [--shape S] [--requests N | --duration S] [--out FILE.md] [--json] ROLE[@DIR]... | --url URL",
	  "measure how fast roles answer: TTFT, TPOT, ITL, E2EL, throughput, goodput",
	  "A load generator (one thread, libcurl). For a generate role it streams\n"
	  "/v1/completions with prompts of N words from a fixed word list (the same on\n"
	  "every box; no tokenizer) and max_tokens M with ignore_eos, and reports as\n"
	  "vLLM's `bench serve` does: TTFT (time to the first chunk), TPOT ((E2EL -\n"
	  "TTFT) / (output tokens - 1)), ITL (every gap between chunks), E2EL (the\n"
	  "whole request), each mean, median, p90, p99 in ms; requests/s, output and\n"
	  "total tokens/s, goodput under --slo. Token counts are the engine's usage,\n"
	  "never guessed (a stream without usage is an error). Errors are counted by\n"
	  "kind: http-NNN, refused, timeout, dropped, transport, malformed, no-usage.\n"
	  "An embedder or reranker gets batches of inputs: requests/s, inputs/s and\n"
	  "latency per batch size. A progress bar on a terminal. Read-only.\n"
	  "  ROLE               roles of the deploy dir (its .env: ports, feasibility);\n"
	  "                     the model is the role name; ROLE@DIR a role of deploy\n"
	  "                     dir DIR (direct: that engine's loopback port)\n"
	  "  --via W            direct (the engine's port, default), gateway (the deploy\n"
	  "                     dir's `lobes gateway`, with its key) or both\n"
	  "  --url URL          any OpenAI-compatible server instead of roles, with\n"
	  "                     --model M and --kind generate|embed|rerank (key:\n"
	  "                     LOBES_BENCH_API_KEY)\n"
	  "  --concurrency N,.. in-flight requests, one run per value (default 1)\n"
	  "  --rate R,..        Poisson arrivals at R requests/s, one run per value\n"
	  "                     (default: as fast as the concurrency allows)\n"
	  "  --requests N       requests per run (default 4 x concurrency, at least 16)\n"
	  "  --duration S       stop sending after S seconds (with --requests: whichever\n"
	  "                     comes first); requests in flight finish\n"
	  "  --shape S          balanced (256 words in, 256 tokens out, the default),\n"
	  "                     prompt-heavy (1024/64) or decode-heavy (64/512)\n"
	  "  --input-len N      prompt words; --output-len M  max_tokens\n"
	  "  --batch N,..       inputs per request for an embedder or reranker (default 1)\n"
	  "  --slo ttft=MS,tpot=MS,e2el=MS  goodput: completed requests meeting every\n"
	  "                     SLO given, per second\n"
	  "  --seed N           prompts and arrival times (default 0)\n"
	  "  --timeout S        bound on one request (default 600)\n"
	  "  --no-ignore-eos    let the model stop before --output-len\n"
	  "  --out FILE.md      a markdown report: the command, the box (card, profile,\n"
	  "                     the engine's vLLM version, load average), the table, a\n"
	  "                     side-by-side table for --via both, a latency plot\n"
	  "Exit 1 when a request failed or a run completed none, 0 otherwise.\n" },
	{ "eval", cmd_eval, "lobes eval compare [--top-k K] [--tasks SET] [--max-tasks N] [--timeout S] [--json] A B",
	  "compare two settings of a model: token distributions and greedy answers",
	  "A and B: http://HOST:PORT[/v1][#MODEL] (MODEL: else the first of its\n"
	  "/v1/models; key: LOBES_EVAL_API_KEY) or ROLE[@DIR] (the role's engine port in\n"
	  "deploy dir DIR, else --dir; the model is the role name). A is the baseline.\n"
	  "1. The reference text (data/evals/reference.txt, from Debian's vim-runtime,\n"
	  "   Open Publication License) is sent to each once with prompt_logprobs K and\n"
	  "   its token ids are read from /tokenize (an engine's port: the gateway does\n"
	  "   not serve it). As llama.cpp's perplexity --kl-divergence: mean, p99 and\n"
	  "   max KL(A||B) per token, on the top-K tokens both returned with the rest\n"
	  "   of each distribution as one bucket (a lower bound of the full KLD); the\n"
	  "   same-top-token rate; mean and max |delta log p| of the text's token; the\n"
	  "   perplexity of each and their ratio B/A.\n"
	  "2. Every task of the set (data/evals/SET.json; default synthetic: generated\n"
	  "   arithmetic and string tasks, seed recorded) is asked of each as a chat at\n"
	  "   temperature 0, thinking off: exact-match accuracy of each (spaces, quotes\n"
	  "   and a final full stop trimmed) and the rate at which they agree.\n"
	  "One request at a time. Read-only; it reports and does not judge (see\n"
	  "`lobes verify fp8-kv-accuracy`).\n"
	  "  --top-k K       prompt logprobs per position, 1-20 (default 20)\n"
	  "  --tasks SET     the task set (default synthetic)\n"
	  "  --max-tasks N   only the first N tasks\n"
	  "  --timeout S     bound on one request (default 120)\n"
	  "Exit 0 compared, 3 bad deploy dir or task set, 4 a side did not answer usably\n"
	  "(no prompt_logprobs, no /tokenize, different tokenizers).\n" },
	{ "stop", cmd_stop, "lobes stop [--apply] [--drop-caches] [--no-gateway] [--wait S]",
	  "tear the fleet down and wait for its memory to come back (dry-run unless --apply)",
	  "First stops the gateway `lobes serve` started (SIGTERM: it drains within\n"
	  "LOBES_GATEWAY_DRAIN_TIMEOUT, then SIGKILL after 5 s more), even when the\n"
	  "Docker Engine cannot be reached (then exit 4 after it), then lists the\n"
	  "containers (Docker Engine API: DOCKER_HOST unix://PATH, else\n"
	  "/var/run/docker.sock), runs compose down (LOBES_COMPOSE, else `docker\n"
	  "compose`, else `docker-compose`), then waits (bounded) until the memory the\n"
	  "running roles held is free again; exit 1 when it does not come back in time.\n"
	  "  --no-gateway    leave the gateway running (systemd runs it)\n"
	  "  --apply         stop (default: say what would stop)\n"
	  "  --drop-caches   drop the page cache once if memory is short (root; unified\n"
	  "                  boxes keep weights in the page cache after teardown)\n"
	  "  --wait S        how long to wait for memory (default 120)\n" },
	{ "switch", cmd_switch,
	  "lobes switch ROLE [MODEL] [--apply [--no-restart]] [--boot-wait S] [--tool-call-parser P] [--reasoning-parser P] [--max-model-len N] [--gpu-memory-utilization F] [--served-name NAME] [--allow-download]",
	  "change one role's checkpoint (dry-run unless --apply)",
	  "Without MODEL: the checkpoints in the Hugging Face cache, each with its\n"
	  "size, model family and whether its weights fit the role's budget\n"
	  "(gpu_memory_utilization of the box's memory).\n"
	  "With MODEL: what changes and why — family and its parsers, runner,\n"
	  "max_model_len clamped to the checkpoint's native context, quantization\n"
	  "from its quantization_config, KV scales, the traits that now apply — and\n"
	  "the diff of .env and the compose files. The change is written as your\n"
	  "edits of .env (<ROLE>_MODEL and what follows from the checkpoint; the\n"
	  "role's keys that followed the old model are reset), so `lobes init`\n"
	  "keeps it and `lobes explain` names it; `lobes init --reset <ROLE>_MODEL`\n"
	  "goes back to the profile's checkpoint.\n"
	  "Refused, with nothing changed: a role that is not feasible on this box,\n"
	  "a model not in the cache (with the command that fetches it), weights\n"
	  "larger than the role's budget (with the numbers).\n"
	  "  --apply         write atomically, restart ONLY that role through serve's memory\n"
	  "                  gate (progress on stderr), wait for /health, run its probes; on\n"
	  "                  a failed boot or probe put .env/compose back byte for byte,\n"
	  "                  boot the old checkpoint, exit 1 naming the cause (triage)\n"
	  "  --no-restart    with --apply: write only   --boot-wait S  boot bound (1800)\n"
	  "  --tool-call-parser P, --reasoning-parser P  instead of the family's\n"
	  "  --max-model-len N, --gpu-memory-utilization F  instead of the profile's\n"
	  "  --served-name NAME  serve the role also as NAME (the role name stays)\n"
	  "  --allow-download  switch to a model that is not cached (vLLM downloads\n"
	  "                  it at boot; no size check)\n"
	  "Exit 3 refused, 2 usage, 1 rolled back, 4 docker unreachable (write undone).\n" },
	{ "completion", cmd_completion, "lobes completion SHELL",
	  "print a shell completion script (bash, zsh or fish)",
	  "Prints a completion script for SHELL (bash, zsh or fish) made from this\n"
	  "command table, so it offers exactly the commands and options `-h` shows:\n"
	  "role names, profile names (shipped and DIR/profiles), question ids and the\n"
	  "checkpoints in the Hugging Face cache where a command takes them.\n"
	  "  bash: source <(lobes completion bash), or save it as\n"
	  "        /usr/share/bash-completion/completions/lobes\n"
	  "  zsh:  save it as _lobes in a directory of $fpath\n"
	  "  fish: save it as ~/.config/fish/completions/lobes.fish\n"
	  "`make install` puts all three where the shells look.\n"
	  "  --values KIND   one candidate a line, for the scripts: roles, profiles,\n"
	  "                  questions, models, commands or shells\n" },
};

static const char *exit_codes_help =
	"exit codes:\n"
	"  0  ok\n"
	"  1  a check found problems (probe failed, doctor unhealthy, fatal log)\n"
	"  2  usage error\n"
	"  3  configuration or environment error (bad data file, missing file)\n"
	"  4  runtime error (docker, network, a child process)\n"
	"  5  internal error\n";

static const char *environment_help =
	"environment:\n"
	"  LOBES_DIR             the deploy dir when --dir is not given (else ~/.lobes)\n"
	"  NO_COLOR              no color, as --no-color\n"
	"  DOCKER_HOST           the Docker Engine lobes asks itself (serve, stop, status,\n"
	"                        verify, triage --role): unix://PATH only, else\n"
	"                        /var/run/docker.sock; the docker and compose programs that\n"
	"                        serve, stop and doctor run read it too, in their own way\n"
	"  LOBES_DOCKER          the docker program doctor runs (default docker)\n"
	"  LOBES_COMPOSE         the compose command of serve, stop and doctor, split on\n"
	"                        spaces (default: `docker compose`, else `docker-compose`)\n"
	"  LOBES_COMPOSE_CACHE=0 do not keep `docker-compose version`'s answer (kept by\n"
	"                        program path, size and mtime in $XDG_CACHE_HOME/lobes/\n"
	"                        compose.json, else ~/.cache/lobes/compose.json)\n"
	"  HF_HUB_CACHE, HF_HOME the Hugging Face cache whose checkpoints init, explain,\n"
	"                        doctor and verify read\n"
	"  LOBES_SYSROOT, LOBES_NVML_LIB, LOBES_NO_NVML, LOBES_NVIDIA_SMI,\n"
	"  LOBES_SMI_TIMEOUT_MS  detection (see `lobes detect -h`)\n"
	"  LOBES_BENCH_API_KEY, LOBES_EVAL_API_KEY  the bearer key of bench's and eval's\n"
	"                        --url (see their -h)\n"
	"The gateway's settings (LOBES_GATEWAY_*) are read from DIR/.env, not from the\n"
	"environment (see `lobes gateway -h`).\n";

static void usage(FILE *f)
{
	fprintf(f, "usage: lobes [--json] [--dir DIR] [--no-color] <command> [options]\n\n"
		   "Fits a local vLLM fleet to the NVIDIA machine it lands on.\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nglobal options:\n"
		   "  --json        machine-readable output (every command)\n"
		   "  --dir DIR     deploy directory (default $LOBES_DIR, else ~/.lobes)\n"
		   "  --no-color    no color even on a terminal (NO_COLOR is honoured too)\n"
		   "  -h, --help    this help; `lobes COMMAND -h` for a command's options\n"
		   "  --version     print the version\n\n%s\n%s",
		environment_help, exit_codes_help);
}

/* The man page source, generated from the same strings as --help. */
static void man(void)
{
	printf(".TH LOBES 1\n.SH NAME\nlobes \\- fit a local vLLM fleet to the NVIDIA machine it lands on\n"
	       ".SH SYNOPSIS\n.B lobes\n[\\-\\-json] [\\-\\-dir DIR] [\\-\\-no\\-color] COMMAND [options]\n"
	       ".SH COMMANDS\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		printf(".TP\n.B %s\n%s\n.nf\n", commands[i].synopsis, commands[i].summary);
		for (const char *p = commands[i].help; *p; p++) {
			if (*p == '\\' || (*p == '-' && (p == commands[i].help || p[-1] != '\\')))
				putchar('\\');
			putchar(*p);
		}
		printf(".fi\n");
	}
	printf(".SH ENVIRONMENT\n.nf\n");
	for (const char *p = environment_help; *p; p++) {
		if (*p == '\\' || *p == '-')
			putchar('\\');
		putchar(*p);
	}
	printf(".fi\n.SH EXIT STATUS\n.nf\n%s.fi\n", exit_codes_help);
}

static int finish(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "lobes: error: write to stdout failed: %s\n", strerror(errno));
		return code ? code : EXIT_RUNTIME;
	}
	return code;
}

int main(int argc, char **argv)
{
	struct ctx ctx = { 0 };
	_cleanup_free_ char *dir = NULL;
	bool no_color = false;
	/* Take global options out of argv, wherever they are (before "--"). */
	int out = 1;
	bool dashdash = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && strcmp(a, "--") == 0) {
			dashdash = true;
			argv[out++] = argv[i];
		} else if (!dashdash && strcmp(a, "--json") == 0) {
			ctx.json = true;
		} else if (!dashdash && strcmp(a, "--no-color") == 0) {
			no_color = true;
		} else if (!dashdash && strcmp(a, "--dir") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "lobes: option '--dir' needs a directory\n");
				return EXIT_USAGE;
			}
			free(dir);
			dir = xstrdup(argv[++i]);
			ctx.dir_given = true;
		} else if (!dashdash && strncmp(a, "--dir=", 6) == 0) {
			free(dir);
			dir = xstrdup(a + 6);
			ctx.dir_given = true;
		} else {
			argv[out++] = argv[i];
		}
	}
	argc = out;
	argv[argc] = NULL;
	ctx.color = !no_color && !getenv("NO_COLOR") && isatty(STDOUT_FILENO);
	if (!dir) {
		const char *env = getenv("LOBES_DIR");
		const char *home = getenv("HOME");
		dir = env && *env ? xstrdup(env) : xasprintf("%s/.lobes", home && *home ? home : ".");
	}
	if (ctx.dir_given && !*dir) {
		fprintf(stderr, "lobes: option '--dir' needs a directory\n");
		return EXIT_USAGE;
	}
	ctx.dir = dir;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "-h") == 0 || strcmp(verb, "--help") == 0 || strcmp(verb, "help") == 0) {
		usage(stdout);
		return finish(0);
	}
	if (strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
		if (ctx.json)
			printf("{\"version\": \"%s\"}\n", LOBES_VERSION);
		else
			printf("lobes %s\n", LOBES_VERSION);
		return finish(0);
	}
	if (strcmp(verb, "--man") == 0) {
		man();
		return finish(0);
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, verb) != 0)
			continue;
		ctx.cmd = &commands[i];
		ctx.commands = commands;
		ctx.n_commands = ARRAY_SIZE(commands);
		for (int j = 2; j < argc; j++) {
			if (strcmp(argv[j], "--") == 0)
				break;
			if (strcmp(argv[j], "-h") == 0 || strcmp(argv[j], "--help") == 0) {
				cmd_usage(&ctx, stdout);
				return finish(0);
			}
		}
		optind = 1;
		int code = commands[i].fn(argc - 1, argv + 1, &ctx);
		if (ctx.err) {
			/* an error quotes input (a .env line): the one masking rule */
			_cleanup_free_ char *msg = secret_mask_text(ctx.err->msg);
			fprintf(stderr, "lobes %s: error: %s\n", verb, msg);
			if (code == 0)
				code = ctx.err->code ? ctx.err->code : EXIT_INTERNAL;
			err_free(ctx.err);
		}
		return finish(code);
	}
	fprintf(stderr, "lobes: '%s' is not a command; see 'lobes --help'\n", verb);
	return EXIT_USAGE;
}

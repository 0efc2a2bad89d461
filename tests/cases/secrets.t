#!/bin/bash
# secrets.t — planted secrets never come out: a token in lobes' environment,
# in .env (names in any case), in a container's env, argv and boot log
# (served by a fake Docker Engine API, tests/secrets/fake_engine.py, built
# from the bodies in tests/fixtures/engine). Every command's text and --json
# output, the evidence files, the backups and the state file are searched
# for each planted value. .env and its own backups hold the operator's
# values by design (mode 0600).
. "${LOBES_SRC:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 is needed for the fake engine"
unset LOBES_SYSROOT
export LOBES_NVML_LIB=$TMP/absent/libnvidia-ml.so.1 NO_COLOR=1

ENV_TOK=envtok-planted-7e1c           # in lobes' own environment
HF=hf_PlantedHfToken0123456789abcdEF  # hf_-shaped, in .env and in the log
NGC=ngc-planted-2b9f                  # .env NGC_KEY
LOWER=lower-planted-5d0a              # .env hf_token (lower case)
DBP=dbpass-planted-61aa               # .env DB_PASS
PRIV=privkey-planted-93c2             # .env PRIVATE_KEY
API=sk-apikey-planted-4242            # container env VLLM_API_KEY and argv --api-key
ARGV=argv-eq-planted-0c0c             # container argv --api-key=...
AUTH=bearer-planted-8d8d              # container log Authorization header
CRED=cred-planted-1f1f                # container env GOOGLE_CREDENTIALS, repeated in the log
ALL="$ENV_TOK $HF $NGC $LOWER $DBP $PRIV $API $ARGV $AUTH $CRED"
export MY_SERVICE_TOKEN=$ENV_TOK

D=$TMP/deploy
"$LOBES" --dir "$D" init --profile spark --apply >/dev/null
ok $? "a spark deploy dir"
printf '%s\n' "HF_TOKEN=$HF" "NGC_KEY=$NGC" "hf_token=$LOWER" "DB_PASS=$DBP" "PRIVATE_KEY=\"$PRIV\"" >>"$D/.env"

# The fake engine: one cortex container of project "lobes" with the secrets.
E=$TMP/engine
mkdir -p "$E"
python3 - "$SRC/tests/fixtures/engine" "$E" "$API" "$ARGV" "$CRED" "$HF" <<'PY'
import json, sys
src, out, api, argv_eq, cred, hf = sys.argv[1:]
l = json.load(open(src + "/containers-list.json"))[0]
i = json.load(open(src + "/inspect-senses.json"))
cid = "c0ffee" * 10 + "c0ff"
l["Id"] = i["Id"] = cid
l["Names"] = ["/lobes_cortex_1"]; i["Name"] = "/lobes_cortex_1"
l["Labels"]["com.docker.compose.service"] = l["Labels"]["lobes.role"] = "cortex"
i["Config"]["Labels"] = l["Labels"]
args = ["serve", "unsloth/Qwen3.8-27B-NVFP4", "--served-model-name=cortex", "--port=8001",
        "--kv-cache-dtype=fp8", "--api-key", api, "--api-key=" + argv_eq]
i["Args"] = args; i["Config"]["Cmd"] = args[1:]
i["Config"]["Env"] += ["VLLM_API_KEY=" + api, "GOOGLE_CREDENTIALS=" + cred, "HF_TOKEN=" + hf,
                       "VLLM_ATTENTION_BACKEND=TRITON_ATTN"]
json.dump([l], open(out + "/list.json", "w"))
json.dump(i, open(out + "/inspect-%s.json" % cid, "w"))
open(out + "/image.json", "w").write(open(src + "/image-vllm.json").read())
open(out + "/cid", "w").write(cid)
PY
cid=$(cat "$E/cid")
{
	echo "INFO 01-05 10:02:11 [api_server.py:1896] vLLM API server version 0.23.1rc1.dev672+g93d8f834d"
	echo "INFO 01-05 10:02:11 [utils.py:328] non-default args: {'model_tag': 'unsloth/Qwen3.8-27B-NVFP4', 'api_key': ['$API'], 'port': 8001}"
	echo "INFO 01-05 10:02:12 [hub.py:88] downloading with token $HF"
	echo "DEBUG 01-05 10:02:12 [auth.py:12] request headers: {'Authorization': 'Bearer $AUTH'}"
	echo "DEBUG 01-05 10:02:12 [auth.py:13] Authorization: Bearer $AUTH"
	echo "INFO 01-05 10:02:12 [creds.py:40] loaded $CRED from the environment"
	echo "WARNING 01-05 10:02:13 [kv_cache.py:94] Checkpoint does not provide a q scaling factor. Setting it to k_scale."
	echo "ERROR 01-05 10:02:14 [core.py:708]     assert layer.k_scale > 0.0"
} >"$E/log-$cid.txt"
python3 "$SRC/tests/secrets/fake_engine.py" "$TMP/docker.sock" "$E" &
FAKE=$!
trap 'kill "$FAKE" 2>/dev/null; wait "$FAKE" 2>/dev/null; rm -rf "$TMP"' EXIT
export DOCKER_HOST=unix://$TMP/docker.sock
for i in $(seq "$TEST_POLLS"); do [ -S "$TMP/docker.sock" ] && break; sleep 0.1; done
ok "$([ -S "$TMP/docker.sock" ]; echo $?)" "the fake engine listens"

O=$TMP/out
mkdir -p "$O"
n=0
each() { # each CMD...: run with text and --json output, keep both
	n=$((n + 1))
	"$LOBES" --dir "$D" "$@" >"$O/$n.txt" 2>&1
	"$LOBES" --dir "$D" --json "$@" >"$O/$n.json" 2>&1
}
each init
each init --profile thor
each render --check "$D"
each doctor
each status
each explain
each verify --no-probe fp8-kv-attribution
each verify --no-probe attention-backend-env
each triage --role cortex
cp "$E/log-$cid.txt" "$TMP/boot.log"
each triage --all "$TMP/boot.log"
each init --apply --profile thor
each init --apply --profile spark

# The commands did run (an empty output would prove nothing).
like "$(cat "$O"/*)" "fp8-k-scale-assert" "triage and verify read the container's log"
like "$(cat "$O"/*)" "HF_TOKEN=<hidden>" "init names the kept secret key, masked"
like "$(cat "$O"/*)" '"--api-key",' "the container's argv is in the --json record"
ls "$D"/evidence/*.json >/dev/null 2>&1; ok $? "verify wrote evidence"
ls "$D"/.env.bak.* >/dev/null 2>&1; ok $? "init --apply made backups"

for v in $ALL; do
	hits=$(grep -rlF -- "$v" "$O" "$D" 2>/dev/null | grep -vE "^$D/\.env(\.bak\.[0-9]+)?$" | sed "s|^$TMP/||" | tr '\n' ' ')
	is "$hits" "" "'$v' appears in no output, --json, evidence, backup or state file"
done
# An error that quotes a bad .env line does not quote the secret in it.
B=$TMP/bad
cp -a "$D" "$B"
printf 'DB_PASSWORD %s\n' "$DBP" >>"$B/.env"
run "$LOBES" --dir "$B" init
is "$rc" 3 "a malformed .env line is a config error"
like "$errout" "is not an assignment" "naming the line"
unlike "$errout" "$DBP" "without the secret in it"
is "$(stat -c %a "$D"/evidence/*.json "$D"/evidence/*.txt | sort -u)" 600 "evidence files are mode 0600"
is "$(stat -c %a "$D/evidence")" 700 "in a 0700 directory"
is "$(stat -c %a "$D"/.env.bak.* | sort -u)" 600 ".env backups are mode 0600"
done_testing

#!/usr/bin/env bash
# nmt-serve end to end, over HTTP on loopback with a free port and a tiny model: both
# APIs, input order, equality with nmt-translate, every bad-input class (the server stays
# healthy), concurrent clients, the page in headless Chromium, a port in use, and a clean
# exit on SIGTERM, SIGINT and SIGHUP with requests in flight (stderr a closed pipe too), and
# flat memory under 150 MB of chunk extensions, trailers or header lines. Usage: serve_test.sh BIN_DIR SOURCE_DIR
BIN=$1
SRC=$2
source "$SRC/tests/apps/test_harness.sh"  # strict mode; every failure names its line and prints the server's log
WORK=$(mktemp -d)
FAIL_LOGS=("$WORK/serve.err")
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}

# --- a tiny model, as in cli_test.sh --------------------------------------------------
source "$SRC/tests/apps/tiny_task.sh"
tiny_task "$WORK" 300 10
cat >"$WORK/tiny.json" <<'JSON'
{"model": {"arch": "transformer", "d_model": 32, "heads": 2, "ffn_dim": 64, "encoder_layers": 2, "decoder_layers": 2,
           "max_positions": 64},
 "train": {"batch_tokens": 400, "schedule": "constant", "learning_rate": 0.003, "valid_every": 100, "log_every": 100,
           "valid_max_sentences": 2}}
JSON
"$BIN/nmt-train" --config "$WORK/tiny.json" --train-src "$WORK/train.en" --train-tgt "$WORK/train.de" \
  --valid-src "$WORK/valid.en" --valid-tgt "$WORK/valid.de" --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" \
  --model-dir "$WORK/run" --max-steps 12 --threads 1 --quiet >/dev/null 2>&1 || fail "training the tiny model failed"
MODEL=$WORK/run/best.pt

# --- helpers --------------------------------------------------------------------------
# The readiness line, whole: nmt-serve writes it in one write, and it ends with ")".
READY='^nmt-serve: listening on http://[0-9.]+:[0-9]+ \(.*\)$'
start_server() {  # start_server FLAGS...: sets SERVER_PID and URL
  "$BIN/nmt-serve" --model "$MODEL" --port 0 --threads 1 "$@" 2>"$WORK/serve.err" &
  SERVER_PID=$!
  for _ in $(seq 600); do
    grep -qE "$READY" "$WORK/serve.err" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || fail "nmt-serve exited at start"
    sleep 0.1
  done
  grep -qE "$READY" "$WORK/serve.err" || fail "nmt-serve did not say where it listens within 60 s"
  URL=$(grep -E "$READY" "$WORK/serve.err" | grep -oE 'http://[0-9.]+:[0-9]+' | head -1)
}
post() {  # post PATH BODY_FILE OUT_FILE -> prints the HTTP status
  curl -s -o "$3" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary "@$2" "$URL$1"
}
healthy() {
  [ "$(curl -s -o "$WORK/health.json" -w '%{http_code}' "$URL/health")" = 200 ] && grep -q '"status":"ok"' "$WORK/health.json"
}
to_request() {  # to_request LINES_FILE JSON_OPTIONS > body: {"text": [...], ...options}
  python3 -c 'import json,sys; o=json.loads(sys.argv[2]); o["text"]=open(sys.argv[1]).read().splitlines(); print(json.dumps(o))' "$1" "$2"
}
# same_as_translate ANSWER EXPECTED_JSONL: the server's n-best lists equal nmt-translate's
same_as_translate() {
  python3 - "$1" "$2" <<'PY' || return 1
import json, sys
answer = json.load(open(sys.argv[1]))["translations"]
expected = [json.loads(l) for l in open(sys.argv[2])]
assert len(answer) == len(expected), f"{len(answer)} translations for {len(expected)} lines"
for i, (got, want) in enumerate(zip(answer, expected)):
    hyps = got.get("nbest", [got])
    assert len(hyps) == len(want["hypotheses"]), f"line {i + 1}: {len(hyps)} hypotheses, nmt-translate {len(want['hypotheses'])}"
    for k, (g, w) in enumerate(zip(hyps, want["hypotheses"])):
        assert g["text"] == w["text"], f"line {i + 1} hyp {k}: {g['text']!r} != {w['text']!r}"
        assert g["tokens"] == w["tokens"], f"line {i + 1} hyp {k}: tokens differ"
        assert abs(g["score"] - w["score"]) < 1e-4, f"line {i + 1} hyp {k}: score {g['score']} != {w['score']}"
PY
}

printf 'seven hundred two\nforty-one\none thousand nine hundred\neight\nthree hundred thousand twelve\nsixty\n' >"$WORK/lines.txt"
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --nbest 3 --format jsonl --threads 1 --quiet <"$WORK/lines.txt" >"$WORK/b3n3.jsonl" 2>/dev/null
"$BIN/nmt-translate" --model "$MODEL" --beam 2 --format jsonl --threads 1 --quiet <"$WORK/lines.txt" >"$WORK/b2n1.jsonl" 2>/dev/null
"$BIN/nmt-translate" --model "$MODEL" --beam 3 --threads 1 --quiet <"$WORK/lines.txt" >"$WORK/b3.txt" 2>/dev/null

"$BIN/nmt-serve" --help | grep -- "--max-batch-tokens" >/dev/null || fail "--help does not list --max-batch-tokens"
start_server --beam 3 --max-wait-ms 100 --max-lines 8 --max-line-bytes 200 --max-beam-lines 40 --max-attention-hypotheses 12
healthy || fail "/health"
[ "$(curl -s "$URL/v1/model" | python3 -c 'import json,sys; m=json.load(sys.stdin); print(m["family"], m["source_vocab"], m["config"]["transformer"]["d_model"], m["shortlist"])')" = "transformer 60 32 None" ] \
  || fail "/v1/model does not describe the tiny transformer"

# --- /v1/translate equals nmt-translate, in input order -------------------------------
to_request "$WORK/lines.txt" '{"beam": 3, "nbest": 3}' >"$WORK/req.json"
[ "$(post /v1/translate "$WORK/req.json" "$WORK/ans.json")" = 200 ] || fail "/v1/translate"
same_as_translate "$WORK/ans.json" "$WORK/b3n3.jsonl" || fail "/v1/translate beam 3 nbest 3 differs from nmt-translate"
to_request "$WORK/lines.txt" '{}' >"$WORK/req.json"  # server defaults: --beam 3, nbest 1
post /v1/translate "$WORK/req.json" "$WORK/ans.json" >/dev/null
python3 -c 'import json,sys; print("\n".join(t["text"] for t in json.load(open(sys.argv[1]))["translations"]))' "$WORK/ans.json" \
  | cmp -s - "$WORK/b3.txt" || fail "/v1/translate with the defaults differs from nmt-translate --beam 3"
# Attention: nmt-align's object per hypothesis.
to_request "$WORK/lines.txt" '{"beam": 3, "nbest": 2, "attention": true}' >"$WORK/req.json"
post /v1/translate "$WORK/req.json" "$WORK/att.json" >/dev/null
python3 - "$WORK/att.json" <<'PY' || fail "attention objects are missing or malformed"
import json, sys
for i, t in enumerate(json.load(open(sys.argv[1]))["translations"]):
    for h in t["nbest"]:
        a = h["attention"]
        assert a["line"] == i + 1 and a["mode"] == "translate", "line number within the request"
        assert a["has_attention"] and a["target"]["pieces"] == h["tokens"], "pieces differ"
        assert len(a["attention"]) == len(a["target"]["pieces"]) and len(a["attention"][0]) == len(a["source"]["pieces"])
        assert len(a["layers"]) == 2 and len(a["layers"][0]["heads"]) == 2
PY

# --- OpenNMT-py's REST shape ---------------------------------------------------------
python3 -c 'import json,sys; print(json.dumps([{"src": l, "id": 100} for l in open(sys.argv[1]).read().splitlines()] + [{"src": ""}]))' \
  "$WORK/lines.txt" >"$WORK/onmt.json"
[ "$(post /translator/translate "$WORK/onmt.json" "$WORK/onmt.out")" = 200 ] || fail "/translator/translate"
python3 - "$WORK/onmt.out" "$WORK/b3.txt" "$WORK/lines.txt" <<'PY' || fail "/translator/translate answer is not OpenNMT-py's shape"
import json, sys
out = json.load(open(sys.argv[1]))
want = open(sys.argv[2]).read().splitlines() + [""]
src = open(sys.argv[3]).read().splitlines() + [""]
assert isinstance(out, list) and len(out) == 1 and len(out[0]) == len(want), "expected [n_best][inputs]"
for entry, tgt, s in zip(out[0], want, src):
    assert set(entry) == {"src", "tgt", "n_best", "pred_score"}, entry
    assert entry["src"] == s and entry["tgt"] == tgt and entry["n_best"] == 1, entry
PY
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/translator/health")" = 200 ] || fail "/translator/health"

# --- bad input: a 4xx with a JSON error naming the problem; the server keeps serving ---
bad() {  # bad STATUS NEEDLE PATH BODY
  printf '%s' "$4" >"$WORK/bad.json"
  local status
  status=$(post "$3" "$WORK/bad.json" "$WORK/bad.out")
  [ "$status" = "$1" ] || fail "$3 $4: status $status, expected $1"
  grep -qF -- "$2" "$WORK/bad.out" || fail "$3 $4: error $(cat "$WORK/bad.out") does not mention '$2'"
  healthy || fail "not healthy after $3 $4"
}
bad 400 "malformed JSON" /v1/translate '{"text": ["seven"'
bad 400 "malformed JSON" /v1/translate 'seven'
bad 400 "invalid UTF-8" /v1/translate $'{"text": ["bad \xff byte"]}'
bad 400 "text[1] must be a string" /v1/translate '{"text": ["seven", 7]}'
bad 400 '\"beam\" must be an integer' /v1/translate '{"text": ["seven"], "beam": "3"}'
bad 400 '\"attention\" must be true or false' /v1/translate '{"text": ["seven"], "attention": "yes"}'
bad 400 "missing" /v1/translate '{"beam": 3}'
bad 400 "unknown field" /v1/translate '{"txt": ["seven"]}'
# Numbers no double holds: a 400 naming the field (the JSON library throws them as out_of_range).
bad 400 '\"beam\": number out of range' /v1/translate '{"text": ["seven"], "beam": 1e400}'
bad 400 '\"alpha\": number out of range' /v1/translate '{"text": ["seven"], "alpha": -1e400}'
bad 400 '\"text\": number out of range' /v1/translate '{"text": 11111111111111111111111111111e111111}'
bad 400 '\"id\": number out of range' /translator/translate '[{"src": "seven", "id": 1e400}]'
bad 400 '\"beam\" must be in [1, 32], got 18446744073709551615' /v1/translate '{"text": ["seven"], "beam": 18446744073709551615}'
bad 400 "one per line" /v1/translate '{"text": ["seven", "eight"], "prefix": ["sieben"]}'
bad 400 "prefix[0] must be a string" /v1/translate '{"text": ["seven"], "prefix": [7]}'
bad 400 "need beam search" /v1/translate '{"text": ["seven"], "beam": 1, "constraints": ["neun"]}'
bad 400 "one array of phrases per line" /v1/translate '{"text": ["seven", "eight"], "constraints": [["neun"]]}'
# Constraints per line: every hypothesis holds its line's phrases; a line without any is free.
printf '{"text": ["seven", "eight"], "beam": 4, "nbest": 2, "constraints": [["neun", "zwei"], []]}' >"$WORK/req.json"
[ "$(post /v1/translate "$WORK/req.json" "$WORK/constrained.json")" = 200 ] || fail "/v1/translate with constraints"
python3 - "$WORK/constrained.json" <<'PY' || fail "constrained answers lack their phrases"
import json, sys
first = json.load(open(sys.argv[1]))["translations"][0]
assert all("neun" in h["text"] and "zwei" in h["text"] for h in first["nbest"]), first
PY
bad 400 "no lines" /v1/translate '{"text": []}'
bad 400 "text[0] is empty" /v1/translate '{"text": ["   "]}'
bad 400 "nbest" /v1/translate '{"text": ["seven"], "beam": 2, "nbest": 3}'
bad 413 "--max-lines" /v1/translate '{"text": ["a", "b", "c", "d", "e", "f", "g", "h", "i"]}'
bad 413 "--max-line-bytes" /v1/translate "{\"text\": [\"$(printf 'seven %.0s' $(seq 40))\"]}"
bad 400 "must be an object with" /translator/translate '[{"text": "seven"}]'
# What one request may cost the worker: lines x beam, and hypotheses carrying attention.
bad 413 "6 lines at beam 8 are 48 beam lines, more than the limit of 40 (--max-beam-lines)" /v1/translate \
  '{"text": ["a", "b", "c", "d", "e", "f"], "beam": 8}'
bad 413 "14 hypotheses with attention, more than the limit of 12 (--max-attention-hypotheses)" /v1/translate \
  '{"text": ["a", "b", "c", "d", "e", "f", "g"], "nbest": 2, "attention": true}'
bad 400 "JSON array" /translator/translate '{"src": "seven"}'
head -c 300000 /dev/zero | tr '\0' 'a' >"$WORK/huge.json"
[ "$(post /v1/translate "$WORK/huge.json" "$WORK/bad.out")" = 413 ] && grep -q '"error"' "$WORK/bad.out" \
  || fail "an oversized body is not refused with 413 and a JSON error"
[ "$(curl -s -o "$WORK/bad.out" -w '%{http_code}' "$URL/v2/nothing")" = 404 ] && grep -q '"error"' "$WORK/bad.out" \
  || fail "an unknown route is not a JSON 404"
healthy || fail "not healthy after the bad requests"

# --- slowloris: 500 connections from 127.0.0.1 trickle their headers; 127.0.0.2 is answered --
python3 - "${URL##*:}" >"$WORK/slow.out" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
held = []
for _ in range(500):
    try:  # a server may refuse some (ours: 503 over --max-client-connections)
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /health HTTP/1.1\r\nX-Slow-0: a\r\n")
        held.append(s)
    except OSError:
        pass
print("open", flush=True)
for second in range(1, 9):  # a header line every half second: never a whole head
    time.sleep(0.5)
    for s in held:
        try:
            s.sendall(b"X-Slow-%d: a\r\n" % second)
        except OSError:
            pass
PY
SLOW_PID=$!
for _ in $(seq 100); do grep -q open "$WORK/slow.out" 2>/dev/null && break; sleep 0.1; done
grep -q open "$WORK/slow.out" || fail "the slow client did not open its 500 connections"
sleep 1
[ "$(curl -s -m 1 --interface 127.0.0.2 -o "$WORK/health.json" -w '%{http_code}' "$URL/health")" = 200 ] \
  || fail "/health from 127.0.0.2 not answered within 1 s while 127.0.0.1 holds 500 slow connections"
kill "$SLOW_PID" 2>/dev/null || true
wait "$SLOW_PID" 2>/dev/null || true

# --- concurrent clients: each answer equals nmt-translate's for its lines and options --
# A 13th sends a prefix longer than the model's 64 positions: it alone gets a 413 naming
# its line, and never joins (or fails) the others' batch.
for c in $(seq 0 11); do
  if [ $((c % 2)) -eq 0 ]; then options='{"beam": 3, "nbest": 3}'; expected=b3n3; else options='{"beam": 2}'; expected=b2n1; fi
  first=$((c % 6 + 1))
  sed -n "${first},\$p" "$WORK/lines.txt" >"$WORK/c$c.txt"
  sed -n "${first},\$p" "$WORK/$expected.jsonl" >"$WORK/c$c.expected"
  to_request "$WORK/c$c.txt" "$options" >"$WORK/c$c.json"
done
before=$(curl -s "$URL/health")
clients=()
printf '{"text": ["seven", "eight"], "prefix": ["", "%s"]}' "$(printf 'i %.0s' $(seq 90))" >"$WORK/poison.json"
for c in $(seq 0 11); do post /v1/translate "$WORK/c$c.json" "$WORK/c$c.out" >"$WORK/c$c.status" & clients+=($!); done
post /v1/translate "$WORK/poison.json" "$WORK/poison.out" >"$WORK/poison.status" & clients+=($!)
wait "${clients[@]}" || true  # (a bare wait would wait for the server too); statuses checked below
[ "$(cat "$WORK/poison.status")" = 413 ] && grep -q 'line 2 of the request: prefix of [0-9]* tokens' "$WORK/poison.out" \
  || fail "a prefix over the model's positions: $(cat "$WORK/poison.status") $(cat "$WORK/poison.out")"
for c in $(seq 0 11); do
  [ "$(cat "$WORK/c$c.status")" = 200 ] || fail "concurrent client $c: status $(cat "$WORK/c$c.status")"
  same_as_translate "$WORK/c$c.out" "$WORK/c$c.expected" || fail "concurrent client $c: answer differs from nmt-translate"
done
after=$(curl -s "$URL/health")
python3 - "$before" "$after" <<'PY' || fail "12 concurrent requests were not batched together"
import json, sys
b, a = (json.loads(x) for x in sys.argv[1:3])
requests, batches = a["requests"] - b["requests"], a["batches"] - b["batches"]
assert requests == 12 and batches < requests, f"{requests} requests in {batches} batches"
PY

# --- 150 MB of framing from one client: memory stays flat, and returns after it leaves ---
# (1-byte chunks with 1 KB extensions in one request; trailers and header lines, each
# refused at the head limit and then drained.)
for mode in chunk-extensions trailers headers; do
  read -r sent peak after rest < <(python3 "$SRC/tests/apps/framing_flood.py" "${URL##*:}" "$SERVER_PID" "$mode" 150)
  [ "$sent" -ge 150 ] && [ "$peak" -le 50 ] && [ "$after" -le 20 ] \
    || fail "$mode: $sent MB sent, RSS grew $peak MB at the peak and $after MB after the client left"
done
healthy || fail "unhealthy after the framing floods"

# --- the page, typed into and clicked in headless Chromium ---------------------------
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
  sentence="forty-one thousand nine hundred"
  timeout 120 python3 "$SRC/tests/apps/page_check.py" "$CHROMIUM" "$URL/" "$sentence" --prefix "neun" >"$WORK/page.json" \
    || fail "driving the page in Chromium failed"
  printf '{"text": ["%s"], "beam": 5, "nbest": 5, "attention": true}' "$sentence" >"$WORK/req.json"
  post /v1/translate "$WORK/req.json" "$WORK/page-api.json" >/dev/null
  printf '{"text": ["%s"], "prefix": ["neun"], "beam": 5, "nbest": 5, "attention": true}' "$sentence" >"$WORK/req.json"
  post /v1/translate "$WORK/req.json" "$WORK/page-prefix.json" >/dev/null
  python3 - "$WORK/page.json" "$WORK/page-api.json" "$WORK/page-prefix.json" <<'PY' || fail "the page does not show the translation and its heatmap"
import json, sys
page = json.load(open(sys.argv[1]))
api = json.load(open(sys.argv[2]))["translations"][0]
first, second = page["first"], page["second"]
assert first["error"] == "", first["error"]
assert first["translation"] == [api["text"]], (first["translation"], api["text"])
assert len(first["nbest"]) == len(api["nbest"]), "n-best list length"
for shown, hyp in zip(first["nbest"], api["nbest"]):
    assert shown.startswith(hyp["text"]) and shown.endswith("%.4f" % hyp["score"]), (shown, hyp)
def size_ok(state, hyp):
    a = hyp["attention"]
    return (state["rows"], state["columns"]) == (len(a["target"]["pieces"]), len(a["source"]["pieces"])) \
        and state["cells"] == state["rows"] * state["columns"]
assert first["views"] == 1 + 2 * (1 + 2), "matrix picker: model attention + 2 layers x (mean + 2 heads)"
assert size_ok(first, api["nbest"][0]), ("heatmap of hypothesis 1", first)
assert second["chosen"] == 1 and size_ok(second, api["nbest"][1]), ("heatmap of hypothesis 2", second)
completed = page["completed"]
prefixed = json.load(open(sys.argv[3]))["translations"][0]
assert completed["translation"] == [prefixed["text"]] and prefixed["text"].startswith("neun"), (completed, prefixed["text"])
assert all(h["text"].startswith("neun") for h in prefixed["nbest"]), "an n-best entry lacks the prefix"
assert size_ok(completed, prefixed["nbest"][0]), ("heatmap of the completed translation", completed)
print("page in Chromium: %d cells for %r" % (first["cells"], first["translation"][0]))
PY
else
  echo "chromium not installed: page check skipped (scripts/install-deps.sh installs it)"
fi

# --- a port in use: one line, non-zero exit --------------------------------------------
port=${URL##*:}
if "$BIN/nmt-serve" --model "$MODEL" --port "$port" --threads 1 >/dev/null 2>"$WORK/busy.err"; then fail "a second server bound a port in use"; fi
grep -q "nmt-serve: error: cannot listen on 127.0.0.1:$port" "$WORK/busy.err" && [ "$(wc -l <"$WORK/busy.err")" -eq 1 ] \
  || { cat "$WORK/busy.err" >&2; fail "a port in use does not give one error line"; }

# --- SIGINT when idle: exit 0 ----------------------------------------------------------
kill -INT "$SERVER_PID"
wait "$SERVER_PID" || fail "nmt-serve did not exit 0 on SIGINT"
SERVER_PID=

# --- a server whose defaults exceed its own cost limit refuses to start, saying why -----
if "$BIN/nmt-serve" --model "$MODEL" --port 0 --max-lines 64 --beam 12 >/dev/null 2>"$WORK/limits.err"; then
  fail "nmt-serve started with --max-lines 64 --beam 12 over --max-beam-lines 512"
fi
grep -q "would be refused: 64 lines at beam 12 are 768 beam lines.*--max-beam-lines" "$WORK/limits.err" \
  || fail "no clear error for defaults over --max-beam-lines: $(cat "$WORK/limits.err")"

# --- at --max-connections, idle connections make room: a new client is served at once --
start_server --max-connections 40 --idle-timeout 30
python3 - "${URL##*:}" >"$WORK/idle.out" <<'PY' &
import socket, sys, time
held = []
for i in range(80):  # twice the limit, from 80 addresses, sending nothing
    try:
        s = socket.socket()
        s.bind(("127.0.0.%d" % (i + 10), 0))
        s.connect(("127.0.0.1", int(sys.argv[1])))
        held.append(s)
    except OSError:
        pass
print("open %d" % len(held), flush=True)
time.sleep(20)
PY
IDLE_PID=$!
for _ in $(seq 100); do grep -q open "$WORK/idle.out" 2>/dev/null && break; sleep 0.1; done
grep -q "open 80" "$WORK/idle.out" || fail "the idle clients did not open their 80 connections: $(cat "$WORK/idle.out")"
[ "$(curl -s -m 2 -o "$WORK/health.json" -w '%{http_code}' "$URL/health")" = 200 ] \
  || fail "/health not answered within 2 s while 80 idle connections hold a limit of 40"
kill "$IDLE_PID" 2>/dev/null || true
wait "$IDLE_PID" 2>/dev/null || true

# --- clients that give up: their queued requests are dropped, not translated ----------
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "nmt-serve did not exit 0 on SIGTERM"
start_server --beam 3 --max-wait-ms 5000
to_request "$WORK/lines.txt" '{"beam": 3}' >"$WORK/req.json"
for c in 1 2 3; do curl -s -m 1 -o /dev/null -X POST --data-binary "@$WORK/req.json" "$URL/v1/translate" || true; done
# Each gives up after 1 s; their batch is due 5 s after the first arrived.
for _ in $(seq 150); do
  curl -s "$URL/health" >"$WORK/health.json"
  python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["abandoned"] != 3)' "$WORK/health.json" && break
  sleep 0.1
done
python3 - "$WORK/health.json" <<'PY' || fail "requests whose clients left were translated: $(cat "$WORK/health.json")"
import json, sys
health = json.load(open(sys.argv[1]))
assert health["abandoned"] == 3 and health["requests"] == 0, health
PY
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "nmt-serve did not exit 0 on SIGTERM"
SERVER_PID=

# --- SIGTERM with requests in flight: they are answered, then exit 0 ------------------
# --max-wait-ms 3000 keeps the requests queued when the signal arrives (1 s after sending).
start_server --beam 3 --max-wait-ms 3000
to_request "$WORK/lines.txt" '{"beam": 3, "nbest": 3}' >"$WORK/req.json"
clients=()
for c in 1 2 3; do post /v1/translate "$WORK/req.json" "$WORK/f$c.out" >"$WORK/f$c.status" & clients+=($!); done
sleep 1
[ ! -s "$WORK/f1.status" ] || fail "the in-flight requests were answered before the signal (test would prove nothing)"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "nmt-serve did not exit 0 on SIGTERM with requests in flight"
SERVER_PID=
wait "${clients[@]}" || true  # curl fails when the server dropped a request: checked below
for c in 1 2 3; do
  [ "$(cat "$WORK/f$c.status")" = 200 ] || fail "in-flight request $c: status $(cat "$WORK/f$c.status")"
  same_as_translate "$WORK/f$c.out" "$WORK/b3n3.jsonl" || fail "in-flight request $c: wrong answer"
done
grep -q "finishing requests in flight" "$WORK/serve.err" || fail "no shutdown message"
if curl -s -m 2 "$URL/health" >/dev/null; then fail "still answering after SIGTERM"; fi

# --- SIGHUP with stderr a closed pipe and requests in flight: answered, then exit 0 -----
# The shutdown message then meets EPIPE: it must cost neither the server nor the requests.
# Port 0, the address read from the readiness line: a port chosen here and given to the
# server could be taken by another test's connection before the server binds it.
mkfifo "$WORK/stderr.fifo"
"$BIN/nmt-serve" --model "$MODEL" --port 0 --threads 1 --beam 3 --max-wait-ms 3000 2>"$WORK/stderr.fifo" &
SERVER_PID=$!
exec 3<"$WORK/stderr.fifo"
read -r first_line <&3 || fail "nmt-serve said nothing at start"
exec 3<&-  # stderr is a pipe nobody reads from now
case "$first_line" in *"listening on http://127.0.0.1:"*) ;; *) fail "unexpected first line: $first_line" ;; esac
URL=$(printf '%s\n' "$first_line" | grep -o 'http://127\.0\.0\.1:[0-9]*')
clients=()
for c in 1 2 3; do post /v1/translate "$WORK/req.json" "$WORK/h$c.out" >"$WORK/h$c.status" & clients+=($!); done
sleep 1
kill -HUP "$SERVER_PID"
wait "$SERVER_PID" || fail "nmt-serve did not exit 0 on SIGHUP with stderr a closed pipe (exit $?)"
SERVER_PID=
wait "${clients[@]}" || true
for c in 1 2 3; do
  [ "$(cat "$WORK/h$c.status")" = 200 ] || fail "in-flight request $c at SIGHUP: status $(cat "$WORK/h$c.status")"
done

# --- SIGTERM as soon as the server listens, 8 times: always drained and exit 0 ----------
# (a signal must not reach a thread that LibTorch started before the signals were blocked)
for run in $(seq 8); do
  start_server
  kill -TERM "$SERVER_PID"
  code=0
  wait "$SERVER_PID" || code=$?
  SERVER_PID=
  [ "$code" = 0 ] || fail "SIGTERM at start, run $run: exit $code"
done
echo "serve tests passed"

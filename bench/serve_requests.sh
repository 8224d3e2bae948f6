# Sourced by the server benchmarks: the scratch dir, the first LINES sentences of
# test_2016_flickr.de, and WORK/post.lua, a wrk script posting them one per request to
# /v1/translate (cycled) with beam BEAM. A server started into SERVER_PID is killed on exit.
DATA=${MULTI30K:-../shared/data/multi30k}
WORK=$(mktemp -d)
SERVER_PID=
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
head -"$LINES" "$DATA/test_2016_flickr.de" >"$WORK/lines.de"
python3 - "$WORK/lines.de" "$BEAM" >"$WORK/post.lua" <<'PY'
import json, sys
bodies = [json.dumps({"text": [l.strip()], "beam": int(sys.argv[2])}) for l in open(sys.argv[1]) if l.strip()]
print("local bodies = {" + ",".join(json.dumps(b) for b in bodies) + "}")
print('local i = 0\nwrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"')
print("request = function()\n  i = i % #bodies + 1\n  return wrk.format(nil, \"/v1/translate\", nil, bodies[i])\nend")
PY

# server_url ERR_FILE: waits (up to 30 s) for nmt-serve's whole readiness line in ERR_FILE,
# not only its first words (a reader may see a line before its end), and prints the URL.
server_url() {
  local ready='^nmt-serve: listening on http://[0-9.]+:[0-9]+ \(.*\)$'
  for _ in $(seq 300); do grep -qE "$ready" "$1" && break; sleep 0.1; done
  grep -E "$ready" "$1" | grep -oE 'http://[0-9.]+:[0-9]+' || { cat "$1" >&2; return 1; }
}

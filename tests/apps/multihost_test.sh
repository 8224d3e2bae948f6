#!/usr/bin/env bash
# Data-parallel training across hosts, tested as hosts: each rank of nmt-train runs in a
# network namespace of its own (a host with its own address and interface), the hosts joined
# by veth pairs to a bridge in a switch namespace, each link shaped to 1 Gbit/s (and 0.5 ms
# of delay where the kernel has netem). Rendezvous through the TCPStore at the first host's
# address, Gloo bound to the host's interface (GLOO_SOCKET_IFNAME). Checked:
#  - two hosts train exactly like one process with the same global batch (the same
#    translations and scores, to the last digit); with fp16 on the wire, closely;
#  - ranks whose configs differ stop before the first step, naming the rank and the key;
#  - the link of one host cut mid-run: both ranks stop within --dist-timeout, naming the
#    failure, and last.pt is intact;
#  - one rank killed with SIGKILL: the other stops the same way; both restart from last.pt and
#    end exactly where a run never interrupted ends;
#  - a rank that never arrives, a wrong MASTER_ADDR, a port in use: a clear error, no hang;
#  - SIGTERM while a collective waits for a host that is gone: every rank exits within
#    seconds, not after --dist-timeout.
# Needs root (ip netns); exits 77 (skipped) where namespaces cannot be made.
# Usage: multihost_test.sh BIN_DIR SOURCE_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
source "$SRC/tests/apps/test_harness.sh"  # strict mode; every failure names its line
WORK=$(mktemp -d)
source "$SRC/scripts/namespace-hosts.sh"
cleanup() {
  remove_namespace_hosts
  rm -rf "$WORK"
}
skip() { echo "skipped: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root to make network namespaces"
command -v ip >/dev/null || skip "needs ip (iproute2)"

# --- the hosts ----------------------------------------------------------------------------
make_namespace_hosts 2 "nmt$$" || skip "cannot make a network namespace here"
echo "hosts ${ADDRESS[*]} on one bridge; links ${SHAPING}"
ip netns exec "${HOSTS[0]}" python3 -c 'import socket; s = socket.socket(); s.bind(("0.0.0.0", 29610)); s.listen(); s.settimeout(10); s.accept()' &
listener=$!
sleep 0.5
ip netns exec "${HOSTS[1]}" python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], 29610), timeout=5)' "${ADDRESS[0]}" \
  || fail "host 1 cannot reach host 0"
wait "$listener" || fail "host 0 did not see host 1's connection"

# --- the task -----------------------------------------------------------------------------
source "$SRC/tests/apps/tiny_task.sh"
tiny_task "$WORK" 300 20
cat >"$WORK/tiny.json" <<'JSON'
{"model": {"arch": "transformer", "d_model": 32, "heads": 2, "ffn_dim": 64, "encoder_layers": 1, "decoder_layers": 1,
           "dropout": 0, "transformer": {"attention_dropout": 0}},
 "train": {"batch_tokens": 300, "schedule": "constant", "learning_rate": 0.003, "valid_every": 1000,
           "save_every": 4, "log_every": 1, "valid_max_sentences": 5}}
JSON
TRAIN=(--config "$WORK/tiny.json" --train-src "$WORK/train.en" --train-tgt "$WORK/train.de" --valid-src "$WORK/valid.en"
       --valid-tgt "$WORK/valid.de" --src-spm "$WORK/spm.model" --tgt-spm "$WORK/spm.model" --threads 1)
PORT=29611

# on_host I ENV... -- COMMAND...: runs COMMAND as rank I on host I, in the background; sets PID_I.
on_host() {
  local i=$1; shift
  local env=(RANK="$i" WORLD_SIZE=2 MASTER_ADDR="${ADDRESS[0]}" MASTER_PORT="$PORT" GLOO_SOCKET_IFNAME=eth0)
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  ip netns exec "${HOSTS[$i]}" env "${env[@]}" "$@" >"$WORK/rank$i.out" 2>"$WORK/rank$i.err" &
  eval "PID_$i=$!"
}
FAIL_LOGS=("$WORK/rank0.err" "$WORK/rank1.err")
# exit_of PID SECONDS: sets EXIT to the process's exit status, or to 124 after SECONDS (it
# is then killed). Not in $(...): only this shell can wait for its children.
exit_of() {
  local pid=$1 deadline=$((SECONDS + $2))
  EXIT=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      kill -9 "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      EXIT=124
      return
    fi
    sleep 0.1
  done
  wait "$pid" || EXIT=$?
}
wait_for_step() {  # wait_for_step MODEL_DIR STEP: until train.jsonl reports that step
  for _ in $(seq 600); do
    grep -q "\"step\":$2," "$1/train.jsonl" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "no step $2 in $1/train.jsonl within 60 s"
}
translations() {  # translations MODEL: every hypothesis of the validation lines, with scores
  "$BIN/nmt-translate" --model "$1" --beam 3 --nbest 2 --format jsonl --threads 1 --quiet <"$WORK/valid.en"
}

# --- two hosts train exactly like one process with the same global batch -----------------
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/two" --max-steps 10
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/two" --max-steps 10
exit_of "$PID_0" 180; [ "$EXIT" = 0 ] || fail "rank 0 of the two-host run failed (exit $EXIT)"
exit_of "$PID_1" 30; [ "$EXIT" = 0 ] || fail "rank 1 of the two-host run failed (exit $EXIT)"
grep -q "distributed: 2 ranks (Gloo, gradients summed during backward)" "$WORK/two/train.jsonl" || fail "the two-host run did not say it was distributed"
"$BIN/nmt-train" "${TRAIN[@]}" --set train.accumulate=2 --model-dir "$WORK/one" --max-steps 10 --quiet >/dev/null 2>&1 \
  || fail "the single-process run failed"
# Exact: with two ranks each gradient is a + b in either order, the same float sum as one
# process's accumulation, and every other computation is the same (one thread each).
translations "$WORK/two/last.pt" >"$WORK/two.jsonl"
translations "$WORK/one/last.pt" >"$WORK/one.jsonl"
cmp -s "$WORK/two.jsonl" "$WORK/one.jsonl" || fail "2 hosts x accumulate 1 differ from 1 process x accumulate 2"
"$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/half" --max-steps 10 --quiet >/dev/null 2>&1
translations "$WORK/half/last.pt" | cmp -s - "$WORK/one.jsonl" && fail "the comparison cannot fail: half the batch trains the same"
# Accumulating over micro-batches, the sums during backward add what earlier ones left in
# .grad: the run is the one whose gradients are summed after backward, to the last digit.
# (Not one process's with accumulate 4: that adds g1+g2+g3+g4 in another order than
# (g1+g2)+(g3+g4), and float addition is not associative.)
two_hosts_train() {  # two_hosts_train MODEL_DIR FLAGS...
  local dir=$1; shift
  on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$dir" --max-steps 6 "$@"
  on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$dir" --max-steps 6 "$@"
  exit_of "$PID_0" 180; [ "$EXIT" = 0 ] || fail "rank 0 of $dir failed (exit $EXIT)"
  exit_of "$PID_1" 30; [ "$EXIT" = 0 ] || fail "rank 1 of $dir failed (exit $EXIT)"
}
two_hosts_train "$WORK/two-acc2" --set train.accumulate=2
two_hosts_train "$WORK/two-acc2-after" --set train.accumulate=2 --set train.overlap_allreduce=false
grep -q "gradients summed during backward" "$WORK/two-acc2/train.jsonl" || fail "the gradients were not summed during backward"
grep -q "gradients summed after backward" "$WORK/two-acc2-after/train.jsonl" || fail "overlap_allreduce=false was not taken"
translations "$WORK/two-acc2-after/last.pt" >"$WORK/after.jsonl"
translations "$WORK/two-acc2/last.pt" | cmp -s - "$WORK/after.jsonl" \
  || fail "2 hosts x accumulate 2: summed during backward differs from summed after it"
# Buckets of ~100 bytes: one parameter each, the most collectives in flight at once.
two_hosts_train "$WORK/two-acc2-small" --set train.accumulate=2 --set train.allreduce_bucket_mb=0.0001
translations "$WORK/two-acc2-small/last.pt" | cmp -s - "$WORK/after.jsonl" \
  || fail "2 hosts x accumulate 2: summed during backward in small buckets differs from summed after it"
grep -q '"gradient_sum_wait_share":' "$WORK/two-acc2/train.jsonl" || fail "train.jsonl does not say how long the sums were waited for"
# fp16 on the wire: the buckets' sums differ from fp32's in the last bits only (11 significant
# bits, each bucket scaled by its previous sum), so the training loss follows the exact run's,
# yet the translations' scores differ (or the buckets never travelled as fp16).
two_hosts_train "$WORK/two-acc2-fp16" --set train.accumulate=2 --set train.allreduce_precision=fp16
grep -q "gradients summed during backward, sent as fp16" "$WORK/two-acc2-fp16/train.jsonl" \
  || fail "train.allreduce_precision=fp16 was not taken"
last_loss() { grep '"type":"progress"' "$1/train.jsonl" | tail -1 | sed -n 's/.*"loss":\([0-9.e+-]*\).*/\1/p'; }
awk -v a="$(last_loss "$WORK/two-acc2-fp16")" -v b="$(last_loss "$WORK/two-acc2")" \
  'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= 0.002 * b) }' \
  || fail "fp16 on the wire: loss $(last_loss "$WORK/two-acc2-fp16") after 6 steps, fp32's $(last_loss "$WORK/two-acc2")"
translations "$WORK/two-acc2-fp16/last.pt" | cmp -s - "$WORK/after.jsonl" \
  && fail "fp16 on the wire trained exactly like fp32: the buckets did not travel as fp16"
echo "fp16 on the wire: loss $(last_loss "$WORK/two-acc2-fp16") after 6 steps, fp32's $(last_loss "$WORK/two-acc2")"
echo "two hosts: the same translations and scores as one process with the same global batch;" \
  "with accumulate 2, summed during backward as after it; fp16 on the wire close to fp32"

# --- configs that differ: both stop before the first step, naming rank and key ------------
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/differ" --max-steps 5 --dist-timeout 30
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/differ" --max-steps 5 --dist-timeout 30 \
  --set train.learning_rate=0.5
exit_of "$PID_0" 90; status0=$EXIT
exit_of "$PID_1" 30; status1=$EXIT
[ "$status0" = 1 ] && [ "$status1" = 1 ] || fail "ranks with different configs: exits $status0 and $status1 (1 expected)"
for i in 0 1; do
  grep -q "rank 1 has another config: train.learning_rate 0.5 (rank 0: 0.003)" "$WORK/rank$i.err" \
    || fail "rank $i does not name the rank and key that differ"
done
[ ! -e "$WORK/differ/last.pt" ] || fail "ranks with different configs took a step"

# --- the link of one host cut mid-run -------------------------------------------------------
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/cut" --max-steps 100000 --dist-timeout 10
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/cut" --max-steps 100000 --dist-timeout 10
wait_for_step "$WORK/cut" 9
ip -n "${HOSTS[1]}" link set eth0 down
cut_at=$SECONDS
exit_of "$PID_0" 60; status0=$EXIT
exit_of "$PID_1" 30; status1=$EXIT
ip -n "${HOSTS[1]}" link set eth0 up
[ "$status0" = 1 ] && [ "$status1" = 1 ] || fail "after the cut: rank 0 exit $status0, rank 1 exit $status1 (1 expected)"
[ $((SECONDS - cut_at)) -le 45 ] || fail "the ranks took $((SECONDS - cut_at)) s to stop after the cut (--dist-timeout 10)"
grep -q "rank 0 of 2 failed in" "$WORK/rank0.err" || fail "rank 0 does not say what failed"
"$BIN/nmt-translate" --model "$WORK/cut/last.pt" --threads 1 --quiet <"$WORK/valid.en" >/dev/null \
  || fail "last.pt is not a usable checkpoint after the cut"
echo "link cut: both ranks stopped in $((SECONDS - cut_at)) s with --dist-timeout 10; last.pt intact"

# --- one rank killed, then both resumed: the end is the uninterrupted run's --------------
# The killed run has no step limit of its own, so however late the kill lands it lands
# mid-run; both the resumed and the uninterrupted runs then stop at the same later step.
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/killed" --max-steps 100000 --dist-timeout 10
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/killed" --max-steps 100000 --dist-timeout 10
wait_for_step "$WORK/killed" 9  # last.pt holds step 8 or later
kill -9 "$PID_1"
exit_of "$PID_0" 60; [ "$EXIT" = 1 ] || fail "rank 0 did not fail when rank 1 was killed (exit $EXIT)"
exit_of "$PID_1" 5
killed_at=$(grep -o '"step":[0-9]*' "$WORK/killed/train.jsonl" | tail -n 1 | cut -d: -f2)
end=$((killed_at + 4))  # past the step last.pt holds (saved every 4, at most killed_at)
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/killed" --max-steps "$end"
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/killed" --max-steps "$end"
exit_of "$PID_0" 180; status0=$EXIT
exit_of "$PID_1" 30; status1=$EXIT
[ "$status0" = 0 ] && [ "$status1" = 0 ] || fail "the resumed run failed (exits $status0, $status1)"
grep -q "resuming from" "$WORK/rank0.err" || fail "the restarted run did not resume from last.pt"
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/straight" --max-steps "$end"
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/straight" --max-steps "$end"
exit_of "$PID_0" 180; status0=$EXIT
exit_of "$PID_1" 30; status1=$EXIT
[ "$status0" = 0 ] && [ "$status1" = 0 ] || fail "the uninterrupted run failed (exits $status0, $status1)"
translations "$WORK/straight/last.pt" >"$WORK/straight.jsonl"
translations "$WORK/killed/last.pt" | cmp -s - "$WORK/straight.jsonl" \
  || fail "killed after step $killed_at and resumed to $end, the run ends elsewhere than the uninterrupted one"
echo "rank killed after step $killed_at: rank 0 stopped; resumed from last.pt to step $end, as the uninterrupted run ends"

# --- rendezvous failures: an error within the timeout, never a hang ------------------------
expect_join_failure() {  # expect_join_failure WHAT PID RANK: exit 1 within 40 s, "could not join"
  exit_of "$2" 40
  [ "$EXIT" = 1 ] || fail "$1: exit $EXIT, expected 1 within 40 s"
  grep -q "could not join" "$WORK/rank$3.err" || fail "$1: no 'could not join' error"
}
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/alone" --max-steps 5 --dist-timeout 5
expect_join_failure "a rank that never arrives" "$PID_0" 0
on_host 1 MASTER_ADDR=10.231.0.99 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/lost" --max-steps 5 --dist-timeout 5
expect_join_failure "a wrong MASTER_ADDR" "$PID_1" 1
# Both ranks come; only the port stands in the way.
PORT=$((PORT + 1))
ip netns exec "${HOSTS[0]}" python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); print("holding", flush=True); time.sleep(60)' "$PORT" >"$WORK/holder.out" &
holder=$!
for _ in $(seq 50); do grep -q holding "$WORK/holder.out" && break; sleep 0.1; done
grep -q holding "$WORK/holder.out" || fail "could not take port $PORT on host 0 for the test"
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/taken" --max-steps 5 --dist-timeout 5
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/taken" --max-steps 5 --dist-timeout 5
expect_join_failure "a port in use" "$PID_0" 0
grep -qi "address already in use" "$WORK/rank0.err" || fail "a port in use: the error does not say so"
exit_of "$PID_1" 40
[ "$EXIT" = 1 ] || fail "a port in use: rank 1 exit $EXIT, expected 1"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
PORT=$((PORT + 1))

# --- SIGTERM while a collective waits for a host that is gone ------------------------------
on_host 0 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/stuck" --max-steps 100000 --dist-timeout 600
on_host 1 -- "$BIN/nmt-train" "${TRAIN[@]}" --model-dir "$WORK/stuck" --max-steps 100000 --dist-timeout 600
wait_for_step "$WORK/stuck" 5
ip -n "${HOSTS[1]}" link set eth0 down
sleep 2
kill -TERM "$PID_0" "$PID_1"
signalled_at=$SECONDS
exit_of "$PID_0" 60; status0=$EXIT
exit_of "$PID_1" 30; status1=$EXIT
ip -n "${HOSTS[1]}" link set eth0 up
[ "$status0" != 124 ] && [ "$status1" != 124 ] || fail "SIGTERM did not stop the ranks within 60 s of a stuck collective"
[ $((SECONDS - signalled_at)) -le 30 ] || fail "the ranks took $((SECONDS - signalled_at)) s to stop after SIGTERM"
grep -q "exiting without a final save" "$WORK/rank0.err" "$WORK/rank1.err" || fail "no rank said why it exited"
"$BIN/nmt-translate" --model "$WORK/stuck/last.pt" --threads 1 --quiet <"$WORK/valid.en" >/dev/null \
  || fail "last.pt is not a usable checkpoint after SIGTERM"
echo "SIGTERM with a collective stuck: both ranks exited in $((SECONDS - signalled_at)) s (--dist-timeout 600)"
echo "multihost tests passed"

# Sourced (by tests/apps/multihost_test.sh and bench/distributed_hosts.sh): hosts made of
# network namespaces on this machine. Each host has its own interface eth0 and address
# 10.231.0.(i+1)/24; the hosts are joined by veth pairs to a bridge in a switch namespace;
# each host's link is shaped to 1 Gbit/s (and 0.5 ms of delay where the kernel has netem;
# another rate in tc's words from NAMESPACE_LINK_RATE, e.g. 100mbit). Nothing leaves the
# machine. Needs root.
#
#   make_namespace_hosts COUNT PREFIX   sets HOSTS (namespace names), ADDRESS, SHAPING;
#                                       returns 1 (nothing made) where namespaces cannot be
#   remove_namespace_hosts              kills what runs in them and removes them
#   on_namespace_host I COMMAND...      runs COMMAND in host I

make_namespace_hosts() {
  local count=$1 prefix=$2 i host rate=${NAMESPACE_LINK_RATE:-1gbit}
  NAMESPACE_SWITCH=$prefix-sw
  HOSTS=()
  ADDRESS=()
  ip netns add "$NAMESPACE_SWITCH" 2>/dev/null || return 1
  ip -n "$NAMESPACE_SWITCH" link add br0 type bridge
  ip -n "$NAMESPACE_SWITCH" link set br0 up
  SHAPING=
  for ((i = 0; i < count; i++)); do
    host=$prefix-h$i
    HOSTS+=("$host")
    ADDRESS+=("10.231.0.$((i + 1))")
    ip netns add "$host"
    ip -n "$host" link set lo up
    ip link add "${prefix}p$i" netns "$NAMESPACE_SWITCH" type veth peer name eth0 netns "$host"
    ip -n "$NAMESPACE_SWITCH" link set "${prefix}p$i" master br0 up
    ip -n "$host" addr add "${ADDRESS[$i]}/24" dev eth0
    ip -n "$host" link set eth0 up
    # A link between machines: 1 Gbit/s, 0.5 ms each way where netem exists, else the rate alone.
    if ip netns exec "$host" tc qdisc add dev eth0 root netem rate "$rate" delay 0.5ms 2>/dev/null; then
      SHAPING="$rate/s, 0.5 ms delay (netem)"
    elif ip netns exec "$host" tc qdisc add dev eth0 root tbf rate "$rate" burst 128kb latency 10ms 2>/dev/null; then
      SHAPING="$rate/s (tbf; this kernel has no netem, so no added delay)"
    else
      SHAPING="not shaped (no tc qdisc available)"
    fi
  done
}

remove_namespace_hosts() {
  local ns
  for ns in "${HOSTS[@]}" "${NAMESPACE_SWITCH:-}"; do
    [ -n "$ns" ] || continue
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
}

on_namespace_host() {
  local i=$1
  shift
  ip netns exec "${HOSTS[$i]}" "$@"
}

# Sourced by the CI scripts (e2e.sh, deploy.sh): ports chosen at run time, and waits that make
# sure they talk to the process the script started, not to whatever else listens there.

# free_port prints a TCP port nothing listens on now, chosen by the kernel (bind to port 0).
# Between this and the server's own bind another program could take it: the server then cannot
# listen, and wait_listening fails the run naming the port.
free_port() {
  local p
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
    return
  fi
  # No python3: a random port in 20000-59999 that `ss` sees no listener on.
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    [[ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]] && { echo "$p"; return; }
  done
  echo "free_port: no free port found" >&2
  return 1
}

# pid_listens PID PORT: PID itself (or one of its children) holds the listening socket on PORT.
pid_listens() {
  local line pids
  line=$(ss -Hltnp "sport = :$2" 2>/dev/null) || return 1
  pids=$(echo "$1" $(pgrep -P "$1" 2>/dev/null || true))
  for p in $pids; do
    grep -q "pid=$p," <<<"$line" && return 0
  done
  return 1
}

# wait_listening NAME PID PORT LOG [SECONDS]: wait (10 s by default) until PID listens on PORT.
# Fails at once, naming the port, if PID exits (it could not listen, or died) or if another
# process holds the port; with the server's log.
wait_listening() {
  local name=$1 pid=$2 port=$3 log=$4 secs=${5:-10} i
  for ((i = 0; i < secs * 10; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -20 "$log" >&2 || true
      echo "FAIL: $name (pid $pid) exited before listening on port $port" >&2
      return 1
    fi
    pid_listens "$pid" "$port" && return 0
    sleep 0.1
  done
  tail -20 "$log" >&2 || true
  echo "FAIL: $name (pid $pid) is not listening on port $port after $secs s; there: $(ss -Hltnp "sport = :$port" 2>/dev/null || true)" >&2
  return 1
}

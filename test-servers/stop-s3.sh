#!/usr/bin/env bash
# Stops the cluster start-s3.sh booted in DIR, by the PIDs it recorded:
# TERM radosgw, then the OSD, then the mon, each KILLed if still alive after
# 10 s; then removes DIR (unless --keep is given).
# A PID is only signalled while its command line still names DIR, so a PID
# reused by an unrelated process is never touched.
#
#   stop-s3.sh DIR [--keep]
set -uo pipefail

DIR=$1
KEEP=${2:-}

pid_of() { awk -v n="$1" '$1 == n { print $2 }' "$DIR/pids" 2>/dev/null; }

ours() { # pid: alive and started with a config inside DIR
  [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF "$DIR/"
}

stop() { # names...
  local pids=() name pid
  for name in "$@"; do
    pid=$(pid_of "$name")
    if ours "$pid"; then
      kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    fi
  done
  local deadline=$(( $(date +%s) + 10 ))
  for pid in "${pids[@]}"; do
    while ours "$pid" && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.05; done
    if ours "$pid"; then
      echo "stop-s3: $pid ignored TERM for 10 s, sending KILL" >&2
      kill -KILL "$pid" 2>/dev/null
    fi
  done
}

if [ -f "$DIR/pids" ]; then
  # The OSD tells the mon it is going down (and waits up to 5 s for it), so the mon goes last.
  stop rgw
  stop osd
  stop mon
fi
if [ "$KEEP" != --keep ]; then
  rm -rf -- "$DIR"
fi

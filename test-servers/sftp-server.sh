#!/usr/bin/env bash
# Boots (or stops) a throwaway OpenSSH sshd that serves SFTP only, on 127.0.0.1.
#
#   test-servers/sftp-server.sh start DIR [WATCH_PID]   boots; prints KEY=value lines
#   test-servers/sftp-server.sh stop DIR                stops it by PID, removes DIR
#
# DIR must not exist yet (start creates it, mode 0700) and holds everything of
# this boot: sshd_config, the ed25519 host and user keys, authorized_keys, the
# log and the PID. /etc/ssh is neither read nor changed. The port is a free one
# picked at random (retried when taken). With WATCH_PID, a watchdog stops sshd
# when that process dies, so a crashed test run leaves nothing listening.
#
# System changes, both idempotent (root only): /run/sshd (mode 0755, Debian's
# privilege-separation directory: sshd refuses to start without it) and the
# unprivileged user seamfs-sftp, whose home /var/lib/seamfs-sftp holds one
# directory per boot for the tests' roots (removed by stop). The password field
# is '*': useradd leaves '!' (locked), and with UsePAM no sshd then refuses even
# key logins. Remove the user with: userdel seamfs-sftp && rm -rf /var/lib/seamfs-sftp
#
# A second user, seamfs-sftp-jail, logs in to the same sshd (same key) chrooted
# (OpenSSH ChrootDirectory, in a Match block that concerns that user only) into
# a per-boot directory /var/lib/seamfs-sftp-jail/run-XXXXXXXX: it and every
# component above it are root-owned and writable by root alone, as sshd
# demands; the user's one writable directory is /work inside it, where
# internal-sftp starts. The server, not the client, then keeps every path of
# that user's session inside the jail. Remove with:
# userdel seamfs-sftp-jail && rm -rf /var/lib/seamfs-sftp-jail
#
# Printed on success: SFTP_HOST, SFTP_PORT, SFTP_USER, SFTP_KEY (private key
# file), SFTP_HOSTKEY_SHA256 (SHA256:… fingerprint, for pinning), SFTP_ROOT
# (an empty directory the user owns), SFTP_PID; SFTP_CHROOT_USER,
# SFTP_CHROOT_DIR (the jail, on this machine) and SFTP_CHROOT_ROOT (/work, the
# jailed user's writable directory as the server shows it to that user).
set -euo pipefail

SFTP_USER=seamfs-sftp
SFTP_HOME=/var/lib/seamfs-sftp
JAIL_USER=seamfs-sftp-jail
JAIL_HOME=/var/lib/seamfs-sftp-jail
SSHD=${SSHD:-/usr/sbin/sshd}

die() { echo "sftp-server.sh: $*" >&2; exit 1; }

# Running and not a zombie (where PID 1 does not reap, a killed sshd lingers as one).
alive() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }

stop() {
  local dir=$1
  [ -f "$dir/pid" ] || { rm -rf "$dir"; return 0; }
  local pid root jail children
  pid=$(cat "$dir/pid")
  root=$(cat "$dir/root" 2>/dev/null || true)
  jail=$(cat "$dir/jail" 2>/dev/null || true)
  if alive "$pid"; then
    # Per-connection sshd processes are the listener's children; they outlive it unless stopped too.
    children=$(pgrep -P "$pid" || true)
    kill "$pid" $children 2>/dev/null || true
    for _ in $(seq 100); do alive "$pid" || break; sleep 0.02; done
    if alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
  fi
  if [ -f "$dir/watchdog" ]; then kill "$(cat "$dir/watchdog")" 2>/dev/null || true; fi
  case "$root" in "$SFTP_HOME"/run-*) rm -rf "$root" ;; esac
  case "$jail" in "$JAIL_HOME"/run-*) rm -rf "$jail" ;; esac
  rm -rf "$dir"
}

ensure_user() {
  local user=$1 home=$2
  if ! getent passwd "$user" >/dev/null; then
    useradd --system --no-create-home --home-dir "$home" --shell /usr/sbin/nologin "$user" 2>/dev/null \
      || getent passwd "$user" >/dev/null || die "cannot create user $user"
  fi
  # '*' = no password can match, but the account is not locked ('!' is, and sshd then refuses keys).
  if [ "$(getent shadow "$user" | cut -d: -f2)" != '*' ]; then usermod -p '*' "$user"; fi
}

# The jail: root-owned, mode 0755 from / down (sshd refuses a ChrootDirectory a
# user could change), with the user's writable /work inside.
make_jail() {
  local dir=$1 jail
  install -d -m 0755 -o root -g root "$JAIL_HOME"
  jail=$(mktemp -d "$JAIL_HOME/run-XXXXXXXX")
  chmod 0755 "$jail"
  echo "$jail" >"$dir/jail"
  install -d -m 0755 -o "$JAIL_USER" -g "$(id -gn "$JAIL_USER")" "$jail/work"
  local p=$jail
  while [ "$p" != / ]; do
    [ "$(stat -c %u "$p")" = 0 ] && [ $(( 0$(stat -c %a "$p") & 022 )) = 0 ] || die "$p must be root-owned and writable by root only (ChrootDirectory)"
    p=$(dirname "$p")
  done
}

start() {
  local dir=$1 watch=${2:-}
  [ -x "$SSHD" ] || die "$SSHD not found (apt-get install openssh-server openssh-sftp-server)"
  command -v ssh-keygen >/dev/null || die "ssh-keygen not found (apt-get install openssh-client)"
  [ "$(id -u)" = 0 ] || die "must run as root (sshd needs it to switch to the test user)"
  mkdir -m 0700 "$dir" || die "$dir must not exist yet"
  mkdir -m 0755 -p /run/sshd
  ensure_user "$SFTP_USER" "$SFTP_HOME"
  install -d -m 0755 -o "$SFTP_USER" -g "$(id -gn "$SFTP_USER")" "$SFTP_HOME"
  ensure_user "$JAIL_USER" /work

  ssh-keygen -q -t ed25519 -N '' -C seamfs-sftp-host -f "$dir/host_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C seamfs-sftp-user -f "$dir/user_ed25519"
  cp "$dir/user_ed25519.pub" "$dir/authorized_keys"
  chmod 0644 "$dir/authorized_keys"
  # sshd reads authorized_keys as the user: the directory must be traversable.
  chmod 0711 "$dir"
  local root
  root=$(mktemp -d "$SFTP_HOME/run-XXXXXXXX")
  chown "$SFTP_USER:" "$root"
  chmod 0755 "$root"
  echo "$root" >"$dir/root"
  make_jail "$dir"
  local jail
  jail=$(cat "$dir/jail")

  local port attempt pid=
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 40000))
    cat >"$dir/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
AddressFamily inet
HostKey $dir/host_ed25519
AuthorizedKeysFile $dir/authorized_keys
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin no
AllowUsers $SFTP_USER $JAIL_USER
AllowTcpForwarding no
AllowAgentForwarding no
X11Forwarding no
PermitTTY no
Subsystem sftp internal-sftp
ForceCommand internal-sftp
MaxStartups 100:30:200
MaxSessions 50
LogLevel INFO
Match User $JAIL_USER
  ChrootDirectory $jail
  ForceCommand internal-sftp -d /work
EOF
    "$SSHD" -t -f "$dir/sshd_config" || die "sshd -t rejected $dir/sshd_config"
    : >"$dir/sshd.log"
    "$SSHD" -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/pid"
    # Listening once sshd says so; a taken port makes it exit instead.
    for _ in $(seq 250); do
      grep -q "Server listening on 127.0.0.1 port $port" "$dir/sshd.log" && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.02
    done
    if kill -0 "$pid" 2>/dev/null && grep -q "Server listening on 127.0.0.1 port $port" "$dir/sshd.log"; then break; fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
  done
  [ -n "$pid" ] || { cat "$dir/sshd.log" >&2; stop "$dir"; die "sshd did not start"; }

  local banner=
  exec 3<>"/dev/tcp/127.0.0.1/$port" || { stop "$dir"; die "cannot connect to 127.0.0.1:$port"; }
  read -r -t 5 banner <&3 || true
  exec 3<&- 3>&-
  case "$banner" in SSH-2.0-OpenSSH*) ;; *) stop "$dir"; die "unexpected banner on port $port: $banner" ;; esac

  if [ -n "$watch" ]; then
    (
      trap '' HUP
      while alive "$watch" && alive "$pid"; do sleep 1; done
      if alive "$pid"; then "$0" stop "$dir"; fi
    ) </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/watchdog"
  fi

  echo "SFTP_HOST=127.0.0.1"
  echo "SFTP_PORT=$port"
  echo "SFTP_USER=$SFTP_USER"
  echo "SFTP_KEY=$dir/user_ed25519"
  echo "SFTP_HOSTKEY_SHA256=$(ssh-keygen -l -E sha256 -f "$dir/host_ed25519.pub" | cut -d' ' -f2)"
  echo "SFTP_ROOT=$root"
  echo "SFTP_PID=$pid"
  echo "SFTP_CHROOT_USER=$JAIL_USER"
  echo "SFTP_CHROOT_DIR=$jail"
  echo "SFTP_CHROOT_ROOT=/work"
}

case "${1:-}" in
  start) [ $# -ge 2 ] || die "usage: $0 start DIR [WATCH_PID]"; start "$2" "${3:-}" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  *) die "usage: $0 start DIR [WATCH_PID] | stop DIR" ;;
esac

#!/usr/bin/env bash
# Boots a throwaway single-node Ceph cluster serving S3 on 127.0.0.1:
# one mon (msgr2 only), one memstore OSD, radosgw (beast, tcp_nodelay=1),
# a user with fixed keys, an unversioned and a versioned bucket.
#
#   start-s3.sh DIR MON_PORT RGW_PORT OSD_PORT_MIN OSD_PORT_MAX
#
# DIR must be a fresh empty directory: every path the daemons use (config,
# keyring, data, sockets, logs) is inside it, nothing touches /etc/ceph or
# /var/log/ceph. Daemons run in the foreground with `&`, their stdio goes to
# DIR/log (so a caller capturing this script's output does not hang) and their
# PIDs to DIR/pids. On success it writes DIR/env and prints "S3 ready"; on any
# failure it prints the log tails, kills what it started and exits non-zero.
# stop-s3.sh DIR stops the daemons by PID and removes DIR.
set -Eeuo pipefail

DIR=$1 MON_PORT=$2 RGW_PORT=$3 OSD_PORT_MIN=$4 OSD_PORT_MAX=$5
# Fixed for the life of this cluster, fresh for each: a request that reaches some other server on a
# reused port fails authentication instead of passing for ours.
ACCESS_KEY=seamfs-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
SECRET_KEY=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
REGION=us-east-1
BUCKET=seamfs
VERSIONED_BUCKET=seamfs-versioned
ENDPOINT=http://127.0.0.1:$RGW_PORT
CONF=$DIR/ceph.conf
T0=$(date +%s%N)

say() { echo "[start-s3 +$(( ($(date +%s%N) - T0) / 1000000 )) ms] $*"; }

fail() {
  echo "start-s3: FAILED: $*" >&2
  for log in "$DIR"/log/*.log; do
    [ -f "$log" ] || continue
    echo "----- tail of $log -----" >&2
    tail -n 30 "$log" >&2 || true
  done
  "$(dirname "$0")/stop-s3.sh" "$DIR" --keep >&2 || true
  exit 1
}
trap 'fail "command failed at line $LINENO"' ERR

# Fails at once when a daemon started so far has exited (a port taken in between, a bad config).
daemons_alive() {
  local name pid
  while read -r name pid; do
    kill -0 "$pid" 2>/dev/null || fail "$name (pid $pid) exited; see $DIR/log"
  done <"$DIR/pids"
}

# Polls `$@` every 50 ms until it succeeds, for at most $1 seconds.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    daemons_alive
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out after ${seconds}s waiting for $what"
    sleep 0.05
  done
  daemons_alive
}

start_daemon() { # name, command...
  local name=$1
  shift
  "$@" >"$DIR/log/$name.stdio.log" 2>&1 &
  echo "$name $!" >>"$DIR/pids"
}

mkdir -p "$DIR"/{mon,osd/0,rgw,run,log,tmp}
: >"$DIR/pids"
FSID=$(cat /proc/sys/kernel/random/uuid)
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)

cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon_host = [v2:127.0.0.1:$MON_PORT]
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_msgr1 = false
ms_bind_msgr2 = true
ms_bind_ipv6 = false
ms_bind_port_min = $OSD_PORT_MIN
ms_bind_port_max = $OSD_PORT_MAX
# A taken port fails the boot at once (the caller retries with other ports) instead of 3 x 5 s.
ms_bind_retry_count = 1
ms_bind_retry_delay = 1
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
keyring = $DIR/keyring
run_dir = $DIR/run
admin_socket = $DIR/run/\$name.asok
log_file = $DIR/log/\$name.log
log_to_stderr = false
err_to_stderr = true
mon_cluster_log_file = $DIR/log/cluster.log
mon_data = $DIR/mon/\$id
osd_data = $DIR/osd/\$id
tmp_dir = $DIR/tmp
osd_objectstore = memstore
memstore_device_bytes = 4294967296
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
paxos_propose_interval = 0.05
paxos_min_wait = 0.01
[client.rgw]
rgw_frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw_data = $DIR/rgw
EOF

say "keyring and monmap"
ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$DIR/keyring" --gen-key -n client.admin \
  --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
ceph-authtool "$DIR/keyring" --gen-key -n osd.0 \
  --cap mon 'allow profile osd' --cap osd 'allow *' --cap mgr 'allow profile osd' >/dev/null
ceph-authtool "$DIR/keyring" --gen-key -n client.rgw \
  --cap mon 'allow rw' --cap osd 'allow rwx' --cap mgr 'allow rw' >/dev/null
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null

say "mon"
ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/keyring" >"$DIR/log/mon-mkfs.log" 2>&1
start_daemon mon ceph-mon -c "$CONF" -i a -f
ceph_cli() { timeout 20 ceph -c "$CONF" --connect-timeout 15 "$@"; }
# Short attempts, so a mon that died (a taken port) is noticed between them.
mon_up() { timeout 3 ceph -c "$CONF" --connect-timeout 2 mon stat; }
wait_for 20 "the mon's quorum" mon_up

say "osd"
OSD_ID=$(ceph_cli osd new "$OSD_UUID")
[ "$OSD_ID" = 0 ] || fail "expected osd id 0, got '$OSD_ID'"
ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$OSD_UUID" >"$DIR/log/osd-mkfs.log" 2>&1
start_daemon osd ceph-osd -c "$CONF" -i 0 -f

say "radosgw"
start_daemon rgw radosgw -c "$CONF" -n client.rgw -f
wait_for 60 "radosgw to answer HTTP" curl -sf --max-time 2 "$ENDPOINT/"

say "user and buckets"
timeout 30 radosgw-admin -c "$CONF" -n client.admin user create --uid=seamfs --display-name=seamfs \
  --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >"$DIR/log/user-create.log" 2>&1
s3() { # method, path, [curl args...]
  local method=$1 path=$2
  shift 2
  curl -sf --max-time 10 --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -X "$method" "$ENDPOINT$path" "$@"
}
# A fresh user may take a moment to be visible to radosgw's cache: retry.
wait_for 10 "bucket $BUCKET" s3 PUT "/$BUCKET"
wait_for 10 "bucket $VERSIONED_BUCKET" s3 PUT "/$VERSIONED_BUCKET"
s3 PUT "/$VERSIONED_BUCKET?versioning=" -H 'Content-Type: application/xml' \
  --data '<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>Enabled</Status></VersioningConfiguration>' >/dev/null
s3 GET "/$VERSIONED_BUCKET?versioning=" | grep -q '<Status>Enabled</Status>' || fail "versioning was not enabled"

cat >"$DIR/env" <<EOF
S3_ENDPOINT=$ENDPOINT
S3_REGION=$REGION
S3_ACCESS_KEY=$ACCESS_KEY
S3_SECRET_KEY=$SECRET_KEY
S3_BUCKET=$BUCKET
S3_VERSIONED_BUCKET=$VERSIONED_BUCKET
S3_FORCE_PATH_STYLE=true
EOF
trap - ERR
say "S3 ready at $ENDPOINT"

# SPDX-License-Identifier: Apache-2.0
# Sourced by e2e scripts: a throwaway single-node Slurm cluster in $T/slurm, every daemon in the
# foreground as a child of the test, bound to 127.0.0.1 (reference/slurm.md has the facts:
# munge's socket dir must be o+x, cred_expire=5 and a 2 s scheduler so a requeued job starts
# again in seconds instead of 121, NodeName from `slurmd -C`, unique ports and pid files).
# With a second argument of 2: two compute nodes, node1 and node2, each its own slurmd on
# 127.0.0.1 with its own port (Debian's Slurm is built with MULTIPLE_SLURMD; real-tools-2.md §3).
# With REST=1 set: JWT authentication as well (slurm_rest_up starts slurmrestd).
MUNGED_PID="" SLURMCTLD_PID="" SLURMD_PID="" SLURMRESTD_PID=""

slurm_up() {  # slurm_up CTLD_PORT [NODES]
  S=$T/slurm
  mkdir -p "$S/etc" "$S/state" "$S/spool" "$S/log" "$S/run" "$S/munge"
  chmod 755 "$S/munge"
  mungekey -c -f -k "$S/munge/munge.key" >/dev/null 2>&1
  munged -F --socket="$S/munge/munge.socket" --key-file="$S/munge/munge.key" --pid-file="$S/munge/munged.pid" \
    --log-file="$S/munge/munged.log" --seed-file="$S/munge/munged.seed" >"$S/log/munged.out" 2>&1 &
  MUNGED_PID=$!
  wait_for 10 test -S "$S/munge/munge.socket" || { fail "munged did not start"; cat "$S/log/munged.out"; return 1; }
  nodes=${2:-1}
  hw=$(slurmd -C | head -n 1 | cut -d' ' -f2-)
  if [ "$nodes" = 1 ]; then
    node_lines="NodeName=localhost NodeAddr=127.0.0.1 $hw State=UNKNOWN"
    node_names=localhost
  else
    node_lines="NodeName=node1 NodeAddr=127.0.0.1 Port=$(($1 + 2)) $hw State=UNKNOWN
NodeName=node2 NodeAddr=127.0.0.1 Port=$(($1 + 3)) $hw State=UNKNOWN"
    node_names="node1 node2"
    mkdir -p "$S/spool/node1" "$S/spool/node2"
  fi
  jwt=''
  if [ "${REST:-0}" = 1 ]; then
    dd if=/dev/urandom of="$S/etc/jwt_hs256.key" bs=32 count=1 status=none
    chmod 600 "$S/etc/jwt_hs256.key"
    jwt="AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$S/etc/jwt_hs256.key"
  fi
  cat > "$S/etc/slurm.conf" <<CONF
ClusterName=envpin-e2e
SlurmctldHost=localhost
SlurmctldPort=$1
SlurmdPort=$(($1 + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/munge.socket,cred_expire=5
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd-%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd-%n.log
$jwt
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
JobRequeue=1
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SchedulerParameters=sched_interval=2,bf_interval=1
$node_lines
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  SLURM_CONF=$S/etc/slurm.conf
  export SLURM_CONF
  slurmctld -D -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
  SLURMCTLD_PID=$!
  SLURMD_PID=''
  for n in $node_names; do
    mkdir -p "$S/spool/$n"
    slurmd -D -N "$n" -f "$SLURM_CONF" >"$S/log/slurmd-$n.out" 2>&1 &
    SLURMD_PID="$SLURMD_PID $!"
  done
  wait_for 30 sh -c '[ -z "$(sinfo -h -o %T | grep -v "^idle$")" ] && [ -n "$(sinfo -h -o %T)" ]' ||
    { fail "the slurm nodes did not become idle"; sinfo; tail -5 "$S/log/slurmctld.out" "$S"/log/slurmd-*.out; return 1; }
}

# slurmrestd on 127.0.0.1:PORT with JWT (slurm_up with REST=1 first), as nobody; SLURM_JWT for
# the caller from `scontrol token`.
slurm_rest_up() {  # slurm_rest_up PORT
  SLURM_JWT=daemon slurmrestd -f "$SLURM_CONF" -a rest_auth/jwt -s openapi/v0.0.38 -u nobody "127.0.0.1:$1" \
    >"$S/log/slurmrestd.out" 2>&1 &
  SLURMRESTD_PID=$!
  eval "$(scontrol token lifespan=3600)"
  export SLURM_JWT
  wait_for 20 curl -sf -H "X-SLURM-USER-NAME: $(id -un)" -H "X-SLURM-USER-TOKEN: $SLURM_JWT" "http://127.0.0.1:$1/slurm/v0.0.38/ping" ||
    { fail "slurmrestd did not answer"; cat "$S/log/slurmrestd.out"; return 1; }
}

slurm_down() {
  [ -n "$SLURMCTLD_PID" ] || return 0
  # Jobs first: their processes are not children of slurmd and outlive it.
  scancel -u "$(id -un)" 2>/dev/null
  wait_for 20 sh -c '[ -z "$(squeue -h -o %i)" ]'
  for pid in $SLURMRESTD_PID $SLURMD_PID $SLURMCTLD_PID $MUNGED_PID; do kill "$pid" 2>/dev/null; done
  for pid in $SLURMRESTD_PID $SLURMD_PID $SLURMCTLD_PID $MUNGED_PID; do wait "$pid" 2>/dev/null; done
  SLURMCTLD_PID=""
}

# SPDX-License-Identifier: Apache-2.0
# Sourced by e2e scripts: a throwaway single-node Slurm cluster in $T/slurm, every daemon in the
# foreground as a child of the test, bound to 127.0.0.1 (reference/slurm.md has the facts:
# munge's socket dir must be o+x, cred_expire=5 and a 2 s scheduler so a requeued job starts
# again in seconds instead of 121, NodeName from `slurmd -C`, unique ports and pid files).
MUNGED_PID="" SLURMCTLD_PID="" SLURMD_PID=""

slurm_up() {  # slurm_up CTLD_PORT
  S=$T/slurm
  mkdir -p "$S/etc" "$S/state" "$S/spool" "$S/log" "$S/run" "$S/munge"
  chmod 755 "$S/munge"
  mungekey -c -f -k "$S/munge/munge.key" >/dev/null 2>&1
  munged -F --socket="$S/munge/munge.socket" --key-file="$S/munge/munge.key" --pid-file="$S/munge/munged.pid" \
    --log-file="$S/munge/munged.log" --seed-file="$S/munge/munged.seed" >"$S/log/munged.out" 2>&1 &
  MUNGED_PID=$!
  wait_for 10 test -S "$S/munge/munge.socket" || { fail "munged did not start"; cat "$S/log/munged.out"; return 1; }
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
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
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
NodeName=localhost NodeAddr=127.0.0.1 $(slurmd -C | head -n 1 | cut -d' ' -f2-) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  SLURM_CONF=$S/etc/slurm.conf
  export SLURM_CONF
  slurmctld -D -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
  SLURMCTLD_PID=$!
  slurmd -D -N localhost -f "$SLURM_CONF" >"$S/log/slurmd.out" 2>&1 &
  SLURMD_PID=$!
  wait_for 30 sh -c '[ "$(sinfo -h -n localhost -o %T)" = idle ]' ||
    { fail "the slurm node did not become idle"; tail -5 "$S/log/slurmctld.out" "$S/log/slurmd.out"; return 1; }
}

slurm_down() {
  [ -n "$SLURMCTLD_PID" ] || return 0
  # Jobs first: their processes are not children of slurmd and outlive it.
  scancel -u "$(id -un)" 2>/dev/null
  wait_for 20 sh -c '[ -z "$(squeue -h -o %i)" ]'
  for pid in $SLURMD_PID $SLURMCTLD_PID $MUNGED_PID; do kill "$pid" 2>/dev/null; done
  for pid in $SLURMD_PID $SLURMCTLD_PID $MUNGED_PID; do wait "$pid" 2>/dev/null; done
  SLURMCTLD_PID=""
}

# SPDX-License-Identifier: Apache-2.0
# Sourced by the e2e scripts that run tests/e2e/jobs/train.sh as envpin jobs, from the project
# directory: what a job's log, status and checkpoint say. REF is the digest of an uninterrupted run.
digest_of() { sed -n 's/^digest //p' "logs/$1.log" | tail -n 1; }
resumed_at() { sed -n 's/^resumed at step //p' "logs/$1.log" | tail -n 1; }
state_of() { sed -n 's/^state=//p' "logs/$1.status" 2>/dev/null; }
checkpoint_step() { cut -d' ' -f1 "ckpt/$1/checkpoint" 2>/dev/null || echo 0; }
at_least_step() { [ "$(checkpoint_step "$1")" -ge "$2" ]; }
ended() { case $(state_of "$1") in exited | failed | stopped) return 0 ;; esac; return 1; }
expect_resumed() {  # JOB WHAT
  d=$(digest_of "$1")
  r=$(resumed_at "$1")
  if [ "$d" = "$REF" ] && [ -n "$r" ] && [ "$r" -gt 0 ]; then
    pass
    step "$2: resumed at step $r, digest $d"
  else
    fail "$2: digest '$d' (uninterrupted: $REF), resumed at '${r:-never}'"
    tail -n 20 "logs/$1.log"
  fi
}
# The events the notification server (jobs/notify_server.py) recorded in $T/events.jsonl.
events_of() {  # JOB: its events, in order, "EVENT EXIT," each
  /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(json.loads(line)["body"])
    if e["job"] == sys.argv[2]: print(e["event"], json.dumps(e["exit"]))' "$T/events.jsonl" "$1" 2>/dev/null | tr '\n' ','
}

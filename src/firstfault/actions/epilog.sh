#!/bin/sh
# firstfault's EpilogSlurmctld: attribute every Slurm job that did not complete.
#
#   slurm.conf:  EpilogSlurmctld=/etc/slurm/firstfault-epilog.sh
#   (a copy of this file; docs/actions.md says where the package ships it)
#
# slurmctld runs this on the controller after every job, as SlurmUser, with no
# PATH and no SLURM_CONF. It returns at once: the work runs detached in its
# own session (setsid), stdin/stdout/stderr on /dev/null and a log file, so
# slurmctld never waits on it and neither its clean-up of the epilog's process
# group nor its epilog timeout kills it. The
# detached part is bounded: it waits at most FIRSTFAULT_WAIT seconds for the
# accounting database to record the job's end, runs at most
# FIRSTFAULT_MAX_RUNNING analyses at once (others are skipped, and logged),
# and kills an analysis after FIRSTFAULT_TIMEOUT seconds. A job that ended
# COMPLETED is not analysed. `firstfault watch` is the exactly-once path; this
# one is best effort and fast.
#
# Settings: a shell file of VAR=value lines, /etc/firstfault/epilog.env unless
# FIRSTFAULT_EPILOG_ENV names another one (every variable in it is exported,
# so SLURM_CONF or PYTHONPATH can be set there too):
#   FIRSTFAULT          the command to run, full path (split on spaces)   [/usr/local/bin/firstfault]
#   FIRSTFAULT_CONFIG   the cluster.yaml                                   [/etc/firstfault/cluster.yaml]
#   FIRSTFAULT_LOG      where the detached part writes                     [/var/log/firstfault/epilog.log]
#   FIRSTFAULT_RUN_DIR  lock files for the concurrency bound               [/run/firstfault]
#   FIRSTFAULT_TIMEOUT  seconds one analysis may take                      [600]
#   FIRSTFAULT_WAIT     seconds to wait for the job's end in accounting    [120]
#   FIRSTFAULT_MAX_RUNNING  analyses at once                               [4]
#   SACCT               sacct, full path                                   [/usr/bin/sacct]

PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

env_file=${FIRSTFAULT_EPILOG_ENV:-/etc/firstfault/epilog.env}
if [ -r "$env_file" ]; then
    set -a
    # shellcheck disable=SC1090
    . "$env_file"
    set +a
fi
: "${FIRSTFAULT:=/usr/local/bin/firstfault}"
: "${FIRSTFAULT_CONFIG:=/etc/firstfault/cluster.yaml}"
: "${FIRSTFAULT_LOG:=/var/log/firstfault/epilog.log}"
: "${FIRSTFAULT_RUN_DIR:=/run/firstfault}"
: "${FIRSTFAULT_TIMEOUT:=600}"
: "${FIRSTFAULT_WAIT:=120}"
: "${FIRSTFAULT_MAX_RUNNING:=4}"
: "${SACCT:=/usr/bin/sacct}"

log() {
    printf '%s firstfault-epilog job %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$job" "$*"
}

if [ "${1:-}" != "--detached" ]; then
    # The part slurmctld waits for: hand the job to a detached copy of this script, then exit 0.
    job=${SLURM_JOB_ID:-}
    case $job in
        '' | *[!0-9_+]*) exit 0 ;;  # not a job id: nothing to do, never an epilog failure
    esac
    mkdir -p "$(dirname "$FIRSTFAULT_LOG")" "$FIRSTFAULT_RUN_DIR" 2>/dev/null
    ready="$FIRSTFAULT_RUN_DIR/started.$job.$$"
    setsid "$0" --detached "$job" "$ready" </dev/null >>"$FIRSTFAULT_LOG" 2>&1 &
    # slurmctld kills the epilog's process group once the epilog exits: wait (5 s at most)
    # until the copy has a session of its own, or it would die with the group.
    n=0
    while [ ! -e "$ready" ] && [ "$n" -lt 100 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    rm -f "$ready"
    exit 0
fi

job=$2
: >"$3"  # in our own session now (setsid): the epilog may exit

# A slot among FIRSTFAULT_MAX_RUNNING: a lock on fd 9 held until this process ends.
slot=0
i=1
while [ "$i" -le "$FIRSTFAULT_MAX_RUNNING" ]; do
    exec 9>>"$FIRSTFAULT_RUN_DIR/slot.$i"
    if flock -n 9; then
        slot=$i
        break
    fi
    exec 9>&-
    i=$((i + 1))
done
if [ "$slot" -eq 0 ]; then
    log "skipped: $FIRSTFAULT_MAX_RUNNING analyses already running (firstfault watch catches up)"
    exit 0
fi

# slurmctld runs the epilog about when it sends the job's end to slurmdbd: wait for it.
state=
waited=0
while :; do
    state=$(timeout 10 "$SACCT" -n -X -P -j "$job" -o State 2>/dev/null | tail -n 1 | cut -d ' ' -f 1)
    case $state in
        COMPLETED)
            log "completed: not analysed"
            exit 0 ;;
        FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE)
            break ;;
    esac
    if [ "$waited" -ge "$FIRSTFAULT_WAIT" ]; then
        log "no end recorded in accounting after ${FIRSTFAULT_WAIT}s (state '${state}'): not analysed"
        exit 0
    fi
    sleep 1
    waited=$((waited + 1))
done

log "$state: running firstfault (slot $slot)"
# shellcheck disable=SC2086
timeout -k 10 "$FIRSTFAULT_TIMEOUT" $FIRSTFAULT run --config "$FIRSTFAULT_CONFIG" --job "$job" --quiet
rc=$?
case $rc in
    0) log "done" ;;
    124 | 137) log "killed after ${FIRSTFAULT_TIMEOUT}s" ;;
    *) log "firstfault exited $rc" ;;
esac
exit 0

"""Recovery actions on verdicts: Slurm drain and Kubernetes cordon, under one policy (docs/actions.md).

policy.py  which verdicts and nodes qualify, the hourly and share limits (pure)
slurm.py   sinfo / scontrol update state=drain
kube.py    spec.unschedulable + a NoSchedule taint through the official client
actor.py   applies the policy through a backend, records every decision in the store
epilog.sh  an EpilogSlurmctld that runs `firstfault run --job` for jobs that did not complete
"""

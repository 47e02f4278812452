"""The formats a workload.yaml source may declare (spec/evidence-bundle.md `format`).

Scheduler, metrics, flight-recorder, stack-dump and fabric formats; flight-recorder and stack-dump formats are
optional: the readers sniff. One list: workload.yaml's SourceSpec (bundle.py) and collect/wire.py's request form
take it from here. Also the columns of the `sacct`
format, which the Slurm connector (identify/slurm.py) writes and the scheduler reader (extract/scheduler.py)
reads.
"""

from typing import Literal, get_args

Format = Literal["sacct", "scontrol", "sge-qacct", "sge-messages", "pbs-tracejob", "pbs-qstat", "lsf-bjobs",
                 "lsf-bhist", "flux-jobs", "htcondor-ad", "kueue-workload", "k8s-pods", "k8s-events", "k8s-table",
                 "k8s-describe", "openmetrics",
                 "prometheus-json", "pickle", "json", "py-spy", "faulthandler", "gdb", "lldb", "pystack", "perfquery",
                 "ibnetdiscover",
                 "iblinkinfo", "lldp-json", "fabric-csv"]
FORMATS = frozenset(get_args(Format))

# `sacct -P -o JobID,JobName,State,ExitCode,Start,End,NodeList,Reason` (the bundle spec's form),
# assumed when the header line is missing.
SACCT_DEFAULT_COLUMNS: tuple[str, ...] = (
    "JobID",
    "JobName",
    "State",
    "ExitCode",
    "Start",
    "End",
    "NodeList",
    "Reason",
)

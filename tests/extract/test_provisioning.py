"""A cluster's provisioning and node bootstrap programs failing (catalog/platform.yaml `platform_programs`, part
provision; rule node-provision): their own failure words (`platform_words`), a traceback whose outermost frame is one of
their own files (`frames`), a `CalledProcessError` of one of their steps (`steps`); and the near-misses: the same
programs' INFO and retry lines, a job's traceback through a module of theirs, a job's own subprocess, a cloud API's
quota or stock-out they pass on (catalog/scheduler.yaml decides it), lines whose words decide nothing.

Provenance of the lines: each program's source, the format filled in (GoogleCloudPlatform/slurm-gcp scripts/setup.py
`log.exception("Aborting setup...")`, failed_motd; aws/aws-parallelcluster-node src/slurm_plugin/clustermgtd.py,
slurm_resources.py; aws-samples/awsome-distributed-training LifecycleScripts/base-config/lifecycle_script.py;
canonical/cloud-init cloudinit/config/cc_scripts_user.py), the ParallelCluster user guide
(troubleshooting-fc-v3-create-cluster-v3.md, troubleshooting-fc-v3-compute-node-initialization-v3.md), or the public
thread named beside it.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import platform_program_table, platform_words, provisioning_program, provisioning_step
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.model import Event
from tests.extract import helpers

_PROVISION = {row.program for row in platform_program_table() if row.part == "provision"}


def kinds(lines: list[str], file: str = "app.log") -> list[tuple[str, object]]:
    """Every event's kind and its `program` (platform.error) or `exc_type`, the stream's end read too."""
    ex = Extraction(all_line_extractors())
    out: list[Event] = []
    for i, text in enumerate(lines, 1):
        out.extend(ex.events(Candidate("application", file, i, "n1", None, None, text)))
    out.extend(ex.open_ends())
    return [(e.kind, e.fields.get("program") if e.kind == "platform.error" else e.fields.get("exc_type"))
            for e in out]


def provision(lines: list[str], file: str = "app.log") -> list[object]:
    return [program for kind, program in kinds(lines, file) if kind == "platform.error" and program in _PROVISION]


# ---------------------------------------------------------------- the table


def test_every_provisioning_program_has_a_reading() -> None:
    rows = [row for row in platform_program_table() if row.part == "provision"]
    assert {r.program for r in rows} >= {"aws-parallelcluster", "cfn-bootstrap", "slurm-gcp", "hyperpod-lifecycle",
                                          "cyclecloud-jetpack", "cloud-init"}
    for row in rows:
        assert row.frames or row.steps or any(w.program == row.program for w in platform_words()), row.program


# ---------------------------------------------------------------- their own words, in each line form


_WORDS = [w for w in platform_words() if w.program in _PROVISION]


@pytest.mark.parametrize("row", _WORDS, ids=lambda r: r.text)
@pytest.mark.parametrize("form", [
    # Python logging as slurm-gcp's setup.log writes it (`%(asctime)s %(levelname)s: %(message)s`)
    "2023-08-07 12:04:44,512 ERROR: {text}",
    # ParallelCluster's node daemons (`%(asctime)s - [%(name)s:%(funcName)s] - %(levelname)s - %(message)s`)
    "2026-03-13 04:55:09,414 - [slurm_plugin.clustermgtd:_handle_bootstrap_failure_nodes] - WARNING - {text} (x2)",
    # `pcluster describe-cluster`'s failures and CloudFormation's stack event, quoted in JSON
    '      "failureCode": "{text}",',
    # the line alone (a wall message, a console's copy)
    "{text}",
], ids=["setup-log", "clustermgtd", "json", "alone"])
def test_each_provisioning_programs_own_failure_words_in_each_line_form(row: object, form: str) -> None:
    text = row.text  # type: ignore[attr-defined]
    if row.code_after is not None:  # type: ignore[attr-defined]
        text += "step" + row.code_after + "1"  # type: ignore[attr-defined]  # a step's status other than 0
    assert provision([form.format(text=text)]) == [row.program]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("line", "program"), [
    # aws/aws-parallelcluster#1479 (pcluster create's failed events)
    ("  - AWS::AutoScaling::AutoScalingGroup ComputeFleet Received 2 FAILURE signal(s) out of 2.  Unable to satisfy "
     "100% MinSuccessfulInstancesPercent requirement", "cfn-bootstrap"),
    # the ParallelCluster user guide's clustermgtd lines (troubleshooting-fc-v3-compute-node-initialization-v3.md)
    ("2026-03-13 04:55:09,414 - [slurm_plugin.slurm_resources:is_bootstrap_failure] - WARNING - Node bootstrap error: "
     "Node gpu-st-ml-2(10.0.10.102) is currently in replacement and no backing instance, node state: "
     "DOWN+CLOUD+POWERED_DOWN", "aws-parallelcluster"),
    ("2026-03-13 04:55:09,414 - [slurm_plugin.clustermgtd:_handle_bootstrap_failure_nodes] - WARNING - Found the "
     "following bootstrap failure nodes: (x2) ['gpu-st-ml-1(10.0.10.222)', 'gpu-st-ml-2(10.0.10.102)']",
     "aws-parallelcluster"),
    # slurm-gcp's failed_motd wall message
    ("*** Slurm setup failed! Please view log: /var/log/slurm/setup.log ***", "slurm-gcp"),
])
def test_the_provisioning_programs_say_they_failed(line: str, program: str) -> None:
    assert provision([line]) == [program]


@pytest.mark.parametrize("line", [
    # the same programs' INFO and progress lines (clustermgtd's protected-mode count, its replacement list;
    # slurm-gcp's progress and its retry of the config fetch)
    "2026-03-13 04:55:09,415 - [slurm_plugin.clustermgtd:_handle_protected_mode_process] - INFO - Partitions bootstrap "
    "failure count: {'gpu': {'ml': 6}}, cluster will be set into protected mode if protected failure count reaches "
    "threshold 10",
    "2023-08-03 16:20:37,730 - [slurm_plugin.clustermgtd:_maintain_nodes] - INFO - Following nodes are currently in "
    "replacement: (x1) ['queue-0-st-compute-resource-0-375']",
    "2023-08-07 12:04:08,247 INFO: Setting up controller",
    "2024-01-01 00:00:00,000 ERROR: unexpected error while fetching config, sleeping for 5s",
    "2024-01-01 00:00:00,000 INFO: *** Slurm setup complete ***",
    # CloudFormation's count of successes names no failure
    "Received 0 SUCCESS signal(s) out of 1.  Unable to satisfy 100% MinSuccessfulInstancesPercent requirement",
    # decides nothing: the HyperPod API's summary (aws-samples/awsome-distributed-training#188: the maintainers list
    # capacity, quota, zone and subnet beside the scripts), cloud-init's failed user-data script, ParallelCluster's
    # undetermined failure codes
    'Instance i-0b66516c4a8bfcea4 failed to provision with the following error: "Lifecycle scripts did not run '
    'successfully. Ensure the scripts exist in provided S3 path, are accessible, and run without errors."',
    "2024-01-02 03:04:05,678 - cc_scripts_user.py[WARNING]: Failed to run module scripts-user (scripts in "
    "/var/lib/cloud/instance/scripts)",
    '      "failureCode": "ClusterCreationFailure",',
    '      "failureCode": "ResourceCreationFailure",',
    # a word of the table inside a longer identifier or in prose that is no report
    "see the docs for HeadNodeBootstrapTimeout in DevSettings",
    "we fixed the Aborting setup message in the README",
])
def test_lines_that_decide_nothing(line: str) -> None:
    assert provision([line]) == []


# ---------------------------------------------------------------- their own tracebacks (frames)


@pytest.mark.parametrize(("frames", "program"), [
    (['  File "/slurm/scripts/setup.py", line 1071, in setup_controller'], "slurm-gcp"),
    (['  File "/opt/parallelcluster/pyenv/versions/3.9.16/envs/node_virtualenv/bin/clustermgtd", line 8, in <module>'],
     "aws-parallelcluster"),
    (['  File "/tmp/LifecycleScripts/base-config/lifecycle_script.py", line 170, in <module>'], "hyperpod-lifecycle"),
    (['  File "/usr/bin/cloud-init", line 33, in <module>'], "cloud-init"),
])
def test_the_outermost_frame_names_the_program(frames: list[str], program: str) -> None:
    row = provisioning_program(tuple(frames))
    assert row is not None and row.program == program


def test_a_frame_of_theirs_further_in_is_not_theirs() -> None:
    # a job's script that imports a module of cloud-init: the outermost frame is the job's
    frames = ('  File "/home/user/train.py", line 3, in <module>',
              '  File "/usr/lib/python3/dist-packages/cloudinit/util.py", line 10, in load_file')
    assert provisioning_program(frames) is None


_SETUP_TB = [
    "2023-08-07 12:04:44,512 ERROR: Aborting setup...",
    "Traceback (most recent call last):",
    '  File "/slurm/scripts/setup.py", line 1190, in <module>',
    "    main()",
    '  File "/slurm/scripts/setup.py", line 1071, in setup_controller',
    "    gen_cloud_conf()",
    "ValueError: invalid literal for int() with base 10: '8g'",
]


def test_a_traceback_of_the_program_itself_is_its_failure() -> None:
    got = kinds(_SETUP_TB)
    assert ("platform.error", "slurm-gcp") in got
    assert not any(kind == "app.exception" for kind, _ in got)


def test_the_same_exception_from_a_jobs_own_file_is_the_jobs() -> None:
    lines = [line.replace("/slurm/scripts/setup.py", "/home/user/train.py") for line in _SETUP_TB[1:]]
    assert kinds(lines) == [("app.exception", "ValueError")]


def test_its_frames_where_the_stream_ends_header_cut_off() -> None:
    # GoogleCloudPlatform/cluster-toolkit#1664 (the setup.log excerpt: its header and exception line cut)
    lines = [
        "2023-08-07 12:04:44,512 WARNING: core count in machine type a2-highgpu-8g is not an integer. Default to 1 "
        "socket.",
        "2023-08-07 12:04:44,512 ERROR: invalid literal for int() with base 10: '8g'",
        '  File "/slurm/scripts/setup.py", line 1071, in setup_controller',
        "    gen_cloud_conf()",
        '  File "/slurm/scripts/setup.py", line 341, in gen_cloud_conf',
        "    content = make_cloud_conf(lkp, cloud_parameters=cloud_parameters)",
    ]
    assert provision(lines) == ["slurm-gcp"]


def test_a_jobs_frames_without_header_stay_nothing() -> None:
    # frames without a header are as often a live stack dump (py-spy): a job's stay unread
    lines = ['  File "/home/user/train.py", line 10, in main', "    step()"]
    assert kinds(lines) == []


def test_a_quota_the_program_passed_on_is_the_quota_rows() -> None:
    # the program's traceback whose words a catalog/scheduler.yaml row reads (Compute Engine's quota refusal)
    lines = [
        "Traceback (most recent call last):",
        '  File "/slurm/scripts/resume.py", line 600, in <module>',
        "    main(args.nodelist)",
        "googleapiclient.errors.HttpError: <HttpError 403 \"Quota 'NVIDIA_A100_GPUS' exceeded.  Limit: 0.0 in region "
        "us-central1.\">",
    ]
    assert provision(lines) == []


# ---------------------------------------------------------------- their steps (CalledProcessError)


@pytest.mark.parametrize("step", [s for row in platform_program_table() for s in row.steps])
def test_each_step_of_a_provisioning_program_in_its_called_process_error(step: str) -> None:
    line = f"subprocess.CalledProcessError: Command '['sudo', 'bash', '{step}']' returned non-zero exit status 1."
    assert provision([line]) == ["hyperpod-lifecycle"]


@pytest.mark.parametrize("line", [
    # a job's own script; a step's name inside a longer path; a step's name in prose
    "subprocess.CalledProcessError: Command '['bash', './scripts/train.sh']' returned non-zero exit status 1.",
    "subprocess.CalledProcessError: Command '['bash', './utils/install_docker.sh.bak']' returned non-zero exit "
    "status 1.",
    "ERROR: ./utils/install_docker.sh did not finish, see the log",
])
def test_not_a_step(line: str) -> None:
    assert provision([line]) == []
    assert provisioning_step(line) is None or "CalledProcessError" not in line


def test_the_hyperpod_step_through_the_tests_feed() -> None:
    # aws-samples/awsome-distributed-training#96 (the lifecycle script's CloudWatch log)
    line = ("subprocess.CalledProcessError: Command '['sudo', 'bash', './utils/install_docker.sh']' returned non-zero "
            "exit status 100.")
    got = [(e.kind, e.fields.get("part")) for e in helpers.events([line], "application", node="n1")]
    assert got == [("platform.error", "provision")]


# ---------------------------------------------------------------- a cloud's refusal the provisioning program passes on


def _reads(line: str) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("refusal")) for e in helpers.events([line], "syslog", node="ctrl")]


def test_a_quota_slurm_gcp_set_as_the_nodes_reason_is_the_jobs_set_up() -> None:
    # GoogleCloudPlatform/cluster-toolkit#3225 (slurmctld.log: resume.py's `GCP Error: <message>` as the node's reason)
    line = ("[2024-11-06T11:23:46.199] update_node: node hpcslurm-c4nodeset-1 reason set to: GCP Error: Quota "
            "CPUS_PER_VM_FAMILY exceeded. Limit: 12.0 in region europe-west4.")
    assert _reads(line) == [("app.exception", "over_quota")]
    assert provision([line]) == []


def test_a_stock_out_slurm_gcp_set_as_the_nodes_reason_is_no_cause() -> None:
    # Compute Engine's stock-out message (its documentation, "Troubleshooting resource availability errors":
    # ZONE_RESOURCE_POOL_EXHAUSTED), in the same reason form: no quota, no fault of the job's or a node's (unknown)
    line = ("[2024-11-06T11:23:46.199] update_node: node hpc-a2nodeset-1 reason set to: GCP Error: The zone "
            "'projects/p/zones/us-central1-a' does not have enough resources available to fulfill the request.  Try a "
            "different zone, or try again later.")
    assert _reads(line) == []
    assert provision([line]) == []


def _node_down(lines: list[str]) -> list[object]:
    return [e.fields.get("reason") for e in helpers.events(lines, "syslog", node="ctrl") if e.kind == "sched.node_down"]


_REQUEUE = [
    "[2024-11-06T11:23:46.199] requeue job JobId=2 due to failure of node hpcslurm-c4nodeset-1",
    "[2024-11-06T11:23:46.199] update_node: node hpcslurm-c4nodeset-1 state set to DOWN",
]


@pytest.mark.parametrize("reason", [
    # GoogleCloudPlatform/cluster-toolkit#3225: the project's quota (the job's set-up)
    "GCP Error: Quota CPUS_PER_VM_FAMILY exceeded. Limit: 12.0 in region europe-west4.",
    # Compute Engine's stock-out in the same form (no cause)
    "GCP Error: The zone 'projects/p/zones/europe-west4-a' does not have enough resources available to fulfill the "
    "request.  Try a different zone, or try again later.",
])
def test_a_node_the_cloud_refused_to_create_did_not_fail(reason: str) -> None:
    # slurm-gcp's resume.py sets the node DOWN with the cloud's error as its reason; slurmctld's requeue `due to
    # failure of node` that follows is that refusal's, not a node that failed under the job
    lines = [f"[2024-11-06T11:23:46.199] update_node: node hpcslurm-c4nodeset-1 reason set to: {reason}", *_REQUEUE]
    assert _node_down(lines) == []


@pytest.mark.parametrize("reason", [
    "maintenance",  # an administrator's reason: no cloud's refusal
    "Not responding",
])
def test_a_node_downed_for_another_reason_still_failed(reason: str) -> None:
    lines = [f"[2024-11-06T11:23:46.199] update_node: node hpcslurm-c4nodeset-1 reason set to: {reason}", *_REQUEUE]
    assert "node failure" in _node_down(lines)  # (slurmctld's `Not responding` reason is a node_down of its own too)


def test_the_refusal_is_of_its_own_node_only() -> None:
    lines = ["[2024-11-06T11:23:46.199] update_node: node hpcslurm-c4nodeset-0 reason set to: GCP Error: Quota "
             "CPUS_PER_VM_FAMILY exceeded. Limit: 12.0 in region europe-west4.", *_REQUEUE]
    assert _node_down(lines) == ["node failure"]


def test_parallelclusters_resume_passing_on_a_stock_out_decides_nothing_of_its_own() -> None:
    # aws/aws-parallelcluster#2716 (slurm_resume.log): the EC2 stock-out decides (no cause); slurm_resume's own
    # `Failed to launch following nodes, setting nodes to down` is no row
    lines = [
        "2021-05-18 14:05:41,318 - [slurm_plugin.common:add_instances_for_nodes] - ERROR - Encountered exception when "
        "launching instances for nodes (x1) ['gpu1-dy-g4dnxlarge-7']: An error occurred (InsufficientInstanceCapacity) "
        "when calling the RunInstances operation (reached max retries: 1): We currently do not have sufficient "
        "g4dn.xlarge capacity in the Availability Zone you requested (us-east-1a).",
        "2021-05-18 14:05:41,320 - [slurm_plugin.resume:_resume] - ERROR - Failed to launch following nodes, setting "
        "nodes to down: (x1) ['gpu1-dy-g4dnxlarge-7']",
    ]
    assert provision(lines) == []


# Chef's record of a cookbook's resource that failed as the node converged (aws/aws-parallelcluster#3878, its two lines
# as the image builder's log wrapped them), and the Azure guest agent unable to set up the RDMA device
# (Azure/WALinuxAgent#3025): the node's provisioning
@pytest.mark.parametrize(
    ("lines", "program"),
    [
        (["| 2022-03-10T19:01:07.400-08:00 | Stdout: [2022-03-11T03:01:07+00:00] ",
          "FATAL: Chef::Exceptions::Package: apt_package[lustre-client-modules-5.13.0-1017-aws] ",
          "(aws-parallelcluster-install::lustre line 89) had an error: Chef::Exceptions::Package: ",
          "No candidate version available for lustre-client-modules-5.13.0-1017-aws"], "chef"),
        (["template[/etc/parallelcluster/slurm_plugin/parallelcluster_clustermgtd.conf] (aws-parallelcluster-slurm::"
          "config_head_node line 12) had an error: Chef::Exceptions::FileNotFound: template[...] cannot find a file"],
         "chef"),
        (["2024-01-18T06:33:19.000495Z ERROR Daemon Daemon Error setting up rdma device: [ProtocolError] Error "
          "fetching goal state"], "walinuxagent"),
    ],
)
def test_chef_and_the_azure_guest_agent_failing_are_the_nodes_provisioning(lines: list[str], program: str) -> None:
    assert provision(lines) == [program]


@pytest.mark.parametrize(
    "lines",
    [
        # a resource with ignore_failure: Chef logs it without the exception's class and goes on
        (["package[htop] (site::default line 3) had an error: No candidate version available for htop"]),
        # a command a resource ran that failed or timed out: the command's own lines decide
        (["service[nvidia-fabricmanager] (aws-parallelcluster-platform::nvidia_config line 35) had an error: "
          "Mixlib::ShellOut::CommandTimeout: Command timed out after 900s:"]),
        # the agent's INFO lines around its RDMA set-up
        (["2024-01-18T06:33:19.000375Z INFO Daemon Daemon RDMA capabilities are enabled in configuration"]),
    ],
)
def test_chef_going_on_and_the_agents_info_lines_are_no_failure(lines: list[str]) -> None:
    assert provision(lines) == []


# The virtualization layer that makes a VM the job's node (a GPU passed through, or a vGPU): the VM not made or not
# started, in each manager's words (libvirt/libvirt tools/virsh-domain.c, src/qemu/qemu_monitor.c; openstack/nova
# nova/compute/manager.py; OpenNebula/one src/vmm_mad/remotes/kvm/deploy; proxmox/qemu-server PVE/QemuServer.pm;
# Hyper-V's start-failure event), verbatim where a thread is named
@pytest.mark.parametrize(("lines", "program"), [
    # OpenNebula/one#5968 (virsh's error and the deploy script's, one line in the VM's log)
    (["Fri Sep 30 17:45:23 2022: DEPLOY: Directory '/sys/class/mdev_bus/0000:04:00.0' does not exist error: Failed to "
      "create domain from /var/lib/one/datastores/110/1814/deployment.0 error: device not found: mediated device "
      "'f7cdd2bc-e0bc-51f5-bdf3-62261edc310c' not found Could not create domain from "
      "/var/lib/one/datastores/110/1814/deployment.0 ExitCode: 255"], "libvirt"),
    (["error: Failed to start domain 'gpu-vm'",
      "error: internal error: qemu unexpectedly closed the monitor: 2024-01-05T10:00:00.000000Z qemu-system-x86_64: "
      "-device vfio-pci,host=0000:01:00.0: vfio 0000:01:00.0: failed to setup container for group 14"], "libvirt"),
    # vexxhost/atmosphere#3313 (nova-compute's record wrapped as it was pasted: `instance:` on the next line)
    (["2025-12-01 15:28:44.943 119149 ERROR nova.compute.manager [None",
      "[instance: 5d225309-1b68-4033-bead-ac163798f6a6] Failed to build and run",
      "instance: libvirt.libvirtError: Cannot find 'mdevctl' in path: No such"], "nova-compute"),
    (["TASK ERROR: start failed: QEMU exited with code 1"], "proxmox-ve"),
    # jamesstringer90/Easy-GPU-PV#153
    (["'GPUPV' failed to start. (Virtual machine ID", "D39289D4-2206-40F8-BB57-6D57C03D35BF)"], "hyper-v"),
])
def test_a_vm_its_hypervisor_did_not_make_is_the_nodes_provisioning(lines: list[str], program: str) -> None:
    assert provision(lines)[:1] == [program]


@pytest.mark.parametrize("lines", [
    # the same managers' progress lines, and a guest's own unit that did not start
    (["Domain 'gpu-vm' started"]),
    (["2025-12-01 15:28:40.101 119149 INFO nova.compute.manager [instance: 5d225309-1b68-4033-bead-ac163798f6a6] "
      "Took 2.01 seconds to build instance."]),
    (["TASK OK"]),
    (["Dec 01 10:00:00 gpu-vm systemd[1]: Failed to start Load Kernel Modules."]),
])
def test_a_hypervisors_progress_and_a_guests_own_units_are_no_provisioning_failure(lines: list[str]) -> None:
    assert provision(lines) == []

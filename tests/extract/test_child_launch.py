"""A program that runs the job as its one child and raises subprocess's CalledProcessError with the child's exit
status (extract/traceback.py `_CHILD_LAUNCH`, `launcher_plumbing`): the launcher's word that the job failed, never the
workload's own exception. First seen as a false definitive in wild batch b33 (LLaMA-Factory's CLI running torchrun);
tested here on other threads' lines, through the real extractors and the whole analysis.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.test_b7pass import feed  # every extractor, as the scanner runs them, on an application log

# hiyouga/LlamaFactory#9073 (`llamafactory-cli train` on one machine, two GPUs: its launcher runs torchrun and
# re-raises the child's exit status; the frames are the CLI's, not torchrun's)
LLAMAFACTORY = [
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/llamafactory-cli", line 8, in <module>',
    "    sys.exit(main())",
    '  File "/LLaMA-Factory/src/llamafactory/cli.py", line 130, in main',
    "    process = subprocess.run(",
    '  File "/usr/lib/python3.10/subprocess.py", line 526, in run',
    "    raise CalledProcessError(retcode, process.args,",
    "subprocess.CalledProcessError: Command '['torchrun', '--nnodes', '1', '--node_rank', '0', '--nproc_per_node', "
    "'2', '--master_addr', '127.0.0.1', '--master_port', '38587', '/LLaMA-Factory/src/llamafactory/launcher.py', "
    "'config/qwen_vl.yaml']' returned non-zero exit status 1.",
]
# Akegarasu/lora-scripts#247 (its GUI running the training script with its own python.exe), posted alone
LORA_SCRIPTS = [
    "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)",
    "subprocess.CalledProcessError: Command '['E:\\\\AI\\\\AIsoftware\\\\lora-scripts-gui\\\\python\\\\python.exe', "
    "'./sd-scripts/sdxl_train_network.py', '--config_file', "
    "'E:\\\\AI\\\\AIsoftware\\\\lora-scripts-gui\\\\config\\\\autosave\\\\20230925-152417.toml']' returned non-zero "
    "exit status 1.",
]


def _kinds(lines: list[str]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("system")) for e in feed(lines) if e.kind in ("app.exception", "launcher.exit")]


def _analyze(make_bundle: BundleMaker, text: str) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text}, wl)))


@pytest.mark.parametrize("lines", [LLAMAFACTORY, LORA_SCRIPTS], ids=["torchrun", "python-exe"])
def test_a_called_process_error_of_the_jobs_launcher_is_the_launchers_word(lines: list[str]) -> None:
    assert _kinds(lines) == [("launcher.exit", "python")]


@pytest.mark.parametrize(
    "line",
    [
        # DeepSpeed's op builder running ninja: the job's build set-up (catalog/exceptions.yaml's row), not a launch
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
        # a workload's own step that runs a tool (a clone that failed): the workload's exception, as before
        "subprocess.CalledProcessError: Command '['git', 'clone', 'https://example.org/x.git']' returned non-zero "
        "exit status 128.",
    ],
)
def test_a_called_process_error_of_another_command_is_not_a_launch(line: str) -> None:
    assert ("launcher.exit", "python") not in _kinds(["Traceback (most recent call last):", line])


def test_the_launchers_error_alone_names_no_cause(make_bundle: BundleMaker) -> None:
    # the launcher's error alone: a failure seen, no cause (before: the workload's own exception, a false definitive)
    v = _analyze(make_bundle, "\n".join(LLAMAFACTORY) + "\n")
    assert v.attributed_domain == "unknown" and v.root_cause is None


def test_the_childs_own_traceback_before_it_decides(make_bundle: BundleMaker) -> None:
    # the child's own traceback before it (hiyouga/LlamaFactory#8323's rank 0: a data set with no valid sample)
    rank = ["[rank0]: Traceback (most recent call last):",
            '[rank0]:   File "/remote-home/LLaMA-Factory/src/llamafactory/data/loader.py", line 272, in '
            "_get_preprocessed_dataset",
            '[rank0]:     raise RuntimeError("Cannot find valid samples, check `data/README.md` for the data format.")',
            "[rank0]: RuntimeError: Cannot find valid samples, check `data/README.md` for the data format."]
    v = _analyze(make_bundle, "\n".join(rank + LLAMAFACTORY) + "\n")
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert "Cannot find valid samples" in (v.root_cause.summary or "")


def test_a_signal_in_the_status_is_still_the_childs_signal() -> None:
    # a negative status is Popen's signal number (extract/signals.py): SIGKILL, not the launcher's plain failure
    line = ("subprocess.CalledProcessError: Command '['torchrun', '--nproc_per_node', '8', 'train.py']' returned "
            "non-zero exit status -9.")
    kinds = [e.kind for e in feed(["Traceback (most recent call last):", line])]
    assert "process.signal" in kinds and "app.exception" not in kinds

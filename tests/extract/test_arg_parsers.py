"""A program's command-line or configuration parser refusing what the job passed it (catalog/exceptions.yaml, the
`setup` rows of argparse/optparse, clap, click, Abseil's flags, Go's flag package, HfArgumentParser and Hydra).

Each parser prints its refusal and exits (argparse's `ArgumentParser.error` exits 2 after `usage:`): the job's
set-up on the node that printed it, read raised or logged alone, and weak, as a lone line is. The near misses: a
line of the same shape that no parser prints (another program's `error:` line, a CUDA error), and the same refusal
in a run that did not fail.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from tests.conftest import BundleMaker, workload_ending
from tests.extract.helpers import events


def setup_read(lines: list[str]) -> bool:
    return any(e.kind == "app.exception" and e.fields.get("setup") for e in events(lines))


@pytest.mark.parametrize(
    "line",
    [
        # argparse under PyTorch >= 2.0's launcher, as a project's README quotes it (torch.distributed.launch passes
        # `--local-rank`, the script declares `--local_rank`)
        "train.py: error: unrecognized arguments: --local-rank=0",
        # argparse's other refusals (Lib/argparse.py's messages, in ArgumentParser.error's `%(prog)s: error:` form)
        "train.py: error: argument --device: invalid choice: 'cuda' (choose from 'cpu', 'mps')",
        "finetune.py: error: the following arguments are required: --model_name_or_path",
        # optparse's, as pep8's test suite holds it
        "pep8: error: no such option: --obfuscated",
        # clap's (clap_builder src/error/format.rs), as a CLI prints it and a tool's test expects it
        "error: unexpected argument '--foo' found",
        "error: invalid value 'cuda' for '--device <DEVICE>'",
        # Abseil's flags (AlphaFold 2.3.2 given a flag it lacks, a posted job log)
        "FATAL Flags parsing error: Unknown command line flag 'norun_relax'",
        # Go's flag package (Terraform given a flag it lacks)
        "flag provided but not defined: -auto-allow",
        # HfArgumentParser (transformers renamed evaluation_strategy to eval_strategy; a fine-tuning guide quotes it)
        "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--evaluation_strategy', 'no']",
        # Hydra overriding a key the config lacks, as a job's notes quote it
        "hydra.errors.ConfigCompositionException: Could not override 'model.parallelism.data_parallel_shard_degree'.",
    ],
)
def test_a_parser_refusing_the_jobs_arguments_is_the_set_up(line: str) -> None:
    assert setup_read([line])


@pytest.mark.parametrize(
    "line",
    [
        # another program's `error:` line (git's, rsync's): no parser's refusal
        "error: RPC failed; curl 92 HTTP/2 stream 0 was not closed cleanly: CANCEL (err 8)",
        "rsync: error: some files/attrs were not transferred (see previous errors) (code 23)",
        # argparse's prefix with no refusal of its after it
        "train.py: error: loss is NaN at step 412",
        # click's `Error:` of a command's own failure, not its usage
        "Error: Could not open checkpoint 'ckpt/last.pt'",
        # a CUDA error's `invalid argument` is the CUDA table's, not a parser's
        "RuntimeError: CUDA error: invalid argument",
    ],
)
def test_another_error_line_is_no_parsers_refusal(line: str) -> None:
    assert not setup_read([line])


USAGE = ("usage: train.py [-h] [--local_rank LOCAL_RANK] [--epochs EPOCHS]\n"
         "train.py: error: unrecognized arguments: --local-rank=1\n")


def test_the_refusal_is_the_failed_jobs_set_up_on_its_node(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": USAGE}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert v.root_cause.nodes == ["node-02"]


def test_the_same_refusal_in_a_run_that_completed_is_no_cause(make_bundle: BundleMaker) -> None:
    # a wrapper that tried a flag, was refused and went on without it
    v = analyze(str(make_bundle({"app/rank-2.log": USAGE + "epoch 1 done\n"}, workload_ending("COMPLETED"))))
    assert v.root_cause is None


def test_clicks_refusal_alone_is_read_as_its_exceptions_last_line(make_bundle: BundleMaker) -> None:
    # click prints `Usage:`, a hint, and its UsageError's line: the line has an exception's shape (`Error: ...`),
    # and a lone exception line is read as its traceback's last line would be
    log = "Usage: serve.py [OPTIONS]\nTry 'serve.py --help' for help.\n\nError: No such option: --force\n"
    v = analyze(str(make_bundle({"app/rank-4.log": log}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert v.root_cause.nodes == ["node-03"]

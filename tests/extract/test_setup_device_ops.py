"""The job's own set-up in an exception's or a program's words (catalog/exceptions.yaml, family setup): an accelerator
the runtime could not acquire for the process, a custom op or extension that was not built.

Provenance: the Gaudi line is opea-project/GenAIExamples#137; the DeepSpeed line aqlaboratory/openfold#98 (DeepSpeed's
deepspeed/ops/adam/cpu_adam.py loads its op into `ds_opt_adam`); the GPT-NeoX line EleutherAI/gpt-neox#610
(megatron/fused_kernels/__init__.py). The near misses are ours: the same runtimes' words for another status, another
attribute, a graph compile (huggingface/optimum-habana's thread #1779 has the `synStatus 26` line)."""

from __future__ import annotations

from tests.extract.helpers import events


def _read(lines: list[str]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("setup")) for e in events(lines) if e.kind == "app.exception"]


def _status(lines: list[str]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("error")) for e in events(lines) if e.kind in ("app.exception", "app.cuda_error")]


def test_an_accelerator_the_runtime_could_not_acquire() -> None:
    # Synapse's synNoDeviceFound, read by its number as CUDA's codes are (catalog/cuda.yaml runtime_results): the
    # devices the job's set-up chose, class device_choice, which the verdict takes as app.exception.setup
    assert _status(["RuntimeError: synStatus=8 [Device not found] Device acquire failed."]) == [
        ("app.cuda_error", "device_choice")]


def test_an_accelerator_near_miss() -> None:
    # another status of the same runtime: a graph compile's generic failure (synFail) is no device the process lacked
    assert _status(["RuntimeError: Graph compile failed. synStatus=synStatus 26 [Generic failure]."]) == [
        ("app.cuda_error", "other")]
    assert _status(["RuntimeError: synStatus=26 [Generic failure] Device acquire failed."]) == [
        ("app.cuda_error", "other")]


def test_an_op_that_was_not_built() -> None:
    assert _read(["AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'"]) == [
        ("app.exception", True)]
    assert _read(["AttributeError: 'DeepSpeedCPUAdagrad' object has no attribute 'ds_opt_adagrad'"]) == [
        ("app.exception", True)]
    # GPT-NeoX's check, a line of its own (no exception around it): its stream's last word
    said = events(["ERROR: Fused kernels configured but not installed. Please run `python "
                   "/home/gpt-neox/megatron/fused_kernels/setup.py install` to install them"])
    assert [(e.kind, e.fields.get("setup")) for e in said] == [("app.exception", True)]


def test_an_op_near_miss() -> None:
    # another attribute of the same optimizer, or an attribute of that name on another object: the program's own
    assert _read(["AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'param_groups'"]) == [
        ("app.exception", None)]
    assert _read(["AttributeError: 'MyAdam' object has no attribute 'ds_opt_adam'"]) == [("app.exception", None)]
    # the kernels' words as a config's comment, not the check's failure, are no event
    assert [e.kind for e in events(["# fused kernels are optional; if configured they must be installed"])] == []


# ---------------------------------------------------------------- what the job asked for against what is there

# ComparativeGenomicsToolkit/cactus#900 (Toil's single-machine batch system given no accelerators)
_TOIL = ("toil.batchSystems.abstractBatchSystem.InsufficientSystemResources: The job LastzRepeatMaskJob is requesting "
         "[{'count': 1, 'kind': 'gpu', 'api': 'cuda', 'brand': 'nvidia'}] accelerators, more than the maximum of [] "
         "accelerators that SingleMachineBatchSystem was configured with.")
# GoogleCloudPlatform/vertex-ai-samples#3372 (the Vertex AI client's google-api-core exception, its class unqualified)
_VERTEX = ('InvalidArgument: 400 The accelerator count "8" is not allowed. The allowed numbers of accelerator '
           '"NVIDIA_L4" to use with machine type "g2-standard-8" are: [1].')


def test_a_request_over_what_is_there_in_a_class_the_table_names() -> None:
    assert _read([_TOIL]) == [("app.exception", True)]
    assert _read([_VERTEX]) == [("app.exception", True)]
    assert _read(["google.api_core.exceptions.InvalidArgument: 400 Request contains an invalid argument."]) == [
        ("app.exception", True)]


def test_a_request_near_miss() -> None:
    # a class of the same name with no HTTP status of google-api-core's at its head (synthetic): not the cloud's
    # refusal; and the bare word alone on a line, no message, is no exception
    assert _read(["InvalidArgument: shape mismatch"]) == [("app.exception", None)]
    assert _read(["InvalidArgument"]) == []
    # Toil's class named in the program's own prose is no exception line
    assert _read(["raise InsufficientSystemResources(requirer, 'accelerators', self.accelerator_identities)"]) == []

"""The lines that say how a run ended, in its own programs' words (extract/runend.py over catalog/ends.yaml).

Every positive line is verbatim from a public thread outside tests/wild (named beside it); the near misses are
real lines too where a thread had one (the words in a title, in prose, in a test's source), else the look-alike a
neighbouring row must not take.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import end_reports
from firstfault.extract.base import LineContext
from firstfault.extract.runend import EndReportExtractor, read_end

_DEEPSPEED_626 = (
    "[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/global/D1/homes/sushant/sushanta/venv/bin/"
    "python3.10', '-u', 'trainCLM.py', '--local_rank=1', '--deepspeed', '/home/sushant/D1/sushanta/try/nepaligpt/clm/"
    "config/deepspeed_config.json'] exits with return code = -11")
_DEEPSPEED_5302 = (
    "[2024-03-20 20:31:29,269] [ERROR] [launch.py:321:sigkill_handler] ['/data/anaconda3/envs/llama/bin/python', '-u', "
    "'src/train_bash.py', '--local_rank=4', '--stage', 'sft', '--deepspeed', 'configs/deepspeed_zero3_config.json', "
    "'--do_train', '--model_name_or_path', '/for_llm_model/', '--dataset', 'fin_', '--template', 'qwen', "
    "'--finetuning_type', 'full', '--output_dir', '/data_c/', '--overwrite_cache', '--per_device_train_batch_size', "
    "'1', '--gradient_accumulation_steps', '4', '--lr_scheduler_type', 'cosine', '--logging_steps', '10', "
    "'--save_steps', '1000', '--learning_rate', '5e-5', '--num_train_epochs', '2.0', '--plot_loss', '--fp16', "
    "'--cutoff_len', '4096', '--flash_attn'] exits with return code = 1")
_PG_24 = (
    "[rank0]:[W227 10:54:51.986111855 ProcessGroupNCCL.cpp:1374] Warning: WARNING: process group has NOT been "
    "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
    "destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases "
    "this process can exit before "
    "this point and block the progress of another member of the process group. This constraint has always been "
    "present,  but this warning has only been added since PyTorch 2.4 (function operator())")


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # torchrun's agent, ultralytics/yolov5#5160 (https://github.com/ultralytics/yolov5/issues/5160)
        ("INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 "
         "seconds for other agents to finish", ("SUCCEEDED", "torchrun", "job")),
        # ... a group restarted: shun-zheng/Doc2EDAG#24 (https://github.com/shun-zheng/Doc2EDAG/issues/24)
        ("INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will "
         "restart worker group", ("RESTART", "torchrun", "job")),
        # DeepSpeed's launcher: deepspeedai/DeepSpeedExamples#626, deepspeedai/DeepSpeed#5302
        (_DEEPSPEED_626, ("FAILED", "deepspeed", "job")),
        (_DEEPSPEED_5302, ("FAILED", "deepspeed", "job")),
        # Open MPI's mpirun: open-mpi/ompi#12607 (a CI's time before it), merzlab/QUICK#172, sirocco-rt/sirocco#208,
        # and horovod/horovod#1421 (the errmgr's abort)
        ("15:50:32   mpirun has exited due to process rank 1 with PID 0 on", ("FAILED", "mpirun", "job")),
        ("mpirun has exited due to process rank 0 with PID 0 on", ("FAILED", "mpirun", "job")),
        ("mpirun has exited due to process rank 1 with PID 4017 on", ("FAILED", "mpirun", "job")),
        ("a non-zero exit code. Per user-direction, the job has been aborted.", ("FAILED", "mpirun", "job")),
        # Open MPI's MPI_Abort help text (help-mpi-api.txt [mpi-abort]; the lab's mpirun_abort, run here)
        ("NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.", ("FAILED", "mpirun", "job")),
        # Horovod's gloo launcher under Determined: determined-ai/determined#3275
        ("<>        [2021-12-07 10:43:01] 087c0ee7 || RuntimeError: Horovod detected that one or more processes exited "
         "with non-zero status, thus causing the job to be terminated. The first process to do so was:",
         ("FAILED", "horovod", "job")),
        # Lightning's fit loop: kwea123/ngp_pl#147
        ("`Trainer.fit` stopped: `max_epochs=30` reached.", ("SUCCEEDED", "lightning", "stage")),
        # the training loop's planned end: the Hugging Face examples' metrics (evanhuang117/cse5525-research-project,
        # results/conll/shuffle.md), Ultralytics YOLOv5 (peshmerge/ml_2_project,
        # yolov5/runs/train/training_terminal_output.md), Megatron-LM and fairseq logs kept in public repositories
        # (found by the code index, ids 25139531826 and 19660556; the index names no path for them)
        ("***** train metrics *****", ("SUCCEEDED", "transformers", "stage")),
        ("64 epochs completed in 6.662 hours.", ("SUCCEEDED", "ultralytics", "stage")),
        ("[after training is done] datetime: 2024-08-01 09:44:58", ("SUCCEEDED", "megatron", "stage")),
        ("2021-05-10 14:26:15 | INFO | fairseq_cli.train | done training in 5705.4 seconds",
         ("SUCCEEDED", "fairseq", "stage")),
        # a JetBrains console: bubbliiiing/yolov4-pytorch#83 (Windows, an access violation)
        ("Process finished with exit code -1073741819 (0xC0000005)", ("FAILED", "console", "job")),
        # PyTorch's ProcessGroupNCCL destructor at exit: NVIDIA/Megatron-LM#1541, anhvth/opensloth#17 (2.6+), and
        # sehoffmann/dmlcloud#61 (2.4/2.5's wording)
        ("[rank1]:[W326 09:37:44.752383442 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was "
         "not called before program exit, which can leak resources. For more info, please see "
         "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
         ("SUCCEEDED", "pytorch", "exit")),
        ("[rank0]:[W730 15:32:17.841273251 ProcessGroupNCCL.cpp:1479] Warning: WARNING: destroy_process_group() was "
         "not called before program exit, which can leak resources. For more info, please see "
         "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
         ("SUCCEEDED", "pytorch", "exit")),
        (_PG_24, ("SUCCEEDED", "pytorch", "exit")),
        # NCCL's ncclCommDestroy: Azure/aks-rdma-infiniband#30 (nccl-tests under an MPIJob), NVIDIA/nccl#1680
        ("nccl-tests-worker-1:70:224 [7] NCCL INFO comm 0x5556543bb320 rank 15 nranks 16 cudaDev 7 busId e00000 - "
         "Destroy COMPLETE", ("SUCCEEDED", "nccl", "exit")),
        ("ada6000-02:1263645:1263698 [1] NCCL INFO comm 0x56266ca3c2d0 rank 1 nranks 2 cudaDev 1 busId be000 - Destroy "
         "COMPLETE", ("SUCCEEDED", "nccl", "exit")),
        # UCX's pools at cleanup: rapidsai/ucx-py#276, openucx/ucx#4016 (under mpirun's tag), openucx/ucx#4175 (another
        # pool, no prefix), CliMA/ClimateMachine.jl#194
        ("[1571252924.998706] [dgx15:14737:0]          mpool.c:43   UCX  WARN  object 0x561d7a46f7c0 was not returned "
         "to mpool ucp_requests", ("SUCCEEDED", "ucx", "exit")),
        ("[1,48]<stdout>:[1565106576.701107] [c712f6n03:55646:0]          mpool.c:42   UCX  WARN  object 0x10002fe0c80 "
         "was not returned to mpool ucp_requests", ("SUCCEEDED", "ucx", "exit")),
        ("UCX  WARN  object 0x2abcba7effc0 was not returned to mpool ucp_am_bufs", ("SUCCEEDED", "ucx", "exit")),
        ("[1556060521.495227] [hpc-91-15:132127:0]          mpool.c:38   UCX  WARN  object 0x2b49780 was not returned "
         "to mpool ucp_requests", ("SUCCEEDED", "ucx", "exit")),
    ],
)
def test_a_programs_own_end_report(line: str, want: tuple[str, str, str]) -> None:
    fields = read_end(line)
    assert fields is not None
    assert (fields["state"], fields["system"], fields["scope"]) == want


# DeepSpeed's launcher names the last command it spawned in that line, not the process that failed: in the lab's
# real run (tests/lab/captured/deepspeed_sigkill_external) rank 1 was killed and the line says `--local_rank=2`.
_DEEPSPEED_LAB = ("[2026-12-05 08:01:52,474] [ERROR] [launch.py:259:sigkill_handler] ['/work/wt/lab44/.venv/bin/"
                  "python3', '-u', '/work/wt/lab44/lab/deepspeed_job.py', '--local_rank=2'] exits with return code "
                  "= -9")


def test_deepspeeds_end_report_gives_the_failed_process_code_and_no_rank() -> None:
    # the code is the failed process's (Popen.returncode: -9, its SIGKILL); the `--local_rank` is the last command
    # launch.py spawned, so the report carries no rank at all
    fields = read_end(_DEEPSPEED_LAB)
    assert fields == {"system": "deepspeed", "scope": "job", "code": -9, "state": "FAILED", "aborted": True}
    assert not any("rank" in k for k in fields)


def test_the_exit_code_a_report_gives_decides_its_outcome() -> None:
    assert read_end(_DEEPSPEED_626) == {"system": "deepspeed", "scope": "job", "code": -11, "state": "FAILED",
                                        "aborted": True}
    # PyCharm's own spelling of a clean and a killed end (the Run tool window)
    assert read_end("Process finished with exit code 0") == {"system": "console", "scope": "job", "code": 0,
                                                             "state": "SUCCEEDED"}
    assert read_end("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)") == {
        "system": "console", "scope": "job", "code": 137, "state": "FAILED"}


@pytest.mark.parametrize(
    "line",
    [
        # the words in a title or prose, not the program's line: deepspeedai/DeepSpeed#4890's title, open-mpi/ompi#7833
        # and #6379 (quoting mpirun), horovod/horovod#3647's title, open-edge-platform/anomalib#2141's title (the
        # line glued to a progress bar)
        "[ERROR] [launch.py:321:sigkill_handler [xxx] exits with return code = -9",
        'While running a simple "hello world" on single machine for many iterations, it can fail with the message '
        '"mpirun has exited due to process rank 0 with PID 0 on',
        "mpirun has exited due to process rank 0 with PID 0 on node",
        "RuntimeError: Horovod detected that one or more processes exited with non-zero status",
        "`Trainer.fit` stopped: `max_epochs=1` reached. Epoch 0/0 ------------------ 2/2 0:00:15 • 0:00:00 6.37it/s "
        "pixel_AUROC: 0.000 pixel_F1Score: 0.000",
        # in source code and tests: horovod's own test (the message it expects), PyTorch's TORCH_WARN_ONCE, a comment
        "        message = 'Horovod detected that one or more processes exited with non-zero status'",
        '          "WARNING: destroy_process_group() was not called before program exit, "',
        '    # Solves warning: "destroy_process_group() was not called before program exit"',
        # the words in source and notes: fairseq's own print, a Megatron log parser's test data, a project's notes
        "    print('| done training in {:.1f} seconds'.format(train_meter.sum))",
        '        lines.append("[after training is done] datetime: 2026-06-04 21:00:00 ")',
        "- **Result:** all 12 epochs completed in 31.3 min.",
        # help texts that say "exits successfully" (a --help line), a guide quoting the console's line mid-sentence
        "-h, -?, --help, help : Prints this help and exits successfully.",
        "You should see Process finished with exit code 0 at the end of the run console.",
        # NCCL's abort, its error path (NVIDIA/Fuser#3055), and its init (NVIDIA/nccl#1814)
        "dgx1v-loki-23:5890:6275 [0] NCCL INFO comm 0x7f00faaa5c00 rank 0 nranks 4 cudaDev 0 busId 6000 - Abort "
        "COMPLETE",
        "hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 "
        "commId 0x5ae77eb5ea4ec1ee - Init COMPLETE",
        # DeepSpeed's launcher killing the others is not yet its end report (deepspeedai/DeepSpeed#3232's line before)
        "[2023-04-14 13:11:27,879] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266",
        # a worker's `exits successfully.` that is not DeepSpeed's launcher
        "worker.py: Process 80 exits successfully.",
        # Ray's CLI on a submission, not an end (verl-project/verl#2890)
        "Job 'raysubmit_bjwdzBV23QNJ9fQu' submitted successfully",
    ],
)
def test_look_alikes_are_no_end_report(line: str) -> None:
    assert read_end(line) is None


def test_the_extractor_emits_the_report_with_the_host_its_prefix_names() -> None:
    ex = EndReportExtractor()
    ctx = LineContext(source="application", file="a.log", lineno=1, node=None, rank=None, time=None, state={})
    [d] = list(ex.extract("[2023-04-07 13:09:33,220] [INFO] [launch.py:351:main] Process 80 exits successfully.", ctx))
    assert (d.kind, d.fields["state"], d.fields["pid"]) == ("launcher.exit", "SUCCEEDED", 80)
    assert set(ex.literals) == {r.literal for r in end_reports()}


def test_a_malformed_row_is_named_by_file_and_line() -> None:
    import msgspec

    from firstfault.catalog.tables import EndReport

    with pytest.raises(msgspec.ValidationError, match="must end with"):
        msgspec.convert({"system": "x", "literal": "abcdef", "pattern": "abcdef", "outcome": "succeeded",
                         "scope": "job"}, EndReport)
    with pytest.raises(msgspec.ValidationError, match="`code` group"):
        msgspec.convert({"system": "x", "literal": "abcdef", "pattern": r"abcdef\s*$", "outcome": "code",
                         "scope": "job"}, EndReport)

"""The wild corpus (tests/wild/): bundles built from log blocks posted in public threads.

Each bundle's expectation was decided from its thread (PROVENANCE.md quotes the
deciding words) before the tool ran on it. The targets of record are domain and
category accuracy >= 0.90 with no false definitive verdict and no false alarm;
this test holds the line at what the engine reaches today so that no change
makes it worse, and prints the per-family table (`python -m tests.corpus`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import SharedVerdicts, score_all, table

WILD = Path(__file__).parent / "wild"
# Today's measured floor (see the closing notes and _batches/README.md); raise it as mechanisms land.
# 403 / 400 of 528 (0.763 / 0.758) with b17, b18 and the twelfth pass in (b17 first ran at 0.35 / 0.30, one false
# alarm then: a UCX device report in a run that went on, now held until the layer above fails to start; b18 at 0.55
# / 0.50, one false definitive, below); b8-b16 first ran at 0.50, 0.27, 0.76, 0.56, 0.50, 0.40, 0.43, 0.36, 0.52
# b19 (20 bundles) first ran at 0.50 / 0.55 with three false definitives (two named below); with the thirteenth pass
# (serving, storage clients, presentation layers and status tables) and b19's fitted steps: 423 / 418 of 548.
# b20 (19 bundles, built after that pass) first ran at 0.63 / 0.53, one false definitive; with its two fitted steps
# (systemd's unit OOM words, Ray's memory monitor's own account of a kill): 438 / 431 of 567.
# b21 (24 bundles) first ran at 0.38 / 0.33 with two false definitives; b22 (23) and b23 (19), built while the
# fourteenth pass (platform programs, resource limits, file system clients, exit meanings, managed services) was,
# first ran at 0.43 / 0.39 (FD 2, FA 1) and 0.47 / 0.42, the pass moving neither; with the pass and the steps fitted
# after each first run: 475 / 466 of 633.
# b24 (24) and b25 (24), built at the start of the next session, first ran at 0.50 / 0.42 and 0.29 / 0.25 (one false
# definitive); b26 (23), built while that session's (fifteenth) pass was, at 0.30 / 0.30 (one); b27 (23), built after
# the pass had landed (the search budget ran out half-way), at 0.57 / 0.57 (four). With the run-whose-end-is-not-shown
# policy (nothing failed: `none`), the pass and the steps fitted after the first runs: 542 / 530 of 727.
# b28 (24), b29 (25) and b30 (17) first ran at 0.50 / 0.46, 0.52 / 0.48 and 0.47 / 0.47; b31 (20, weighted to
# repositories no bundle came from) and b32 (22, threads of 2025-2026) at 0.75 / 0.70 and 0.55 / 0.55 (one false
# definitive), both at ec22abe0 before any fix: 625 / 611 of 835 (the floor below follows the two new batches down).
# b33 (19, threads of 2025-2026 again) first ran at 0.58 / 0.53 (two false definitives) at d01ab43e, with this
# stop's pass merged, and the same at ec22abe0: the pass moved it by nothing.
# b34 (18, weighted to channels other than GitHub issues; the stored forums held no decided thread, so all are
# issues of repositories no bundle came from) and b35 (21, weighted to the ecosystems the corpus holds least) first
# ran at 0.50 / 0.50 and 0.48 / 0.38 (one false definitive) at ed52b597, before any fix: 673 / 655 of 893.
# b36 (22, the whole field from repositories that had given at most one bundle) at 0.41 / 0.32 (two false
# definitives), the same base: 682 / 662 of 915. b37 (17, threads of 2025-2026 from repositories with at most one
# bundle) at 0.65 / 0.59 (one false definitive), the same at ed52b597 and at 30f0c575 (b34's, b35's and two
# table-completing passes merged): 701 / 682 of 932. With the passes fitted to b34, b35 and b36 after their first
# runs, and the Rust report reader: 710 / 691 of 932.
# b38 (21, weighted to schedulers, orchestrators and storage, and to frameworks other than PyTorch and serving) and
# b39 (20, training runs from repositories with no bundle, and the cluster operators' stack) first ran at 0.62 / 0.62
# (one false definitive) and 0.55 / 0.50 (three) at fa454050, before any fix: 734 / 714 of 973. b40 (20, JAX, TPU,
# TensorFlow, Paddle and Ascend multi-device runs, and LLM serving on several GPUs), built beside the passes fitted
# to b38 and b39, at 0.60 / 0.60 (one) at the same base: 746 / 726 of 993. b41 (22, MPI and HPC interconnects, and
# checkpoints and data streams) at 0.55 / 0.50 (one) at fa454050; with the CUDA call that lets a short message count
# and the ordering of one file's untimed causes (both after its first run): 758 / 738 of 1,015. b42 (19, training on
# Kubernetes and cloud batch services, and threads of 2026) at 0.63 / 0.63 (one) at fa454050; with the Ascend pass
# (which fixed b38's false definitive): 771 / 751 of 1,034. With the pass fitted to b39 (the operators' programs in
# their own words, a harness's relayed stdout as a prefix layer; b40-b42 unmoved by it, bundle for bundle): 775 / 756.
# b43 (22, storage that is not a local disk, and schedulers other than Slurm), b44 (20, hardware in the operators'
# words from every vendor, and fine-tuning and RL frameworks) and b45 (24, networks below the collectives, and
# inference serving at scale) first ran at 0.50 / 0.45 (one false definitive), 0.60 / 0.60 (four) and 0.42 / 0.38
# (four, and one false alarm) at af3f4566, before any fix, and the same with this stop's first two mechanisms (a
# wrapped line read joined where alone it is only the workload's exception; systemd's OOM words without the unit's
# name): 810 / 790 of 1,100. A client's logged connect try is no set-up errno (fitted to b45): b45 one false
# definitive fewer. b46 (19, forum threads and kernel logs posted from GPU nodes) and b47 (20, accelerators and stacks
# other than NVIDIA's with NCCL, and workflow engines running GPU steps), built after those mechanisms had landed,
# first ran at 0.84 / 0.79 (two false definitives, one false alarm) and 0.60 / 0.50 (one) at af3f4566, the same at
# 7ed8fa6a (the mechanisms moved neither, bundle for bundle): 838 / 815 of 1,139. b48 (16, threads of 2026 and training
# at large scale) and b49 (21, Slurm at the core, and Kubernetes GPU nodes and their platform) at 0.44 / 0.38 (three
# false definitives) and 0.52 / 0.52 (two) at af3f4566, the same at d84904f1: 856 / 832 of 1,176.
# With DCGM's diagnostic results read with their reasons (catalog/accel.yaml dcgm_errors, built from DCGM's own
# codes; fitted to b44's busy-GPU memory test, b45-b49 unmoved by it): 857 / 833.
# b50-b55 (130 bundles: JAX/TF and MPI jobs; Ray and managed training; NVIDIA's trackers and Q&A forums; batch systems
# beyond Slurm and Megatron-scale training; cloud batch and inference servers; storage under training and host
# hardware) first ran at 5ba1279e at 0.61 / 0.57, 0.71 / 0.71, 0.62 / 0.52, 0.57 / 0.57, 0.57 / 0.48 and 0.62 / 0.62
# (0, 1, 6, 2, 2 and 3 false definitives). Then: a lone line that says less supersedes none that says more, a request
# no node can meet in Ray's and Kueue's words (fitted to b51), NCCL's format under other libraries' names, cloud
# batch services' codes (b54, built alongside, unmoved): 945 / 916 of 1,306. b56 (21: accelerators other than NVIDIA's
# in distributed jobs, and inference serving on Kubernetes) and b57 (21: elastic training and checkpoint resume, and
# multi-node hangs and network errors) first ran at fe207405 at 0.71 / 0.71 (one false definitive) and 0.67 / 0.67;
# b58 (20: GPU jobs at HPC centres, and workstation multi-GPU training) at 0.50 / 0.50 (two). Then: the kernel's
# failure words as one table with the oops's die header on x86 and arm64 (b55: one); a launcher's own code that does not
# fit what it calls (b57: one, fitted); the dynamic loader's fatal errors (built alongside b56-b58: one each of b56 and
# b58 moved); cloud quotas and drivers that failed to install (fitted to b50, b53 and b54; b56-b58 unmoved):
# 998 / 969 of 1,368. b59 (18: training operators on Kubernetes, fine-tuning toolkits), built after all of them but
# the Kubernetes API server's refusals, first ran at fe207405 at 0.61 / 0.61 (two false definitives); the same at the
# stop's end: 1,010 / 981 of 1,386. b60 (21: data loading and host limits under multi-GPU jobs, and compilers and
# kernels in distributed runs) and b61 (23: checkpoints at scale, and collectives' watchdog timeouts in long runs),
# built at the start of the next stop, first ran at 54a07f15 at 0.71 / 0.62 (four false definitives) and 0.48 / 0.43
# (two): 1,036 / 1,004 of 1,430. b62 (23: multi-node and disaggregated inference serving, RL post-training with
# colocated engines), built beside the same passes, at 0.52 / 0.43 (four false definitives): 1,048 / 1,014 of 1,453.
# Then the node's plumbing in its programs' words, a loopback address in a job spanning nodes, MPI's and Google's ML
# services' start-up refusals and the runtimes' status words (all built beside b60-b62, which they moved by none),
# CUDA's config errors in its own words alone (b60: one, fitted): 1,062 / 1,024 of 1,453.
# b63 (21: fleet validation tools across nodes, containers under multi-node jobs) and b64 (22: threads in Chinese on
# distributed training, launchers and trainer wrappers across nodes), built at the start of the next stop, first ran
# at 9da80757 at 0.38 / 0.38 (four false definitives) and 0.64 / 0.41 (two): 1,084 / 1,045 of 1,496. b65 (22: the
# newest stack, GPU data processing on clusters) at 0.55 / 0.41 (three); then the RAPIDS allocators' OOM words and
# Dask's words that another process went away (fitted to b65: two right, two false definitives fewer): 1,099 / 1,058
# of 1,518. b66 (20: HPC scientific codes on GPUs across nodes, Kubernetes-native orchestration), built beside the
# stop's passes, first ran at 0.60 / 0.55 (one false definitive), unmoved by them: 1,112 / 1,070 of 1,538. b67 (19:
# parallel and network file systems under GPU training, AMD GPUs across nodes) at 0.68 / 0.63 (two), unmoved:
# 1,125 / 1,082 of 1,557. b68-b78 (200 in eleven batches: RL post-training and MoE communication, diffusion and
# recommender training, cluster managers and inference servers, speech and vision, Slurm sites' reports, fabric and
# cloud training, Kubernetes GPU nodes and data pipelines, experiment orchestration, compilers and numerics, container
# networking and quantized fine-tuning, serving platforms and stack dumps), built at the start of the next stop, first
# ran at e7bc7282 at 117 / 107 of 200 (twelve false definitives): 1,243 / 1,190 of 1,757. Then a relayed collective
# result of the environment is a symptom (built beside them: one of b69's false definitives fewer), and sbatch's
# unread error lines are the job's request (fitted to b72 and b75): 1,247 / 1,195 of 1,757. Then kernel modules that
# would not load, read through one table (built beside b73 and b74, but its tests quote two of their threads): 1,250 /
# 1,198 of 1,757 (srun's `HOST: task N: Out Of Memory` naming its node then set one bundle's nodes right). b79-b84
# (58 in six batches: Gaudi, Instinct, Trainium and TPU; shared file systems and Kubernetes batch operators; frameworks
# the corpus held little of and HPC centres' GPU jobs; forums and GPU health tooling; PyTorch-native training of
# 2025-2026 and MPI scientific codes; schedulers acting on jobs and managed GPU clouds), built at the start of the next
# stop, first ran at 9c68328a at 25 / 24 of 58 (ten false definitives); then ggml's CUDA init failure read as CUDA's
# (fitted to b82's Ollama thread): 1,276 / 1,223 of 1,815. b85-b88 (40: NVIDIA's own repositories, AMD and Intel GPUs
# across nodes, Chinese vendors' accelerators and serving stacks, RL post-training and disaggregated serving), built
# beside this stop's passes, first ran at 9c68328a at 21 / 16 of 40 (two false definitives): 1,297 / 1,239 of 1,855.
# Then native programs' last lines (libc++abi's uncaught exception, CUDA's device-side assert; built beside b79-b88,
# which it moved by none): 1,300 / 1,242 of 1,855. b89-b94 (68: consumer multi-GPU rigs and GPU sharing, JAX and MPI
# stacks' own repositories, data and checkpoint I/O and cloud HPC stacks, GPU drivers and interconnect hardware, vision,
# science and speech training, orchestration platforms and threads in Chinese), built beside the stop's last passes
# (the search budget ran out half-way), first ran at 9c68328a at 34 / 30 of 68 (ten false definitives), the same at
# the stop's mechanisms: 1,334 / 1,272 of 1,923. Then the job's set-up told by its message's shape (requested against
# available, a parallel size too large, a feature the device or cloud lacks; built beside b89-b94, which it moved by
# none; one bundle's set-up row now stands beside another executor's exception: ambiguous): 1,333 / 1,282 of 1,923.
# b95-b99 (81: stacks of 2017-2021 and LLM toolkits, life-science and climate codes on clusters, Windows, WSL2 and macOS
# and the host's services, cloud providers' and RDMA repositories, serving outside vLLM and GPU data processing), built
# at the start of the next stop while its passes were, first ran at e46b5e85 at 35 / 29 of 81 (twelve false
# definitives): 1,368 / 1,311 of 2,004. Then the Fortran runtimes' last lines (fitted to b96's quota thread): 1,369 /
# 1,312 of 2,004. b100-b102 (32: the GPU node's services and its BMC, Kubernetes' and batch schedulers' records, FUSE
# mounts and host hardware) first ran at e46b5e85 at 8 / 8 of 32 (no false definitive). Then the stop's passes: the
# job's set-up (local errnos, transports' local statuses, ops not built, requests over what is there), the memory
# killers as one table, the node's services (Slurm's daemons, systemd's unit records: built beside b100-b102, three of
# b100's right), a node that stopped answering (PALS, Ray): 1,404 / 1,351 of 2,036. b103-b112 (136: workflow managers
# and genomics on GPUs, cloud batch services and federated training, RL simulation and non-Python GPU stacks, parallel
# file systems' CSI drivers and Kubernetes batch schedulers, GPU health monitors and power events, LLM frameworks and
# multi-node inference deployments, elastic training and checkpoint/restart, other accelerators, Trainium and TPUs,
# InfiniBand and RoCE fabric management, molecular dynamics and materials codes), built at the start of the next stop
# while its passes were, first ran at 0e329ccf at 52 / 44 of 136 (four false definitives): 1,456 / 1,395 of 2,172.
# Then the stop's passes, built beside them and held out from them (the node's records: systemctl's, sinfo's cut
# reasons, the BMC's power events, Kubernetes' RBAC refusal; CUDA's usage and device-choice classes and check macros'
# source forms; accelerator-OOM words; object stores' retries, Slingshot's completion codes, preemption notices,
# MPIJob's eviction; error-looking level headers; set-up's built-without rows and paramiko's key refusal; one of
# b104's right): 1,482 / 1,428 of 2,172.
# b113-b119 (80: GPUs in virtual machines and isolation, cloud GPU instances' fabrics and neoclouds, file system clients
# and remote data loaders, orchestrators and launchers beyond Slurm and Kueue, PCIe/IOMMU faults and local disks,
# inference outside the datacentre and MPI test suites, the newest GPUs' and networks' faults), built at the start of
# the next stop while its passes were, first ran at 5000944d at 31 / 28 of 80 (eight false definitives, one false
# alarm): 1,513 / 1,456 of 2,252. Then the stop's passes, built beside them and held out from them (Kubernetes
# schedulers' placement and admission records, a pod left waiting as a symptom; CSI drivers' and file system services'
# mount failures; the CUDA conditions in each library's own words; exceptions that only relay another process's
# failure; workflow managers' and cloud batch services' task records as ends; GPU health monitors' reports read as the
# fault they report or as nothing; Tenstorrent's and Neuron's runtimes; CRIU's and cuda-checkpoint's refusals; the
# subnet manager's and ibacm's records; the job's set-up, the platform's programs and the workload's own failure forms
# that the tables lacked; a lone symptom superseding no earlier exception of the workload's own; two of b115's and
# b116's right): 1,573 / 1,513 of 2,252.
# b120-b128 (87: PyTorch's own repositories and Lightning, Hugging Face's and NVIDIA's training stacks, GPU and host
# hardware in users' words, JAX and TPUs with Ray on GPU clusters, serving under GPU sharing with Kubernetes GPU nodes'
# drivers, MPI jobs with batch schedulers' records, checkpoints across ranks with FUSE mounts and object stores,
# DeepSpeed across nodes with AMD Instinct GPUs, Kubernetes training operators with Slurm on clouds), built at the start
# of the next stop while its passes were, first ran at 4a193571 at 37 / 32 of 87 (five false definitives): 1,610 /
# 1,545 of 2,339 at that start. Then the stop's passes, built beside them and held out from them (set-up checks of a
# world that does not fit; gVisor's nvproxy refusals and the driver's own words; ROCm's queue faults; runtimes' crash
# reports and OSError without its class; relayed failures of distributed-llama, c10d's store wait, Ray, BKCL and XCCL;
# a GPU engine's hang reset as no cause; whether the run failed at all; lines wrapped, flattened or marked up by their
# posting; a label review of seven clusters that contradicted the spec), none of b120-b128 moved: 1,656 / 1,598 of
# 2,339.
# b129-b137 (108: multi-GPU serving and NVIDIA's serving stacks, NCCL's own repositories and cloud fabrics, Slurm in
# sites' words and other batch schedulers, Xids in kernel logs and GPU health tools, TensorFlow and Horovod, file
# systems and object stores under training, Kubernetes GPU pods and managed GPU nodes, Lightning/Accelerate/FSDP across
# ranks, JAX on GPUs and Ray), built at the start of the next stop while its passes were, first ran at d72966ff at
# 42 / 37 of 108 (17 false definitives, named below): 1,698 / 1,635 of 2,447 at that start. The stop's passes, table
# audits against the printing programs' own enumerations (accelerator libraries' statuses, errnos and exception
# classes, schedulers' reasons, transports' statuses, launchers' set-up messages, the kernel's hardware words, the
# GPU node's stack under Kubernetes, stall detectors), built beside them and held out from them, moved none of the
# 108 and 7 / 8 of the older 2,339: 1,705 / 1,643 of 2,447. b138-b143 (66 bundles) first ran at b5975228 at
# 30 / 26 (8 false definitives, named below): 1,735 / 1,669 of 2,513 at that start. The stop's passes (NCCL's WARN
# calls, Slurm's node plugins, frameworks' set-up checks, node driver installers, object-store codes, gloo's and
# Horovod's stores with a generic exception's fallout, all built held out from them; cluster provisioning programs,
# built on their census) moved 2 / 2 of them and 15 / 17 of the older 2,447: 1,752 / 1,688 of 2,513. b144-b149 (63
# bundles) first ran at e1c2a250 at 27 / 26 (7 false definitives, named below), b150-b151 (9, built after the stop's
# passes) at 3 / 1 (1): 1,782 / 1,715 of 2,585 at that start. The stop's passes (node-state readouts, the BMC's and
# health monitors' words, MPI help texts, MPICH's family, NCCL's plugins and INFO lines, FUSE clients, all held out from
# the new batches; batch systems' daemons and refusals, the scheduler's count limits, storage daemons and servers,
# wrapped messages, Fabric Manager's start-up, built on their census or on b151) moved 13 / 13 of the new 72 and
# 12 / 13 of the older 2,513: 1,807 / 1,741 of 2,585. b152-b158 (76 bundles) first ran at c81a9ae3 at 36 / 35 (5 false
# definitives, named below; tests/wild/_batches/misses-b152-b158.md classifies the misses); b159-b161 (35, built while
# the stop's passes were merged, held out from all but the last) at 21 / 17 (6): 1,864 / 1,793 of 2,696 at that
# start. The stop's passes (pods the kubelet could not start and the CNI's words, container runtimes' own errors, HDF5's
# error stack and netCDF's statuses, HPC codes' aborts and device allocations, Slingshot's CXI provider and services,
# other accelerators' runtime codes, remote launch agents, object stores' status lines and credentials, all built on
# the new batches' misses) moved 20 / 20 of b152-b158, 2 / 3 of b159-b161 (the last pass, on b161) and 1 / 4 of the
# older 2,585: 1,887 / 1,820 of 2,696. b162-b176 (134 bundles in fifteen batches: b162-b168 built at the next stop's
# start, b169-b173 while its passes ran, b174-b176 after they had merged) first ran at 60 / 55 (9 false definitives,
# 1 false alarm; tests/wild/_batches/misses-b162-b176.md); the stop's passes (each built on named batches: node
# software's packages and plugin stacks, socket libraries' errnos and UCX bindings, object stores' messages, store
# clients' retries, Horovod's rank tags, health checks' own failures, ps-lite / Ray / ATen rows, NIC firmware faults,
# Kubernetes batch schedulers' events and controller records, gRPC's own words) and one built on the older censuses'
# recurring families (the shell's own errors) moved them to 87 / 83 and the older 2,696 by 4 / 4: 1,978 / 1,907 of
# 2,830. b177-b184 (71 bundles in eight batches, built at the next stop's start; b181-b184 held out from the passes
# built on b177-b180) first ran at 36 / 33 (2 false definitives; tests/wild/_batches/misses-b177-b187.md); the stop's
# passes (accelerator OOM statuses in both spellings, a heading's indented fields, vLLM's and Dask's own words,
# MLNX_OFED's installer and xCAT's postscripts, GCE's preemption at start and live-migration refusal, a Go record's
# error field) moved them to 43 / 42 and the older 2,830 by none. b185-b187 (32, built after those passes had merged)
# first ran at 17 / 13 (2 false definitives), the same at the stop's start; two passes built on them (Julia's signal
# exceptions, UCX's words behind a pasted gutter, NCCL's argument check, a math library routine's bare failure, CRIU's
# and cuda-checkpoint's records, a vGPU's licence) moved them to 24 / 20: 2,045 / 1,969 of 2,933. b188-b195 (71 in
# eight batches, two waves; the second held out from the first wave's passes) first ran at 36 / 32 (3 false
# definitives; tests/wild/_batches/misses-b188-b203.md); the stop's passes (a math library's status by its number,
# Ray's old memory monitor, EFA's errno and its peer-gone statuses, a runtime that could not spawn a program, Chef's
# and Azure's guest agent's provisioning failures) moved them to 40 / 38 and the older 2,933 by none. b196-b199 (38,
# built while those passes merged, held out from them) first ran at 21 / 20 (2 false definitives), the same at the
# stop's start; two passes built on them (the virtualization layer's start failures, the NVIDIA driver's BAR check,
# amdkfd's PCIe atomics, hosted notebooks' memory notices) moved them to 27 / 26. b200-b203 (21, built after the
# first eight batches' passes had merged) first ran at 10 / 10 (2 false definitives, 1 false alarm); one pass built on
# b201 and b203 (the RDMA ports a job's programs said they use, so a spare port down is no cause; Intel NICs' transmit
# unit hang) moved them to 12 / 12 and cleared the false alarm: 2,124 / 2,045 of 3,063. b204-b211 (47 in eight
# batches, built at the next stop's start) first ran at 37 / 34 (1 false definitive; tests/wild/_batches/
# misses-b204-b217.md); b212-b217 (54, built while the passes on the first eight ran, held out from them) at 34 / 27
# (3 false definitives); four passes (GPU architecture and platform words; a CI service losing its runner, Slurm's
# TaskProlog and its daemon's loader failure, Ray's port check, PyTorch's 999 words; spconv's and FAISS's CUDA checks, a
# program exec could not start; submitit's time limit, missing backends, Paddle's memory words, DALI's check, FFmpeg's
# per-file lines) moved them to 80 / 79 and the older 3,063 by none: 2,204 / 2,124 of 3,164. b218-b226 (62, built at
# the next stop's start; tests/wild/_batches/misses-b218-b236.md) first ran at 28 / 23 (1 false definitive);
# b227-b236 (38, built while the passes on them ran, held out from every pass) at 17 / 15; the passes (YARN's memory
# kill as DMLC words it, Ray's pid=None tag, the standard library's lower-case exception classes, LightGBM's fatal
# record, Lightning's Slurm option checks, TensorFlow's allocator failure, HTCondor's event log by event type, a
# verbs call's GID errnos, a message wrapped at its own column, NIXL's VRAM refused) moved b218-b226 to 34 / 32, the
# held-out b227-b236 by none, and the older 3,164 by four (two GID-index and two NIXL bundles; an undecided
# GID-index false definitive now names the path instead of the RDMA stack); a last pass built on b227-b236 (a
# launcher's own port check, Ray's version check, the linkers' library not found, the object stores' InternalError
# sentence) moved them to 19 / 19. b237 and b239 (12, from documentation, held out from that pass) first ran at 7 / 7
# and stayed there: 2,266 / 2,186 of 3,276.
MIN_DOMAIN = 0.691
MIN_CATEGORY = 0.667
# The false definitive verdicts of today, each named: unk-slurm-cn125-segfault-flaky-node, disputed (see its
# PROVENANCE.md), and unk-hydra-bad-termination-bus-error-signal7-docker-mlsh-17 (a SIGBUS that the thread traced
# to a container's /dev/shm, which the log does not say); and seven bundles whose threads never found a cause
# while the evidence holds a transport's retry-exceeded or an adapter's port error / catastrophic error, which
# the spec's `network.transport` / `network.link` take as the cause (closing note of issue 25). No other bundle
# may become one.
KNOWN_FALSE_DEFINITIVE = frozenset({
    "unk-slurm-cn125-segfault-flaky-node",
    "unk-hydra-bad-termination-bus-error-signal7-docker-mlsh-17",
    "unk-nccl-ib-async-port-error-then-error12-lit-llama-380",
    "unk-ucx-dc-retry-exceeded-hdr-intermittent-gsi-9590",
    "unk-deepspeed-inference-2-nodes-ib-error-12-2931",
    "unk-nccl-ib-local-catastrophic-error-after-830k-iters-230",
    "unk-ucx-rc-transport-retry-exceeded-intermittent-juwels-booster-7416",
    "unk-nccl-ib-error12-vendor129-only-line-stale-pytorch-81628",
    "unk-nccl-ib-status12-vendor129-intermittent-allreduce-perf-1698",
    # b9: Slurm's "not responding" for cloud nodes power_save failed to resume reads as a lost node; what
    # says otherwise comes 18 hours later and names no node.
    "unk-slurm-power-save-cloud-nodes-not-responding-resume-exit-1-131",
    # b10: an Xid 48 (double-bit ECC) the maintainers weighed against a broken driver install; the spec
    # reads an Xid 48 as the GPU's memory.
    "amb-xid48-dbe-page-retired-or-driver-install-nvidia-docker-849",
    # b10: IB completions with status 4 (local protection error) on three hosts, which one NCCL developer put on the
    # wrong HCAs and another on PCIe ACS; the weak node-gpudirect-rdma rule reads status 4 as the NIC refusing GPU
    # memory (as for the b12 bundle below). It was `ambiguous` only while the engine counted one category's untimed
    # findings on three nodes as three competing causes; one category on several nodes is one cause
    # (docs/verdict.md, "When two causes are independent").
    "amb-nccl-ib-error4-vendor81-h100-wrong-hca-or-acs-928",
    # b12: "GPU is lost" that the maintainer blamed on the GPU/driver and the reporter on a vocabulary size;
    # the tool reads the driver's words as a GPU gone from the bus.
    "amb-marian-gpu-is-lost-vocab-40000-vs-gpu-fault-251",
    # b12: an IB completion with status 4 (local protection error), which the weak node-gpudirect-rdma rule
    # reads as the NIC refused GPU memory; the thread never found the cause.
    "unk-nccl-tp16-h100-qp-local-access-violation-vendor-err-83-occasional-1905",
    # b13: a fatal machine check (processor context corrupt) that lowering the CPU clock cured while the reporter
    # kept an OS-update regression open; the spec reads a fatal MCE as the host's hardware.
    "amb-bazzite-fatal-mce-processor-context-corrupt-5ghz-or-update-regression-5546",
    # b14: amdgpu's "uncorrectable hardware error" (its global RAS interrupt) on two GPUs of one MI300X host under
    # one workload, which AMD never diagnosed; the spec reads a driver's uncorrectable hardware error as the GPU's.
    "unk-rocm-mi300x-athub-uncorrectable-hw-error-aca-axolotl-multi-gpu-hang-4021",
    # b18: `OSError: [Errno 5] Input/output error` on a directory the rank creates under /app, in a thread nobody
    # answered; the spec reads EIO on a path as the file system's.
    "unk-naifu-rank3-sampling-makedirs-eio-app-naifu555-after-13h-breaks-every-20h-35",
    # b19: a machine check logged at boot with UC and PCC set (uncorrected, processor context corrupt: bank 5 of an
    # AMD desktop that reboots under ROCm), which the thread left between the card's firmware and amdkfd; the spec
    # reads an uncorrected MCE as the host's hardware.
    "unk-pytorch-rocm-rx6800-sd-reboots-mce-bank5-amdkfd-firmware-suspected-120775",
    # b19: nvidia-container-cli's `initialization error: driver error: failed to process request` under WSL2, in a
    # thread closed as stale; the spec reads a container runtime that cannot initialise the driver as the node's
    # driver stack (no usable GPU).
    "unk-wsl2-nbody-nvidia-container-cli-driver-error-failed-to-process-request-stale-1316",
    # b20: UCX's `Transport retry count exceeded` under Open MPI, intermittent, in an issue still open: the spec's
    # `network.transport` (retry exceeded with no link evidence), as the seven above.
    "unk-ucx-190-ompi-405-hpe-apollo-intermittent-transport-retry-count-exceeded-5732",
    # b21: `CUDA driver version is insufficient for CUDA runtime version` from llama.cpp in a udocker container on
    # Kaggle: the spec's `node.driver` (the driver older than the runtime); the thread never learnt whether udocker
    # passed the driver in at all.
    "unk-tabby-udocker-kaggle-cuda-error-35-driver-insufficient-binary-works-998",
    # b22: TensorFlow's AlreadyExistsError raised by a TPU session's initialisation (`Already exists: Resource
    # localhost/tpu_proto_cache/...`) in a run that stopped: the spec's `app.exception` (a workload's uncaught
    # exception); the thread guessed at a stale cache on a re-imaged TPU and never settled it.
    "unk-tf115-preemptible-tpu-v2-8-init-alreadyexists-tpu-proto-cache-gone-after-reimage-846",
    # b25: nvidia-container-cli's `driver error: timed out` on a node whose jobs fail until a reboot: the spec's
    # `node.driver` (the container CLI's driver timeout is the node's driver set-up, catalog/platform.yaml 1009: four
    # threads fixed it with persistence mode); the thread is open and never says why.
    "unk-nvidia-docker-jobs-fail-container-cli-driver-timed-out-until-reboot-root-cause-unanswered-1047",
    # b26: one rank of a 512-GPU JAX job on GB200 reporting `CUDA_ERROR_ILLEGAL_INSTRUCTION`, the others aborted by
    # the gang: the spec's `app.illegal_access` (an illegal instruction with no hardware Xid to explain it); the
    # thread raised Xid 13/43 only as a hypothesis and could not reproduce it.
    "unk-marin-gb200-512gpu-jax-single-rank-cuda-error-illegal-instruction-gang-abort-open-7956",
    # b27: NCCL's IB `status=12 ... vendor err 129` alone between two hosts, the thread open: `network.transport`, as
    # the seven above.
    "unk-nccl-tests-two-ib-hosts-ibp-status12-vendor129-only-line-open-1664",
    # b27: a training run that ends in a traceback through loss.backward whose exception line the stored copy cut:
    # the spec reads a cut traceback where nothing else was, as the workload's own exception; the thread went stale.
    "unk-open-sora-12-training-stuck-then-backward-traceback-step-1609-stale-637",
    # b27: the DataLoader's own `Unexpected bus error encountered in worker. This might be caused by insufficient
    # shared memory (shm)`: the spec's shm limit (`app.exception`, PyTorch's own words); the thread never confirmed.
    "unk-smp-camvid-example-dataloader-bus-error-shm-docker-guess-never-confirmed-stale-172",
    # b27: the kernel's `sh[pid]: segfault at ...` lines, the only ones posted for a Horovod hang: a process's
    # segfault (`app.crash`); the reporter says the shell was a monitoring agent's, which no line says.
    "unk-tf18-horovod-hang-mid-training-unrelated-sh-segfaults-28639",
    # b28: UCX's `Transport retry count exceeded` (DC) at 128 nodes: `network.transport`, as the ones above; the
    # reporter's bisection (UCX 1.8 runs, 1.9 fails) left a UCX regression open beside the fabric.
    "amb-ucx-dc-transport-retry-count-exceeded-128-nodes-ucx-1-9-regression-or-fabric-7586",
    # b30: `nvidia-smi`'s `Unable to determine the device handle for GPU...: GPU is lost` on a training node: NVML's
    # view of Xid 79, the spec's `gpu.fallen_off_bus`; the maintainer only referred the reporter to an admin.
    "unk-owod-train-net-4gpu-nvidia-smi-gpu-is-lost-driver-issue-ask-admin-81",
    # b32: NCCL's `transport/nvls.cc ... Cuda failure 1 'invalid argument'` on one H100 host, the thread open: the
    # spec reads a CUDA failure in NVLS set-up as the node's NVLink SHARP set-up (`node.driver.nvls`: Fabric Manager,
    # multicast state, the driver; the older threads with this line found Fabric Manager); this one named none.
    "unk-nccl-2262-nvls-cuda-failure-invalid-argument-nvlink-sharp-system-reasons-open-1672",
    # b33: TensorRT-LLM's `CUDA_ERROR_NVLINK_UNCORRECTABLE` ("uncorrectable NVLink error was detected during the
    # execution") on a B200 host, the thread unanswered: the spec reads CUDA's own word for an uncorrectable NVLink
    # error as the GPU's link (`gpu.nvlink.app_reported`), as b33's marin GB200 bundle of the same line expects.
    "unk-trtllm-deepseek-r1-fp4-warmup-uncorrectable-nvlink-error-b200-4816",
    # b24: Triton's own crash report `Signal (11) received.` (its ErrorSignalHandler, server PR #3257) with a stack of
    # unresolved addresses in tritonserver, libc and libstdc++, the thread unanswered: the spec's `app.crash` (a
    # SIGSEGV with no other cause, as abseil's and glog's handlers' reports are read; b24's other bundle of the same
    # line and b35's expect it); the thread named no trigger.
    "unk-tritonserver-2460-six-4090-occasional-signal-11-segfault-explicit-load-no-reply-8284",
    # b36: an MXNet/HCC run on ROCm whose loss is NaN from the first step on the GPU and fine on the CPU, the thread
    # unanswered: the spec reads a loss of NaN as the workload's numerics (`app.numerics`), which the thread never
    # confirmed (a ROCm kernel's fault would print the same).
    "unk-rocm-hcc-mxnet-adversary-generation-gpu-train-loss-nan-cpu-fine-no-reply-912",
    # b37: the xe driver resetting both Arc Pro B60s' engines (`GT0: Engine reset: ...`: the symptom `gpu.hang`, no
    # longer `gpu.firmware`), then PyTorch's `RuntimeError: level_zero backend failed with error: 20
    # (UR_RESULT_ERROR_DEVICE_LOST)`, the thread open: a raised exception is read as the workload's (`app.exception`);
    # the Unified Runtime's result that only relays the lost device is not yet read as a symptom.
    # b39: PyTorch's DataLoader `unexpected bus error ... insufficient shared memory (shm)`, the thread unanswered:
    # the spec's shm limit (`app.exception`), as b39's STCN bundle of the same line and b26's camvid bundle read it.
    "unk-ai-voice-cloning-docker-training-unexpected-bus-error-might-be-shm-no-answer-126",
    # b39: dcgm-exporter on GKE crash-looping on `Failed to initialize NVML`, the fix never shown: NVML that cannot
    # start on a GPU node is the node's driver (`node.driver.no_gpu`), as the catalog reads it for every NVML client.
    "unk-gpu-monitoring-tools-dcgm-exporter-gke-failed-to-initialize-nvml-crashloop-fix-never-shown-96",
    # b39: `OSError: [Errno 5] Input/output error` reading a dataset's frames, the maintainer guessing at the
    # system: EIO on a file is the file system's (`storage.filesystem`); nobody looked at the storage (as b20's naifu).
    "unk-text4vis-2xv100-k400-frames-random-file-eio-maintainer-guesses-system-io-6",
    # b40: Ray Serve's `Not enough resources to allocate 2 placement groups, only created 1` raised as a ValueError
    # under KubeRay, the thread stale: an exception the workload's own code raised is `app.exception` (a request the
    # cluster cannot place); the thread never said whether the GPUs it showed free were so.
    "unk-kuberay-ray-serve-llm-vllm-dp2-t4-not-enough-resources-2-placement-groups-gpu-shown-free-stale-4366",
    # b41: Orbax's `ValueError: NOT_FOUND: Error writing ... in OCDBT database at local file "/home/user/...": Failed
    # to rename ... ENOENT` on a multi-host TPU slice, the thread open: a raised exception on a file the job's own
    # path names is the workload's (`app.exception`); nobody said whether the hosts' private directories or a race
    # did it.
    "unk-orbax-maxtext-llama-8b-convert-v5litepod-32-ocdbt-rename-enoent-local-home-dir-open-2837",
    # b42: vLLM's engine core on an Intel GPU raising `RuntimeError: level_zero backend failed with error: 40
    # (UR_RESULT_ERROR_OUT_OF_RESOURCES)` at start-up, asked as a model-compatibility question: a raised exception is
    # the workload's (`app.exception`); the thread never said whether the model, the memory or the stack ran out.
    # b43: `tarfile.ReadError: unexpected end of data` raised on rank 7 reading a WebDataset shard through an `aws s3
    # cp` pipe to R2, the thread never finding why: a raised exception is the workload's (`app.exception`); whether the
    # pipe, the store or the shard cut the stream nobody showed.
    "unk-webdataset-r2-s3-pipe-aws-s3-cp-tarfile-unexpected-end-of-data-rank7-432",
    # b44: the device's own words read as the accelerator table reads them, the thread unresolved: habanalabs' CPU-CP
    # timeout on four Gaudi devices (`gpu.firmware`). (ROCm's `HW Exception by GPU node-1 ... reason :GPU Hang` and
    # amdgpu's ring timeout and reset left this list: a hang reset alone is the symptom `gpu.hang`.)
    "unk-habana-setup-gaudi-hl2-hl4-hl6-hl7-cpu-cp-timeout-device-not-usable-1",
    # b45: IB completion errors (status 12, vendor 129; UCX's transport retry exceeded) and a RoCE GID's `ibv_modify_qp`
    # `Network is unreachable` with no link evidence, the threads open: the spec's `network.transport` (and `.path`).
    "unk-nccl-tests-roce-gid-ibv-modify-qp-network-unreachable-proxy-connect-fail-185",
    "unk-sglang-deepseek-v3-two-h100-nodes-startup-stuck-nccl-ib-completion-error-12-vendor-129-open-4857",
    "unk-ucx-py-dask-benchmark-dgx-ib-transport-retry-exceeded-endpoint-timeout-dupe-131",
    # b46: the NVRM RC watchdog's `GPU is probably locked!` and Xid 8 (ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT, NVIDIA's
    # causes driver, application, bus or thermal) on one RTX 5090, the thread open: the Xid table's `other` class, a
    # device error it does not place (`gpu.error`). No other bundle holds an Xid 8 to weigh the row against.
    "unk-llamacpp-rtx5090-llama-server-rc-watchdog-gpu-locked-xid8-cause-open-27102",
    # b46: `watchdog: BUG: soft lockup - CPU#72 stuck for 23s!` in a failed run, printed (the thread says) only when
    # the hung job was killed: the kernel's lockup is `node.kernel` as the catalog reads it; the lines do not say it
    # came after the hang.
    "unk-monai-pathology-multi-gpu-training-hang-epoch2-soft-lockup-on-kill-cuda-evthandlr-831",
    # b47: Habana's PT bridge `Graph compile failed. synStatus=synStatus 26 [Generic failure]` raised on two ranks of a
    # Gaudi2D run, the thread open: a raised exception is the workload's (`app.exception`).
    "unk-optimum-habana-bloomz-7b1-8-card-gaudi2d-allgather-graph-compile-synstatus-26-open-1426",
    # b48: IB completion errors (status 12, then 5) on two 8-GPU nodes, the thread open: the spec's `network.transport`.
    "unk-deepspeed-two-8xa100-docker-hostfile-ib-status-12-then-5-vendor-249-4-gpus-per-node-works-open-6875",
    # b48: a TPU v6e's `RET_CHECK failure ... GetChipIndexOnHost` at the runtime's start on Vertex, the thread open: the
    # job's own set-up as the status table reads a start-up check (`app.exception.setup`).
    "unk-jax-tpu-v6e-2x2-vertex-init-tpu-ret-check-get-chip-index-on-host-0-vs-1-open-37230",
    # b48: DeepEP's buffer `invalid resource handle` then CUDA's illegal memory access on a GB200 disaggregated run, the
    # thread never placing it: the illegal access is the workload's (`app.illegal_access`, no hardware Xid beside it).
    "unk-srt-slurm-gb200-disagg-prefill-deepep-buffer-invalid-resource-handle-then-illegal-access-195",
    # b49: the GPU operator's CUDA validator `CUDA driver version is insufficient for CUDA runtime version` on
    # OpenShift, the thread open (its builder notes the posted driver is newer than the runtime): CUDA's 35 is the
    # node's driver.
    "unk-gpu-operator-openshift-rtx-pro-6000-cuda-validator-driver-insufficient-with-580-driver-open-1947",
    # b49: enroot's `switchroot: /bin/bash: not found` under srun across two VMs, no answer stored: the job's image (its
    # set-up, `app.exception.setup`) as the container table reads it.
    "unk-pyxis-two-vm-srun-enroot-switchroot-bin-bash-not-found-no-answer-stored-61",
    # b51: mesh-transformer-jax's save on a TPU failed three times and its traceback is cut before the exception line
    # (the stored copy ends there, no reply): a cut traceback is the workload's own exception (app-exception-truncated).
    "unk-mesh-transformer-jax-gptj-tpu-finetune-gcs-save-failed-3-times-exiting-154",
    # b52: CUDA's `invalid device ordinal` at cudaSetDevice on a multi-node run that later went away by itself: the
    # job's own device choice (app.exception.setup, catalog/cuda.yaml class device_choice) is what CUDA's 101 says.
    "unk-chemnlp-multinode-multigpu-cuda-setdevice-invalid-device-ordinal-fixed-itself-334",
    # b52: NVRM's `RmInitAdapter failed!` (a VMware VM with a kernel Oops beside it; an IBM Cloud node that went to a
    # support ticket), neither thread deciding: the adapter that would not initialise is the GPU's, to be reset.
    "unk-cuda-samples-debian11-vmware-vm-510-rminitadapter-failed-0x26-nvqueue-oops-no-reply-104",
    "unk-gpu-operator-ibm-cloud-ocp414-rminitadapter-failed-0x11-0x45-2525-support-ticket-stale-649",
    # b52: nvidia-smi's `Unable to determine the device handle for GPU ...: Unknown Error` after a run (a Ctrl-C during
    # inference; two servers after three hours of training), no reply: the GPU that stopped answering NVML.
    "unk-llama-models-4xa30-ctrl-c-during-inference-cuda0-device-handle-unknown-error-no-answer-200",
    "unk-llava-8xa100-finetune-after-3h-nvidia-smi-device-handle-unknown-error-two-servers-no-reply-1466",
    # b52: NCCL's `ibv_modify_qp ... No such device` on both nodes, the thread deciding nothing: the RDMA device the
    # verbs call could not reach is the node's RDMA stack (node.driver.rdma).
    "unk-turingaicloud-2node-slurm-torchrun-deepspeed-nccl-ibv-modify-qp-no-such-device-both-nodes-6",
    # b53: glibc's `free(): invalid next size` abort in a task on Summit, which ORNL left undecided: the program's own
    # crash (app.crash) as an abort of the heap's check reads.
    "unk-radical-entk-summit-jsrun-free-invalid-next-size-stage-collapsed-ornl-undecided-382",
    # b53: NCCL's IB completion status 12 (transport retry exceeded) with vendor error 129, the thread giving only
    # timeout advice: status 12 is `network.transport`, as for b45's and b49's bundles above.
    "unk-stanford-alpaca-fsdp-finetune-ib-peer-error-12-vendor-129-remote-exit-or-network-only-timeout-advice-207",
    # b55: slurmstepd's `execve(): /tmp/slurmd/job.../slurm_script: No such file or directory`, an admin's hedged NFS
    # guess that did not pan out: the node's spool that lost the job's script is read as the node lost.
    "unk-arjuna-slurm-gpu-job-fails-at-once-slurmstepd-execve-slurm-script-no-such-file-admin-suspects-nfs-20",
    # b55: a lone soft lockup after training, closed with no diagnosis: the kernel's lockup is read as `node.kernel`
    # (the third wild bundle whose thread does not take a lone soft lockup as the cause: b46's two, this).
    "unk-flexflow-inception-v3-two-gpu-kernel-soft-lockup-after-training-or-assertion-no-resolution-261",
    # b55: MosaicML streaming's rename of a shard's `.tmp` on FSx that found no file, non-deterministic and undecided:
    # the workload's file I/O (app.exception.io) as the errno reads.
    "unk-mosaicml-streaming-two-node-h100-fsx-local-shard-decompress-rename-tmp-filenotfound-nondeterministic-863",
    # b56: vLLM-Ascend's engine on a 300I failing at HCCL's init (`ERR02200`, `rtSetStreamFailureMode ... 207000`),
    # its traceback cut before the exception line, no reply: a cut traceback is the workload's own exception
    # (app-exception-truncated), as b27's and b51's.
    "unk-vllm-ascend-300i-tp2-hccl-init-err02200-rtsetstreamfailuremode-207000-open-no-reply-5135",
    # b58: ROCm's `Memory access fault by GPU node-N ... Reason: Page not present or supervisor privilege` in E3SM's
    # debug run on Frontier, the thread open: the runtime's own word for the GPU's bad access is `app.illegal_access`.
    "unk-e3sm-frontier-scream-ne256-debug-memory-access-fault-gpu-core-dump-failed-sigabrt-8659",
    # b58: NCCL's `Error while creating shared memory segment` under WSL2 (vLLM, tensor parallel 2), no cause named:
    # the spec's shm limit (`app.exception`), as b56's production-stack bundle of the same words expects.
    "unk-wsl2-vllm-tp2-nccl-unhandled-cuda-error-shm-segment-create-failed-open-12467",
    # b59: `bash: orted: command not found` from the MPI Operator's launcher at 72 instances (64 work), undecided: a
    # program the job names that the shell cannot find is the job's set-up, as bash's words read.
    "unk-mpi-operator-nccl-tests-72-instances-576-gpus-bash-orted-command-not-found-501",
    # b60: DALI's `RuntimeError: Critical error in pipeline:` (nvJPEG's allocator failing) on several GPUs, one GPU
    # fine, no cause found: a raised exception that names no cause outside the job is the workload's.
    "unk-dali-tfrecord-multi-gpu-nvjpeg-status-allocator-failure-single-gpu-fine-2866",
    # b60: torchrun's `exitcode: -8` (SIGFPE) of one rank on H20s, twice, neither thread saying why: a rank's death by
    # a signal of its own fault is the spec's `app.crash`.
    "unk-reg2rg-2x-h20-torchrun-rank1-sigfpe-exitcode-minus-8-solved-without-saying-how-6",
    "unk-streamvln-4x-h20-torchrun-train-local-rank-1-sigfpe-after-27-min-open-no-reply-66",
    # b60: s5cmd's Go runtime `fatal error: newosproc` (a thread it could not create, errno 11) under webdataset, the
    # reporter ruling out memory and the maintainer doubting the process limit: a program's fatal error is the
    # workload's exception.
    "unk-webdataset-s5cmd-multi-gpu-eks-p4d-second-epoch-go-newosproc-errno-11-open-90",
    # b61: zero_to_fp32's `ValueError: Expected 1 of '*_optim_states.pt' ... but found 4 files`, unanswered: the
    # workload's exception, as its own words read.
    "unk-deepspeed-4-v100-zero-to-fp32-expected-1-optim-states-found-4-overwrite-or-unsaved-unanswered-1793",
    # b61: safetensors' `SafetensorError: Error while serializing: IoError(... code: 95 ... Operation not supported)`
    # saving to a FUSE mount, undecided between the mount and the library's writes: the workload's exception.
    "unk-safetensors-ms-swift-checkpoint-save-to-fuse-serializing-io-error-os-error-95-operation-not-supported-842",
    # b62: SGLang's prefill `RuntimeError: Mooncake memory registration failed.`, the thread leaving two causes
    # standing (the job's expandable segments, or no GPUDirect RDMA on the node): a raised exception is the workload's.
    "amb-sglang-pd-mooncake-prefill-memory-registration-failed-expandable-segments-or-no-gpudirect-6193",
    # b62: vLLM's decode worker registering its KV caches with NIXL over UCX (`UMR ... QP to RTR ... No such device`),
    # the thread open: the traceback is the workload's exception.
    "unk-aibrix-vllm-1p1d-decode-nixl-register-kv-caches-ucx-umr-qp-rtr-no-such-device-open-1433",
    # b62: UCX's `Caught signal 11 (Segmentation fault ...)` in vLLM's prefill after a NIXL upgrade, undecided: a
    # process's own segmentation fault is the spec's `app.crash`.
    "unk-nixl-0-2-1-upgrade-vllm-pd-prefill-segfault-uct-tcp-ep-am-bcopy-after-first-read-380",
    # b63: nccl-tests under pyxis hung in UCX's connect (`ibv_create_ah ... timed out`) and the user cancelled it, the
    # thread open: a job cancelled by its user is the spec's `scheduler.cancelled`.
    "unk-nccl-pyxis-enroot-nccl-tests-two-hgx-ucx-ibv-create-ah-rc-connect-mlx5-bond-timed-out-1467",
    # b63: perftest's `Couldn't allocate MR ... ERRNO: Bad address` on a vGPU's CUDA buffer, then `Segmentation fault`,
    # undecided between the vGPU and the peer-memory module: a process's own segmentation fault is `app.crash`.
    "unk-perftest-ib-write-bw-use-cuda-a30-8c-vgpu-pod-couldnt-allocate-mr-bad-address-126",
    # b63: NHC's `check_hw_ib: Version mismatch between kernel OFED drivers and userspace OFED libraries` on an Arm
    # node, the thread leaving the library path and a defective adapter standing: the check's own words name the
    # driver stack, which the health-check table reads as `node.driver` (weak).
    "amb-nhc-check-hw-ib-ofed-version-mismatch-arm-node-abi-path-or-defective-adapter-175",
    # b66: CUDA-Q's multi-GPU backend on two DGX nodes under pyxis, `MPI_ERR_TRUNCATE` from an Allgatherv, the thread
    # open: the raised exception is the workload's.
    "unk-cuda-quantum-mgpu-dgx-h100-slurm-pyxis-more-than-one-node-mpi-allgatherv-err-truncate-open-2892",
    # b67: evaluate's `ValueError` that a lock on the shared file system was not acquired on two nodes, and HIP's
    # `Memory access fault by GPU` on many GCDs of a LUMI job, both threads open: the workload's exception and its
    # illegal access, as their own words read.
    "unk-evaluate-two-node-16-gpu-metric-compute-shared-fs-lock-not-acquired-481",
    "unk-gpt-neox-lumi-mi250x-singularity-deepspeed-slurm-memory-access-fault-many-gcds-no-answer-stored-1310",
    # b67: HIP's queue callback aborting milabench's Brax (JAX) with HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, the
    # thread open: the same fault of the process's kernel as the `Memory access fault` above, read as it is
    # (catalog/accel.yaml `hsa_runtime_messages`).
    "unk-milabench-brax-rocm-6-2-4-hsa-memory-aperture-violation-abort-minus6-open-335",
    # b68, b69, b77, b78: a process's own SIGSEGV or SIGBUS, the threads undecided (UCX's connect to a link-local peer
    # before it, every rank's SIGBUS in a container, a Ray worker's bus error): the spec's `app.crash`.
    "unk-nemo-aligner-ppo-multinode-import-ucx-endpoint-link-local-refused-segfault-541",
    "unk-diffusers-train-dreambooth-accelerate-8gpu-container-all-ranks-sigbus-exitcode-7-no-answer-4229",
    "unk-xtuner-internlm-7b-qlora-2gpu-deepspeed-zero2-rank0-exitcode-minus-7-no-diagnosis-80",
    "unk-fastchat-vllm-worker-codellama-7b-two-t4-rayworker-sigbus-fatal-bus-error-no-diagnosis-2490",
    # b76: a raised exception the thread left open (Triton's cache file on MI250): the workload's, as its own words
    # read. (b59's, b62's, b71's, b73's, b77's and b81's relayed failures, a worker, server, agent, thread or host that
    # failed or never answered and SageMaker's capacity reason through its SDK, left this list: catalog/exceptions.yaml
    # reads them as symptoms, tests/extract/test_relayed_failures.py.)
    "unk-torchtitan-mi250-8gpu-compile-triton-cache-hsaco-file-not-found-no-diagnosis-2146",
    # b75: sbatch too old for an option and slurmctld unreachable, two causes the thread cannot split: the controller's
    # words are the node's Slurm (weak, alone); and srun's invalid GRES for a step, the thread undecided between the
    # site and submitit: the job's request, as Slurm's errno text reads.
    "amb-mae-submitit-pretrain-sbatch-unrecognized-gpus-per-node-and-slurm-controller-unreachable-119",
    "unk-submitit-srun-inside-sbatch-invalid-gres-step-site-gpus-only-via-batch-1726",
    # b80, b82, b83: a raised exception or a native one the thread left open (a model file missing on one rank's
    # cache, DCGM's diag without its config package, gpu-burn's CUDA 802 in
    # its own `Error (...)` words, std::bad_alloc on 522 Aurora nodes): the workload's, as its own words read.
    "unk-milabench-diffusion-nodes-multinode-rank11-hf-cache-unet-safetensors-filenotfound-on-cn-n001-open-281",
    "unk-dcgm-3-3-diag-pcie-hangs-h100-80gb-hbm3-diag-config-package-missing-errors-136",
    "unk-gpu-burn-h100-80gb-hbm3-system-not-yet-initialized-h100-pcie-same-os-passes-no-stored-fix-92",
    "unk-ezpz-aurora-522-node-ranks-memoryerror-std-bad-alloc-rc-143-auto-retry-calls-it-walltime-243",
    # b83: a process's own SIGILL (the thread torn between a node and a build for another CPU) and glibc's `free():
    # invalid size` under Cray MPICH: the spec's `app.crash`; UCX's RDMA read `remote operation error` on Stampede3,
    # the thread open: the spec's `network.transport`.
    "amb-mfc-phoenix-gpu-ci-pre-process-sigill-exit-132-on-atl1-1-01-002-28-0-faulty-node-or-cpu-target-1853",
    "unk-cp2k-daint-gpu-64-nodes-ugni-rdma-post-error-free-invalid-size-mpi-refactor-revert-no-fix-2657",
    "unk-ucx-stampede3-multinode-mpi-waitall-rdma-read-remote-operation-error-gpudirect-guess-open-10755",
    # b81, b84: srun's `unable to create step` after a Slurm update (the node's Slurm, as its words read), and CUDA's
    # 804 from cudaGetDeviceCount on a cloud pod (the node's driver, as CUDA's table reads it), both threads open.
    "unk-cgyro-perlmutter-after-slurm-update-maintenance-srun-unable-to-create-step-zero-bytes-transmitted-449",
    "unk-dockerllm-runpod-3x3090-cloud-pods-cudagetdevicecount-error-804-forward-compat-no-diagnosis-19",
    # b89, b92, b93: a rank's illegal memory access beside the kernel's MMU fault, an eGPU's Xid 31 after PCIe
    # completion timeouts (the thread torn between the enclosure and the driver), and two CUDA OOMs on GPUs another
    # process held (the threads open): the spec's `app.illegal_access` and `app.cuda_oom`, as the rank's words read.
    "unk-ik-llama-cpp-gpt-oss-120b-2x-a4000-layer-split-warmup-illegal-memory-access-xid13-xid31-mmu-fault-2258",
    "amb-nvidia-open-egpu-thunderbolt-rtx5090-pcie-completion-timeout-no-aer-handler-xid31-desktop-freeze-1229",
    "unk-idm-vton-train-accelerate-2x80gb-cuda-visible-devices-3-4-cuda-oom-68gib-held-elsewhere-open-11",
    "unk-openfold-2gpu-deepspeed-bf16-training-fails-after-3-epochs-cuda-oom-63gib-held-elsewhere-open-429",
    # b89, b92: a legacy MPS server that would not start (the node's driver, as CUDA's words read) and RmInitAdapter
    # failing with GSP's boot timeout on a 3090 (the GPU's firmware, as the driver's words read), both threads open.
    "unk-k8s-device-plugin-mps-tesla-p4-legacy-mps-server-failed-to-start-invalid-argument-matrixmul-cuda-error-30-685",
    "unk-nvidia-open-3090-no-devices-found-rminitadapter-failed-gsp-gfw-boot-timeout-open-789",
    # b91, b92, b93, b94: a raised exception or a job's set-up error the thread left open (Slinky's exporter config,
    # CSIT's interfaces not up, a TFJob worker's cuInit with no device): the workload's.
    "unk-slinky-slurm-operator-0-3-1-cluster-setup-compute-1-of-2-accounting-login-not-ready-exporter-config-error-44",
    "amb-fdio-csit-3n-icxd-trex-vpp-25ge-interfaces-not-link-up-cable-nic-or-driver-undecided-264",
    "unk-kubeflow-tfjob-1ps-3workers-fails-in-seconds-worker0-cuinit-cuda-error-no-device-cause-not-stored-903",
    # b95, b96, b99: a rank's own fault signal the thread left open (a segfault in ibv_destroy_cq after NCCL's
    # bootstrap closed, OpenMM's segfault and bus error on one cluster's nodes, DeepSpeed-MII's return code -7, an
    # illegal instruction at LMDeploy's model load): `app.crash`, as the rank's words read.
    "unk-horovod-240-gpus-nccl-bootstrap-connection-closed-by-remote-peer-segfault-in-ibv-destroy-cq-234",
    "unk-hpcfund-openmm-container-4-gpu-sbatch-segfault-only-on-node-t006-002-admin-asks-reproducer-3",
    "unk-openmm-8-1-cuda-hpc-slurm-batch-script-bus-error-same-input-runs-on-workstation-open-4385",
    "unk-deepspeed-mii-bloomz-7b1-tensor-parallel-8-multi-gpu-server-exits-return-code-minus-7-179",
    "unk-lmdeploy-turbomind-multi-node-mpirun-rank-1-exited-signal-4-illegal-instruction-model-load-1221",
    # b96, b99: an illegal address on a GPU (OpenMM's Xid 31 beside its NaNs, Spark RAPIDS' hash aggregate with ECC
    # only suspected) and UCX's transport retry count exceeded on mlx5_0, threads open: the spec's
    # `app.illegal_access` and `network.transport`, as the words read.
    "unk-openmm-multiprocessing-3-gpus-nan-then-xid-31-mmu-fault-pde-same-pid-metrocubo03-open-4393",
    "unk-spark-rapids-customer-query-executors-killed-cudaerrorillegaladdress-gpu-hash-aggregate-ecc-suspected-12573",
    "unk-ucx-py-dask-4-dgx1-multinode-ib-transport-retry-count-exceeded-mlx5-0-intermittent-449",
    # b95, b97: the workload's own exception or numerics the thread left open (MaxText's sem_unlink FileNotFoundError,
    # OpenNMT-tf's diverged loss on 3-4 GPUs, TF 2.1's ncclAllReduce with CUDA's unhandled error, OneTrainer's
    # unsupported gloo device on Windows).
    "unk-maxtext-v4-16-multihost-training-collapses-at-load-next-batch-sem-unlink-filenotfound-open-786",
    "unk-opennmt-tf-ngc-container-3-or-4-a100-model-diverged-loss-nan-2-gpus-fine-918",
    "unk-tf21-mirroredstrategy-2x-rtx2080ti-nvlink-ncclallreduce-internal-unhandled-cuda-error-36510",
    "unk-onetrainer-windows-multi-gpu-init-process-group-unsupported-gloo-device-waiting-1122",
    # b110: a rank's own exception the thread left open (optimum-neuron's traceback cut before its exception line, the
    # runtime's unsupported topology above it; tt-metal's TT_THROW at its firmware's init timeout on one CI runner):
    # the workload's, as the rank's words read.
    "unk-optimum-neuron-tgi-llama3-70b-trn1-nrt-load-collectives-unsupported-topology-persists-with-num-cores-32-619",
    "unk-tt-metal-ci-blackhole-multi-card-unit-tests-fw-init-timeout-physical-core-25-25-one-runner-no-cause-stored-29457",
    # b112: the same, a rank's own words the thread left open (MACE's internal assert on two MIG slices, a GROMACS
    # worker's caught signal 11 under PLUMED on several nodes): `app.exception` and `app.crash`, as the words read.
    "unk-mace-ddp-h200-mig-3g-70gb-two-slices-device-num-gpus-internal-assert-open-1197",
    "unk-plumed-gromacs2021-rest2-multinode-v100-workers-caught-signal-11-version-fix-untested-730",
    # b115-b118 (first runs at 5000944d): the kernel's hung-task reports of tasks in D state on a shared NFS volume and
    # on NVMe under LVM, threads unanswered or their cause not stored (`node.kernel.hung_task`, as the kernel's words
    # read); srun's task launch that timed out on a 1,000-node ParallelCluster job (`node.scheduler`, weak); PyTorch's
    # stream writer that failed to write a checkpoint on ModelArts (storage, by its errno words), TensorFlow's S3
    # client's curl error 28 with its traceback cut; exo's runners' Metal check error on every node, threads open: the
    # ranks' own words.
    "unk-parallelcluster-nodes-orphaned-job-hung-task-d-state-writing-shared-nfs-volume-no-answer-1150",
    "unk-azure-local-csi-nd96isr-h100-v5-lvm-jbd2-d-state-nvme-hang-loading-deepseek-weights-cause-not-stored-153",
    "unk-parallelcluster-3-1-4-p4d-large-srun-task-launch-socket-timed-out-send-recv-step-aborted-4179",
    "unk-llamafactory-chatglm-pt-deepspeed-checkpoint-10-pytorchstreamwriter-file-write-failed-modelarts-wontfix-1223",
    "unk-tensorflow-s3-distributed-training-curl-error-28-retries-then-crash-traceback-cut-unanswered-24357",
    "unk-exo-4-node-m3-ultra-rdma-kimi-k2-5-mlx-metal-check-error-sigabrt-all-runners-open-1458",
    # b119: a head machine of two DGX Sparks that locked up with nothing in its logs or journal (its bundle's end state
    # NODE_FAIL: a node lost, `node.unreachable` as the state reads; the thread never found why).
    "unk-glm53-exl3-2x-dgx-spark-head-hard-host-lockup-no-error-in-logs-or-journal-193",
    # b121-b122 (first runs at 4a193571): a GKE A3 sample workload's illegal memory access at start-up, its rank's own
    # words (`app.exception`) beside a critical Xid, the thread open; a fatal PCIe malformed TLP at a PCH root port (the
    # kernel's AER record, `hardware`) and firmware's GHES fatal PCIe error before a kernel panic (`node.kernel`), both
    # threads never answered.
    "unk-megatron-lm-gke-a3-tcpx-sample-workload-critical-xid-illegal-memory-access-at-initialize-383",
    "unk-rocm-1-2-fury-nano-z170-vector-copy-hangs-aer-fatal-malformed-tlp-pch-root-port-no-resolution-32",
    "unk-rocm-rhel9-1-w6800-no-gpu-detected-ghes-fatal-pcie-error-slot-4-kernel-panic-closed-no-reply-1882",
    # b123: a Ray worker node the GCS marked dead after missed heartbeats (`node.unreachable`, as the GCS's words read)
    # and a second node whose Ray could not register with the GCS (its ranks' own exception), both threads open.
    "unk-ray-vllm-tp4-worker-node-marked-dead-missed-heartbeats-raylet-terminated-after-30s-45179",
    "unk-gpustack-qwen35-27b-distributed-vllm-second-node-ray-cannot-join-gcs-41000-node-registration-timeout-5181",
    # b129-b137 (first runs at d72966ff; tests/wild/_batches/misses-b129-b137.md classifies each). The spec's reading
    # of a line the thread left open: Xid 13, 31 and 69 as the application's illegal access (a DXVK game, a BLAS test
    # suite on driver 352, the device plugin's Xid 69 question, a laptop's Xid 31 beside an Xid 32), a GPU fallen off
    # the bus under bbswitch, an ibv_modify_qp timeout on RoCE VMs, pyxis's seccomp filter refused on one node's image,
    # Hydra's proxy failing to exec the program, NCCL's socket refused its address family, a composer rank's exit -7
    # (SIGBUS) as a crash, a Lustre write short of its bytes and an flock without its call (ENOSYS) as the job's I/O,
    # XLA's collective allocation as a CUDA OOM, alpa's XLA servers that did not start, a torchtitan rank's
    # FileNotFoundError on another NFS. (Two generic exception lines taken as the workload's own where their words say
    # a store or a deadline failed first, Horovod's `HTTP request failed` and TensorFlow's collective `Deadline
    # Exceeded`, are read as that failure's fallout since the next stop: engine/normalise.py `_fallout`.)
    "amb-dxvk-granblue-relink-rtx4090-xid13-graphics-exception-c9c0-raw-access-chains-driver-or-dxvk-5785",
    "amb-torchtitan-1400-gpu-keep-latest-k-purge-rank1186-filenotfound-outputs-folder-on-other-nfs-909",
    "unk-alpa-wresnet-2-node-ray-profileworker-launch-xla-servers-failed-to-start-rpc-server-701",
    "unk-bumblebee-acer-3830tg-optimus-xid32-xid31-card-failure-question-never-diagnosed-677",
    "unk-bumblebee-funtoo-optirun-gpu-fallen-off-bus-bbswitch-toggled-discrete-card-no-diagnosis-554",
    "unk-cbio-torque-gpu-queue-mpi-job-hydra-proxy-execvp-error-on-file-0-gpu-2-4-274",
    "unk-collenchyma-blas-cuda-dot-nrm2-tests-fail-xid31-page-faults-driver-352-open-14",
    "unk-horovod-nccl-2-node-8-gpu-mpirun-hang-gpu7-rank-4-net-socket-creation-failed-address-family-not-supported-224",
    "unk-k8s-device-plugin-xid-69-gpu-marked-unhealthy-question-how-to-reset-no-cause-189",
    "unk-llm-foundry-composer-launcher-g5-12xlarge-docker-rank-2-crashed-exit-code-minus-7-building-trainer-258",
    "unk-lustre-client-numpy-save-120mb-to-lustre-mount-requested-and-0-written-no-diagnosis-16",
    "unk-maxdiffusion-flux-jax-gpu-fsdp8-b200-xla-could-not-allocate-collective-nccl-cuda-oom-regression-216",
    "unk-nccl-tests-roce-dual-hca-vms-newer-nccl-ibv-modify-qp-connection-timed-out-749",
    "unk-pyxis-seccomp-filter-failed-function-not-implemented-only-stateless-image-node-cn03-42",
    "unk-xtuner-slurm-train-filelock-flock-errno-38-function-not-implemented-on-shared-home-fs-no-answer-667",
    # b138-b143 (first runs at b5975228; tests/wild/_batches/misses-b138-b143.md classifies each). The spec's reading
    # of a line the thread left open: a segfault in UCX's receive callback under hcoll as the program's crash, ROCm's
    # memory access fault as the application's illegal access, NCCL's `invalid usage` as the job's set-up, an
    # ibv_modify_qp ETIMEDOUT on RoCE as the transport's path (the second such thread left open), ECOMM on a dataset
    # cache as the file system's, a traceback cut before its exception line in an S3 read, a NODE_FAIL state as the
    # node's loss; and one symptom: DeepSpeed's ssh check taken as the job's set-up where ssh's own line says the
    # master pod's name did not resolve.
    "unk-eks-workshop-kubeflow-mnist-training-pod-tf-s3-response-code-400-time-skew-hint-mnist-py-line-89-542",
    "unk-gadi-gpu-v100-openmpi-4-1-1-hcoll-mcast-ucx-recv-completion-cb-segfault-reported-to-mellanox-open-7391",
    "unk-lammps-hip-gpu-package-10-mpi-ranks-on-one-vega20-memory-access-fault-over-4-ranks-per-gpu-851",
    "unk-llamafactory-multi-gpu-custom-hf-datasets-cache-errno-70-communication-error-on-send-arrow-not-found-5454",
    "unk-nanotron-tiny-llama-4x-p5-48xlarge-efa-dp4-pp2-tp4-nccl-invalid-usage-265",
    "unk-pai-megatron-patch-2-node-roce-ibv-modify-qp-110-init-to-rtr-ncclsystemerror-works-with-ib-disabled-612",
    "unk-tt-boltz-blackhole-p150a-host-hard-reboots-during-folding-card-hang-nothing-logged-aer-unsupported-open-16",
    "unk-volcano-vcjob-deepspeed-hostfile-ssh-check-master-pod-hostname-not-resolvable-2952",
    # b144-b151 (first runs at e1c2a250; tests/wild/_batches/misses-b144-b149.md classifies b144-b149's). The spec's
    # reading of a line the thread left open: an uncaught library exception as the program's (NIXL's NIXL_ERR_BACKEND,
    # labelled ambiguous; MSCCL++'s IbError `Cannot allocate memory`), a glog CHECK on a work completion's status 12 as
    # the program's exception, EIO on a FUSE path as the file system's, ENOENT on a FUSE mount as the job's I/O, HIP's
    # `no kernel image` as the build's, cuInit's unknown error inside containers as the node's driver; one tool error:
    # aws-sdk-go's `(max tries) SerializationError` chain read as an uncaught exception (its `caused by:` link no longer
    # is: extract/traceback.py GO_CHAIN_LINKS).
    # b152-b161 (first runs at c81a9ae3 and, for b159-b161, d2278c39; misses-b152-b158.md). The spec's reading of a line
    # the thread left open: a segfault in a DataLoader worker or inside a vendor collective library (oneCCL) as the
    # program's crash (app.crash: the rank's own process, whatever library it was in); EACCES from ftruncate on an NFS
    # file and EINVAL on a GPFS lock as the program's own call; ENOSPC on a node-local cache as the file system's, and
    # a truncated tar shard as the program's exception, both labelled ambiguous; a TIMEOUT after an EAMxx start-up the
    # thread found hung as the scheduler's time limit; a 404 on a temporary checkpoint object the job itself wrote, and
    # a TensorFlow restore's traceback cut before its DataLossError, as the program's exception (a headless traceback
    # stays a weak cause: 13 right against 12 false definitives rest on one; docs/verdict.md).
    "amb-h5py-flush-over-nfs-ftruncate-eacces-nfs-or-hdf5-1859",
    "amb-returnn-filecache-local-disk-full-race-1792",
    "amb-webdataset-corrupted-tar-shard-unexpected-end-142",
    "unk-db-dataloader-worker-segfault-undiagnosed-94",
    "unk-e3sm-eamxx-ne120-pmgpu-hang-atm-init-8563",
    "unk-t5x-gcs-tmp-checkpoint-404-1091",
    "unk-t5x-tensorstore-checkpoint-gpfs-lock-einval-452",
    "unk-tensorflow-restore-from-s3-truncated-block-read-61449",
    "unk-torchccl-allgather-segfault-56",
    "amb-nixl-0-2-0-pip-register-memory-vram-nixl-err-backend-segfault-driver-access-or-conflicting-ucx-334",
    "unk-3fs-fio-128-jobs-per-fuse-client-write-eio-rpc-timeout-on-storage-node-140",
    "unk-juicefs-spark-sql-minio-upload-chunk-max-tries-status-417-unmarshal-error-5088",
    "unk-mscclpp-docker-mp-unit-tests-pingpongib-work-item-failed-status-12-memlock-suggested-unconfirmed-315",
    "unk-nvidia-container-toolkit-cuinit-unknown-error-only-inside-containers-host-nvenc-ok-open-1743",
    "unk-seaweedfs-weed-mount-dataloader-rank6-filenotfounderror-file-exists-on-server-8231",
    "unk-uccl-p2p-benchmark-read-write-rc-send-cq-state-error-12-same-iteration-open-293",
    "unk-vllm-rocm-mi355x-0-14-tp1-hip-no-kernel-image-tp4-tp8-pass-open-32895",
    # b165-b172 (first runs at 5192a37a; misses-b162-b176.md). The spec's reading of a line the thread left open: an
    # mlx5 adapter's firmware assert (`irisc not responding`) as the adapter's fault where the thread's fix was UCX's
    # (labelled ambiguous), a fatal AER at a root port as the PCIe link's against a BIOS setting only guessed at
    # (ambiguous), a GPU operator's CUDA validator crash-looping after the driver's and toolkit's checks passed as the
    # node's driver (undecided); a CUDA OOM naming another process's memory as the job's own OOM where only the thread
    # ties that process to a crashed earlier attempt (RETURNN's restart, its Bus error not in the logs); a user's
    # cancel of a job hung after a node crashed as the scheduler's cancel (an untimed cancel explains every untimed
    # symptom; a restart boundary does not yet split the evidence into attempts).
    "amb-charm-frontera-enzo-ucx-hang-mlx5-health-compromised-irisc-not-responding-2635",
    "amb-rocm-dual-radeon-vii-x370-tensorflow-aer-fatal-malformed-tlp-or-no-above-4g-decoding-858",
    "unk-gpu-operator-rke2-rhel8-cuda-validator-init-crashloop-fabricmanager-advice-disputed-error-persists-545",
    "unk-returnn-train-proc-manager-restart-after-bus-error-crashed-proc-still-holds-gpu-memory-oom-1649",
    "unk-torchelastic-jean-zay-node-crashed-agent-keepalive-heartbeat-rendezvousconnectionerror-hung-8h-76287",
    # b178 and b183 (first runs at 2907951a; misses-b177-b187.md). CUDA's 802 `system not ready` at cuInit read as the
    # node's driver stack (CUDA's documented meaning: a daemon such as Fabric Manager not running; b82's settled ollama
    # thread reads it so) where the thread stayed open and the poster saw it on A10 and A40 nodes too; GCE's own
    # `Instance failed to start due to preemption.` read as a preemption (Cromwell, scylla and packer read it so) where
    # the dstack thread was not sure the preemption line was related to the failed provisioning.
    "unk-alphafold-a10-a40-a100-cluster-cuinit-system-not-ready-falls-back-to-cpu-open-749",
    "unk-dstack-gcp-a2-highgpu-provision-failed-stockout-and-preemption-lines-521",
    # b187 (first run at 231b5cc7; misses-b177-b187.md): a lone illegal memory access read as the program's own, where
    # the thread (unanswered) ran its clients under MPS, whose server takes every client down with one client's fault.
    "unk-aws-virtual-gpu-device-plugin-mps-t4-illegal-memory-access-gpu-hangs-14",
    # b189, b191, b192 (first run at 8d958ed4; misses-b188-b203.md): a rank's own segfault that the thread left
    # undiagnosed (a launcher's `died with <Signals.SIGSEGV: 11>`, abseil's `*** SIGSEGV received` in a Ray actor the
    # job named, a renderer's segfault under a software Vulkan), which the spec's app.crash takes as the cause: a
    # crash signal with no other cause in the evidence. 29 of the corpus's false definitives are of this kind.
    "unk-mmdet-libra-rcnn-dist-train-rank0-sigsegv-state-dict-warning-harmless-segfault-undiagnosed-1151",
    "unk-vllm-deepseek-r1-2x8xh100-k8s-ray-worker-sigsegv-addproxyopifneeded-nccl-undecided-13136",
    "unk-parkour-go2-distill-2xa100-docker-lavapipe-vulkan-segfault-not-solved-60",
    # b196: the same kind (`ProcessExitedException: process 0 terminated with signal SIGSEGV` under xmp.spawn on a
    # Colab TPU runtime, closed as stale)
    "unk-xla-colab-highram-tpu-notebook-launcher-sigsegv-3136",
    # b197: a Syne Tune trial's one AssertionError in the evidence, labelled ambiguous for the thread's two readings in
    # prose (a random SageMaker job failure, or the user's error, the maintainer's "almost certainly"); the spec's
    # ambiguous needs two independent causes in the evidence, and the evidence holds one exception
    "amb-syne-tune-sagemaker-backend-trial-35-completed-no-metrics-user-error-or-random-job-failure-245",
    # b201: a soft lockup that names only a user task, which the spec's node.kernel takes as the cause, where the
    # thread stayed split (the maintainer's "hardware most likely", disputed); a Jetson's RCU stall read as node.kernel
    # after an ARM `SError detected` that no reader reads (a hardware fault or a block's clock off, the thread's two
    # readings: ambiguous)
    "amb-chia-plotter-soft-lockup-chia-plot-hardware-or-ram-oc-535",
    "amb-meta-tegra-jetson-nano-b01-serror-face-recognition-import-468",
    # b214 (first run at d985b9da; misses-b204-b217.md), three training logbooks' entries whose teams stayed unsure
    # where the evidence holds what the spec takes as a cause: a lone Xid 64 (a row-remap failure, gpu.memory by the
    # Xid catalog; NVIDIA's "not fatal" is the team's memo), Slurm's node failure beside a watchdog's CUDA unknown
    # error (node.unreachable), PyTorch's bus error naming shared memory (the shm row; the team found /dev/shm empty)
    "amb-idefics-80b-xid64-near-loss-divergence-gpu-or-data-ip-26-0-147-135",
    "amb-idefics-m4-tr141-exp2-cuda-unknown-error-node-failure-iam49-jz-meltdown",
    "unk-bloom-tr1-13b-dataloader-bus-error-shm-undiagnosed",
    # b224 (first run at 10c9fe38; misses-b218-b236.md): git's `OSError: error: invalid object ... for '.gitattributes'`
    # from the BigScience runs' log-syncing job, an OSError with no errno, which the spec reads as the job's I/O
    # (app.exception.io), where the team never found why the repository was corrupted (a killed git or the file system)
    "unk-bigscience-logs-repo-sync-git-corruption-fixes",
})
# The false alarms of today, each named. b45's FauxPilot bundle holds, line for line, what b36's BEVDet bundle holds
# (an NGC container's `WARNING: Detected NVIDIA ... GPU, which is not yet supported in this version of the container`
# and `ERROR: No supported GPU(s) detected to run this container`, no end state): BEVDet's thread found the image
# could not run on the GPU, FauxPilot's commenter says in prose that it worked. The evidence cannot tell them apart.
KNOWN_FALSE_ALARM = frozenset({
    "ok-fauxpilot-triton-22-06-rtx4080-not-yet-supported-no-supported-gpu-banner-server-works-173",
    # b46: the kernel's soft-lockup watchdog alone (`watchdog: BUG: soft lockup - CPU#98 stuck for 22s!`), no end state:
    # the thread says the model's save went on slowly and nothing failed; the kernel's lockup is read as `node.kernel`.
    "ok-llamafactory-zero3-pretrain-final-save-soft-lockup-cpu98-console-messages-1355",
    # b115: DataLoader workers' temporary directory on NFS, whose removal at shutdown fails with `Device or resource
    # busy` on `.nfs` files (an OSError after the run's work): the thread calls it a mild annoyance, nothing failed;
    # the error's errno is read as the job's I/O exception.
    "ok-pytorch-dataloader-shutdown-tmpdir-on-nfs-rmtree-device-or-resource-busy-mild-annoyance-143471",
})


def test_wild_corpus_accuracy(shared_verdicts: SharedVerdicts) -> None:
    scores = score_all([WILD], verdicts=shared_verdicts.verdicts)  # each bundle's default verdict (tests/corpus.py)
    assert len(scores) >= 60, f"only {len(scores)} wild bundles"
    n = len(scores)
    domain = sum(s.domain_ok for s in scores) / n
    category = sum(s.category_ok for s in scores) / n
    wrong = "\n".join(f"  {s.bundle}: expected {s.expected}, got {s.got}" for s in scores if not s.ok)
    report = f"\n{table(scores)}\n{table(scores, 'batch')}\nwrong:\n{wrong}"
    assert domain >= MIN_DOMAIN and category >= MIN_CATEGORY, report
    assert {s.bundle for s in scores if s.false_alarm} <= KNOWN_FALSE_ALARM, report
    assert {s.bundle for s in scores if s.false_definitive} <= KNOWN_FALSE_DEFINITIVE, report


def test_every_wild_bundle_has_its_provenance() -> None:
    for b in sorted(p.parent for p in WILD.glob("*/expected.yaml")):
        text = (b / "PROVENANCE.md").read_text(encoding="utf-8")
        assert "#" in text or "http" in text, f"{b.name}: PROVENANCE.md names no thread"


def test_the_corpus_table_groups_by_the_causes_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m tests.corpus DIR --by rule`: how right each rule's causes are (docs/verdict.md quotes the row of
    `app-exception-truncated`); a grouping it does not know is refused."""
    from tests.corpus import main

    scenarios = Path(__file__).parent / "scenarios"
    assert main([str(scenarios), "--by", "rule"]) == 0
    rows = {line.split()[0]: line.split()[1] for line in capsys.readouterr().out.splitlines()[1:]}
    # the showcase's cause is an NVLink Xid's rule; the bundles with no cause (`none`, `unknown`) group under "-"
    assert any(r.startswith("gpu-") for r in rows) and "-" in rows and rows["all"] == str(len(list(scenarios.glob(
        "*/expected.yaml"))))
    assert main([str(scenarios), "--by", "nope"]) == 2

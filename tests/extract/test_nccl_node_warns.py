"""NCCL's own words for a node, or a job's settings on it, that cannot give NCCL what it needs
(catalog/transport.yaml `nccl_node_warns`), read by extract/nccl.py and decided by the engine.

Lines marked `format` are NCCL's format strings (NVIDIA/nccl, the file the row cites) filled in by us; the
others are posted lines, with the issue they come from. None comes from tests/wild.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog import tables
from firstfault.catalog.tables import nccl_node_warns
from firstfault.catalog.vocab import CatalogTableError
from firstfault.collect.scan import feed_store
from firstfault.extract import nccl
from firstfault.extract.base import Candidate
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

ERROR = nccl.NcclErrorExtractor()

# One line per `setup` row: (row name, the line as NCCL prints it on node-02, rank 2).
SETUP_LINES: list[tuple[str, str]] = [
    # format: src/graph/search.cc ncclTopoGetChannelFromXml (NCCL_GRAPH_FILE for 4 GPUs on a VM of 2: NVIDIA/nccl#1008)
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/search.cc:727 NCCL WARN XML Import Channel : dev 3 "
                               "not found."),
    # format: src/graph/search.cc ncclTopoGetXmlFromChannel
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/search.cc:791 NCCL WARN XML Export Channel : rank 5 "
                               "not found."),
    # format: src/graph/xml.cc ncclTopoXmlGraphLoadGraphs
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/xml.cc:962 NCCL WARN XML Graph has wrong version 0, 1 "
                               "needed"),
    # format: src/graph/xml.cc ncclTopoGetXmlGraphFromFile
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/xml.cc:982 NCCL WARN Could not open XML graph file "
                               "/opt/microsoft/ndv4/graph.xml : No such file or directory"),
    # format: src/graph/topo.cc ncclTopoGetSystemFromXml
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/topo.cc:965 NCCL WARN ncclTopoGetSystemFromXml: system "
                               "node not found in XML"),
    # format: src/graph/paths.cc ncclTopoSetPaths (NCCL 2.18 under driver 535.161: NVIDIA/nccl#1253)
    ("nccl_too_old", "node-02:1234:1300 [2] graph/paths.cc:80 NCCL WARN Failed to find reverse path from remNode "
                     "0/41000 nlinks 2 to node 0/61000"),
    # format: src/enqueue.cc ncclInitKernelsForDevice (`cudaArch %d ncclMaxSharedMem %d exceeds device/fn
    # maxSharedMem %zu`, a WARN since 2.26; the sizes of an RTX 5090, sm_120)
    ("nccl_too_old", "node-02:1234:1300 [2] enqueue.cc:97 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds "
                     "device/fn maxSharedMem 79856"),
    # format: src/dev_runtime.cc getNcclVersionCompat
    ("nccl_too_old", "node-02:1234:1300 [2] dev_runtime.cc:1428 NCCL WARN NCCL library is too old. This application "
                     "was compiled with NCCL version 2.28.3, but is running with NCCL library version 2.27.5."),
    # horovod/horovod#3949 (https://github.com/horovod/horovod/issues/3949), its host made node-02
    ("duplicate_gpu", "node-02:67917:67949 [0] init.cc:748 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both "
                      "on CUDA device 3b000"),
    # NVIDIA/nccl#963 (https://github.com/NVIDIA/nccl/issues/963, communicators used from other threads than the
    # ones they were made for), its host made node-02: src/misc/argcheck.cc's check of the root, read by the file
    ("invalid_argument", "node-02:248281:248306 [1] misc/argcheck.cc:39 NCCL WARN Recv : invalid root 0 (root should "
                         "be in the 0..0 range)"),
    # format: src/misc/argcheck.cc PtrCheck (`%s : %s argument is NULL`, through CommCheck), a WARN header without its
    # file (releases that print none), as cuSolverMp's mp_sygvd sample met it (deepmodeling/abacus-develop#7657)
    ("invalid_argument", "node-02:1234:1300 [2] NCCL WARN CommUserRank : comm argument is NULL"),
    # format: src/transport/nvls.cc ncclNvlsInit (NCCL_NVLS_ENABLE=1 with two ranks on one GPU), v2.30.7's header
    ("duplicate_gpu", "node-02:1234:1300 [2] transport/nvls.cc:254 (ncclNvlsInit) NCCL WARN NCCL_NVLS_ENABLE has been "
                      "set to \"1\" and communicator has multiple ranks using the same NVML device. This is not "
                      "compatible with NCCL_NVLS_ENABLE=1."),
    # format: src/bootstrap.cc bootstrapGetUniqueId (v2.21.5), NCCL_COMM_ID=node-01 without a port
    ("comm_id_invalid", "node-02:1234:1300 [2] bootstrap.cc:210 NCCL WARN Invalid NCCL_COMM_ID, please use format: "
                        "<ipv4>:<port> or [<ipv6>]:<port> or <hostname>:<port>"),
    # format: src/bootstrap.cc bootstrapGetUniqueId (v2.30.7)
    ("comm_id_invalid", "node-02:1234:1300 [2] bootstrap.cc:437 (bootstrapGetUniqueId) NCCL WARN "
                        "ncclCommGetUniqueId should not be called when NCCL_COMM_ID is set"),
    # format: src/misc/socket.cc ncclSocketGetAddrFromString (v2.21.5), reading NCCL_COMM_ID
    ("comm_id_invalid", "node-02:1234:1300 [2] misc/socket.cc:258 NCCL WARN Net : No valid <IPv4_or_hostname>:<port> "
                        "pair found"),
    ("comm_id_invalid", "node-02:1234:1300 [2] misc/socket.cc:301 NCCL WARN Net : No valid [IPv6]:port pair found"),
    # format: src/transport/net_ib.cc ncclIbConnect (v2.27.3), an InfiniBand and a RoCE NIC in one job
    ("nic_link_type_mismatch", "node-02:1234:1300 [2] transport/net_ib.cc:1414 NCCL WARN NET/IB : Attempted to "
                               "connect incompatible devices: [1]mlx5_1:1/RoCE and [0]mlx5_0:1/IB. Try selecting NICs "
                               "of only one link type using NCCL_IB_HCA"),
    # format: src/transport/net_ib/connect.cc ncclIbConnect (v2.30.7)
    ("nic_link_type_mismatch", "node-02:1234:1300 [2] transport/net_ib/connect.cc:1034 (ncclIbConnect) NCCL WARN "
                               "NET/IB : Remote RoCE device is incompatible with the local [0]mlx5_0:1/IB. Try "
                               "selecting NICs of only one link type using NCCL_IB_HCA"),
    # format: src/graph/xml.cc xmlGetChar, xmlGetNode (v2.21.5): an NCCL_TOPO_FILE cut short, a tag left open
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/xml.cc:40 NCCL WARN XML Parse : Unexpected EOF"),
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/xml.cc:167 NCCL WARN XML Parse error : unexpected "
                               "trailing / in closing tag gpu"),
    ("topology_file_mismatch", "node-02:1234:1300 [2] graph/xml.cc:219 NCCL WARN XML Mismatch : pci / cpu"),
    # format: src/net.cc ncclNetInit (v2.18.3), NCCL_NET=IB on a node without IB
    ("network_not_available", "node-02:1234:1300 [2] net.cc:285 NCCL WARN Error: network IB not found."),
    # format: src/plugin/net.cc ncclNetInit
    ("network_not_available", "node-02:1234:1300 [2] plugin/net.cc:349 NCCL WARN Failed to initialize any NET plugin"),
    # format: src/bootstrap.cc netGetDevice
    ("no_interface", "node-02:1234:1300 [2] bootstrap.cc:577 NCCL WARN no device found matching exactly ib9, verify "
                     "NCCL_OOB_NET_IFNAME"),
    # NVIDIA/nccl#615 (the IB transport's words of NCCL 2.9), its host made node-02
    ("collective_size_mismatch", "node-02:15483:15645 [2] transport/net_ib.cc:665 NCCL WARN NET/IB : collective "
                                 "mismatch error local size 546816 remote 524288 addr 7ff7d1530000 rkey 2553d seq "
                                 "14/1c"),
    # NVIDIA/nccl#268 (the socket transport's, under Horovod's TensorFlow), its host made node-02
    ("collective_size_mismatch", "node-02:2918:3333 [2] external/nccl_archive/src/transport/net_socket.cc:200 NCCL "
                                 "WARN NET/Socket : message truncated : receiving 696320 bytes instead of 32768"),
    # format: src/bootstrap.cc bootstrapNetRecv, with the sizes NVIDIA/nccl#1273 reports (2.20.5; 2.18.5 worked)
    ("bootstrap_size_mismatch", "node-02:8191:8290 [2] bootstrap.cc:77 NCCL WARN Message truncated : received 1024 "
                                "bytes instead of 256"),
    # format: src/init.cc initTransportsRank (ranks of one job on two NCCL releases: ncclInvalidUsage)
    ("nccl_version_mismatch", "node-02:1234:1300 [2] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank "
                              "4 version 22703 rank 2 version 21903"),
    # format: src/ras/ras.cc rasMsgHandleConnInit (v2.24 and later)
    ("nccl_version_mismatch", "node-02:1234:1300 [2] ras/ras.cc:415 NCCL WARN NCCL version mismatch with remote peer "
                              "10.0.0.3<41877> (local: 2.24.3, remote 2.23.4)"),
    # format: src/mnnvl.cc ncclMnnvlCheck (v2.27.3): no IMEX channel given to the job's processes
    ("imex_channel_missing", "node-02:1234:1300 [2] mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize 4) is available but not "
                             "working on this system. Check the IMEX channel configuration "
                             "(/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue."),
    # format: src/graph/topo.cc ncclTopoForceMerge
    ("nic_merge_invalid", "node-02:1234:1300 [2] graph/topo.cc:1360 NCCL WARN TOPO/NET : Could not force merge NICs "
                          "mlx5_0,mlx5_9. Please specify a valid NCCL_NET_FORCE_MERGE string."),
    ("nic_merge_invalid", "node-02:1234:1300 [2] graph/topo.cc:1341 NCCL WARN TOPO/NET : Only matched 1 devices, 2 "
                          "requested from mlx5_0,mlx5_9"),
    # NVIDIA/nccl#1748 (https://github.com/NVIDIA/nccl/issues/1748, NCCL 2.26.2 on nodes of four NICs, fixed by 2.27),
    # its host made node-02
    ("nccl_release_defect", "node-02:1234:1300 [2] graph/topo.h:230 NCCL WARN Could not find NET with id 0"),
    # format: src/graph/topo.h ncclTopoIdToIndex, the same lookup for a GPU
    ("nccl_release_defect", "node-02:1234:1300 [2] graph/topo.h:231 NCCL WARN Could not find GPU with id 1b000"),
    # format: aws/aws-ofi-nccl src/tuner/nccl_ofi_tuner.cpp nccl_ofi_tuner_init_v1 (v1.16.x, a WARN that fails the
    # init), the plugin's function as the WARN's file
    ("tuner_refused_settings", "node-02:1234:1300 [2] ncclResult_t nccl_ofi_tuner_init_v1(size_t, size_t, "
                               "ncclDebugLogger_t):270 NCCL WARN NET/OFI The tuner plugin can not be loaded when "
                               "explicitly choosing an algorithm or protocol with NCCL_ALGO/NCCL_PROTO"),
    # The audit of NCCL's WARN calls (NVIDIA/nccl v2.30.7, 5067397c), one line per spelling.
    # format: src/init.cc ncclCommInitRankDev, ncclCommInitAll, parseCommConfig (ncclInvalidArgument); v2.30.7's header
    ("invalid_argument", "node-02:1234:1300 [2] init.cc:2501 (ncclCommInitRankDev) NCCL WARN Invalid rank requested "
                         ": 1/1"),
    ("invalid_argument", "node-02:1234:1300 [2] init.cc:2596 NCCL WARN Invalid device count requested : 0"),
    ("invalid_argument", "node-02:1234:1300 [2] init.cc:2480 NCCL WARN improper usage of ncclCommInitRank: nId = 2, "
                         "nranks=1"),
    ("invalid_argument", "node-02:1234:1300 [2] init.cc:2336 NCCL WARN Invalid config splitShare attribute value 7"),
    ("invalid_argument", "node-02:1234:1300 [2] init.cc:2265 NCCL WARN ncclConfig_t argument not initialized via "
                         "NCCL_CONFIG_INITIALIZER"),
    # format: src/enqueue.cc, src/group.cc ncclGroupEndInternal, src/init.cc ncclCommDestroy (ncclInvalidUsage)
    ("invalid_usage", "node-02:1234:1300 [2] enqueue.cc:1160 NCCL WARN Trying to send to self without a matching "
                      "recv"),
    ("invalid_usage", "node-02:1234:1300 [2] enqueue.cc:1180 NCCL WARN Trying to recv to self without a matching "
                      "send"),
    ("invalid_usage", "node-02:1234:1300 [2] group.cc:776 NCCL WARN ncclGroupEnd: not in a group call."),
    ("invalid_usage", "node-02:1234:1300 [2] group.cc:61 NCCL WARN Blocking and nonblocking communicators are not "
                      "allowed in the same group."),
    ("invalid_usage", "node-02:1234:1300 [2] init.cc:2895 NCCL WARN comm 0x55d0c0a3e0 has already been destroyed"),
    # format: src/enqueue.cc ncclEnqueueCheck (v2.24.3 and later), an FP8 reduction on a GPU before sm90
    ("invalid_usage", "node-02:1234:1300 [2] enqueue.cc:3029 NCCL WARN FP8 reduction support begins with sm90 capable "
                      "devices."),
    # format: src/bootstrap.cc bootstrapRoot (v2.23.4 and later)
    ("rank_layout_mismatch", "node-02:1234:1300 [2] bootstrap.cc:335 NCCL WARN Bootstrap Root : mismatch in info from "
                             "procs, nranks 8 vs 4, nroots 1 vs 1, iroot 0 vs 0, offset 0 vs 0"),
    # format: src/init.cc initTransportsRank (v2.30.7)
    ("duplicate_gpu", "node-02:1234:1300 [2] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. "
                      "Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration."),
    # format: src/dev_runtime.cc getNcclVersionCompat; src/devcomm/devcomm_v22902.cc
    ("nccl_version_mismatch", "node-02:1234:1300 [2] dev_runtime.cc:1444 NCCL WARN NCCL library is not backwards "
                              "compatible. This application was compiled with NCCL version 2.30.7, but is running "
                              "with NCCL library version 3.0.0."),
    ("nccl_version_mismatch", "node-02:1234:1300 [2] devcomm/devcomm_v22902.cc:109 NCCL WARN The application was "
                              "compiled with too old version of NCCL. It was compiled with NCCL version 2.29.2, but is "
                              "running with NCCL library version 2.30.7."),
    # format: src/enqueue.cc topoGetAlgoInfo (v2.24.3 and later), NCCL_ALGO / NCCL_PROTO set
    ("algorithm_settings_invalid", "node-02:1234:1300 [2] enqueue.cc:2063 NCCL WARN No algorithm/protocol available "
                                   "for function AllGather with datatype ncclInt8. NCCL_ALGO was set to Tree."),
    ("algorithm_settings_invalid", "node-02:1234:1300 [2] enqueue.cc:2063 NCCL WARN No algorithm/protocol available "
                                   "for function Broadcast with datatype ncclFloat32. NCCL_PROTO was set to LL128."),
    # format: src/graph/topo.cc ncclTopoForceMerge, ncclTopoMakeVnic (v2.30.7)
    ("nic_merge_invalid", "node-02:1234:1300 [2] graph/topo.cc:1347 NCCL WARN Specified fused NIC mlx5_0,mlx5_1,"
                          "mlx5_2,mlx5_3,mlx5_4 which has too many devices (5). Max 4"),
    ("nic_merge_invalid", "node-02:1234:1300 [2] graph/topo.cc:1566 NCCL WARN Fusing NET devices from different NUMA "
                          "domains is not supported."),
    # format: aws/aws-ofi-nccl src/nccl_ofi_rdma.cpp finish_connect (C++: __PRETTY_FUNCTION__ as the WARN's file)
    ("ofi_rail_mismatch", "node-02:1234:1300 [2] int finish_connect(nccl_net_ofi_rdma_send_comm*):2067 NCCL WARN "
                          "NET/OFI Unexpected number of remote rails for dev 0. Expected 3 but got 2"),
    # aws-ofi-nccl refusing a setting the job gave it (aws/aws-ofi-nccl at 2daf7d30, v1.21.1+; formats filled in,
    # printed through NCCL's logger with the plugin's function where NCCL puts the file):
    # include/nccl_ofi_param_impl.h ofi_nccl_param_impl::initialize (since v1.19.0)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] initialize:221 NCCL WARN NET/OFI WARNING: OFI_NCCL_PROTOCOL set "
                            "to invalid value RMDA"),
    # src/nccl_ofi_rdma.cpp nccl_net_ofi_rdma_init (OFI_NCCL_EAGER_MAX_SIZE above OFI_NCCL_MIN_STRIPE_SIZE, v1.7.0+)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] nccl_net_ofi_rdma_init:7320 NCCL WARN NET/OFI Invalid value for "
                            "EAGER_MAX_SIZE"),
    # src/nccl_ofi_rdma.cpp nccl_net_ofi_rdma_init (OFI_NCCL_EARLY_COMPLETION with eager sends, since v1.15.0)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] nccl_net_ofi_rdma_init:7374 NCCL WARN NET/OFI Conflicted "
                            "configuration of EARLY_COMPLETION and EAGER_MAX_SIZE"),
    # src/nccl_ofi_rdma.cpp nccl_net_ofi_rdma_init (OFI_NCCL_EARLY_COMPLETION=1 on a provider without automatic
    # progress, since v1.15.0)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] nccl_net_ofi_rdma_init:7368 NCCL WARN NET/OFI Failed configuration "
                            "of EARLY_COMPLETION due to provider data progress model is not FI_PROGRESS_AUTO"),
    # src/nccl_ofi_rdma.cpp the RDMA device constructor (OFI_NCCL_FORCE_NUM_RAILS=3 on a node of 2 rails, v1.14.0)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] nccl_net_ofi_rdma_device_t:7023 NCCL WARN NET/OFI Number of forced "
                            "rails (3) not a multiple of numer of rails (2)"),
    # src/nccl_ofi_net.cpp nccl_net_ofi_create_plugin (OFI_NCCL_NIC_DUP_CONNS where GPUDirect RDMA is on, v1.6.0)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] nccl_net_ofi_create_plugin:389 NCCL WARN NET/OFI "
                            "NCCL_OFI_NIC_DUP_CONNS set on platform that supports GPUDirect RDMA.  This configuration "
                            "is not supported."),
    # src/nccl_ofi_net.cpp nccl_net_ofi_domain_t (OFI_NCCL_MR_KEY_SIZE=8, since v1.10.0)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] nccl_net_ofi_domain_t:886 NCCL WARN NET/OFI Provided mr keypool "
                            "size of 8 must be less than 64"),
    # src/cm/nccl_ofi_cm_resources.cpp (OFI_NCCL_CM_NUM_RX_BUFFERS=0, since v1.16.0)
    ("ofi_setting_invalid", "node-02:1234:1300 [2] cm_resources:137 NCCL WARN NET/OFI Invalid value for "
                            "OFI_NCCL_CM_NUM_RX_BUFFERS: 0"),
]

# One line per `internal` row: a consistency check of NCCL's own (the nccl.error symptom, naming the check).
INTERNAL_LINES: list[tuple[str, str]] = [
    # NVIDIA/nccl#1020 (https://github.com/NVIDIA/nccl/issues/1020), its host prefix as posted cut: made node-02's
    ("nccl_ring_check", "node-02:1234:1300 [7] graph/rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start "
                        "(13 != 15)."),
    # format: src/graph/rings.cc ncclBuildRings
    ("nccl_ring_check", "node-02:1234:1300 [2] graph/rings.cc:64 NCCL WARN Error : ring 1 does not contain rank 5"),
    # format: src/graph/connect.cc setTreeDown
    ("nccl_tree_check", "node-02:1234:1300 [2] graph/connect.cc:131 NCCL WARN Internal error : tree already has 3 "
                        "children (4 5 6)"),
    # format: src/init.cc (v2.22.3 and later), src/enqueue.cc (v2.24.3 and later)
    ("nccl_schedule_check", "node-02:1234:1300 [2] init.cc:959 NCCL WARN P2p schedule creation has bugs."),
    ("nccl_schedule_check", "node-02:1234:1300 [2] enqueue.cc:2063 NCCL WARN No algorithm/protocol available for "
                            "function AllGather with datatype ncclInt8."),
    ("nccl_schedule_check", "node-02:1234:1300 [2] enqueue.cc:2216 NCCL WARN Unknown pattern for collective 3 "
                            "algorithm 1"),
]

# One line per `platform` row: a service of the node's platform under NCCL is not working.
PLATFORM_LINES: list[tuple[str, str]] = [
    # format: src/mnnvl.cc ncclMnnvlCheck (v2.27.3): IMEX refused the fabric handle's export or import
    ("imex_not_working", "node-02:1234:1300 [2] mnnvl.cc:86 NCCL WARN MNNVL (cliqueSize 4) is available but not "
                         "working on this system. Check the IMEX configuration (nvidia-imex-ctl -N). Set "
                         "NCCL_MNNVL_ENABLE=0 to ignore this issue."),
    # format: src/mnnvl.cc ncclMnnvlCheck (v2.25.1)
    ("imex_not_working", "node-02:1234:1300 [2] mnnvl.cc:69 NCCL WARN MNNVL (cliqueSize 4) is available but not "
                         "supported on this system. Check the IMEX configuration."),
]

# One line per `benign` row: NCCL goes on.
BENIGN_LINES: list[tuple[str, str]] = [
    # NVIDIA/nccl#487 (https://github.com/NVIDIA/nccl/issues/487), its host made node-02
    ("graph_search_fallback", "node-02:21858:22794 [5] graph/search.cc:765 NCCL WARN Could not find a path for "
                              "pattern 4, falling back to simple order"),
    # format: src/graph/xml.cc ncclTopoGetXmlFromFile (v2.21.5)
    ("topology_file_fallback", "node-02:1234:1300 [2] graph/xml.cc:392 NCCL WARN Could not open XML topology file "
                               "/opt/microsoft/ncv4/topo.xml : No such file or directory"),
    # format: src/net.cc ncclNetPluginInit (v2.18.3), printed as a WARN by a release's plugin loader
    ("net_plugin_fallback", "node-02:1234:1300 [2] net.cc:179 NCCL WARN NET/Plugin : Plugin load (libnccl-net.so) "
                            "returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory"),
    # NVIDIA/nccl#573 (https://github.com/NVIDIA/nccl/issues/573), its host made node-02
    ("ibverbs_fallback", "node-02:92777:92777 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"),
    # format: src/transport/net_ib/init.cc ncclIbGetPciPath
    ("pci_path_unresolved", "node-02:1234:1300 [2] transport/net_ib/init.cc:67 NCCL WARN Could not find real path of "
                            "mlx5_0 (/sys/class/infiniband/mlx5_0/device)"),
    # format: src/transport/net_ib/init.cc ncclIbInitDevices (NCCL_SOCKET_IFNAME naming no interface of the node):
    # NCCL tries its sockets next
    ("ib_no_ip_interface", "node-02:1234:1300 [2] transport/net_ib/init.cc:307 NCCL WARN NET/IB : No IP interface "
                           "found."),
    # aws-ofi-nccl's summaries of a start-up that failed, printed through NCCL's logger (format: aws/aws-ofi-nccl
    # src/nccl_ofi_net.cpp nccl_net_ofi_create_plugin, the plugin's function as the WARN's file); NCCL goes on with
    # its own transports
    ("ofi_plugin_fallback", "node-02:1234:1300 [2] nccl_net_ofi_create_plugin:334 NCCL WARN NET/OFI Unable to find a "
                            "protocol that worked.  Failing initialization."),
    ("ofi_plugin_fallback", "node-02:1234:1300 [2] nccl_net_ofi_create_plugin:271 NCCL WARN NET/OFI Failed to "
                            "initialize sendrecv protocol"),
    ("ofi_plugin_fallback", "node-02:1234:1300 [2] nccl_net_ofi_create_plugin:278 NCCL WARN NET/OFI Failed to "
                            "initialize rdma protocol"),
    ("ofi_plugin_fallback", "node-02:1234:1300 [2] nccl_net_ofi_create_plugin:418 NCCL WARN NET/OFI aws-ofi-nccl "
                            "initialization failed"),
    # format: aws/aws-ofi-nccl src/nccl_ofi_net.cpp nccl_net_ofi_query_provider_capabilities
    ("ofi_plugin_fallback", "node-02:1234:1300 [2] nccl_net_ofi_query_provider_capabilities:651 NCCL WARN NET/OFI EFA "
                            "provider requires at least libfabric version 1.22.0."),
    # format: aws/aws-ofi-nccl src/nccl_ofi_net.c nccl_net_ofi_init (before a5c6434c)
    ("ofi_plugin_fallback", "node-02:1234:1300 [2] NCCL WARN NET/OFI Only EFA provider is supported"),
    # format: aws/aws-ofi-nccl src/nccl_ofi_net.c get_providers (before b8628aa5), NCCL's older header without a file
    ("ofi_plugin_fallback", "node-02:1234:1300 [2] NCCL WARN NET/OFI Couldn't find any optimal provider"),
    # format: src/transport/net_ib/p2p.cc ncclIbTest
    ("completion_announced", "node-02:1234:1300 [2] transport/net_ib/p2p.cc:854 NCCL WARN NET/IB: Got CQE with error "
                             "(devIndex=0, req=0x7f3c, comm=0x7f3d (recv), wr_id=0x1, qp_num=77)"),
]

# PyTorch's report of the failed init on the same rank (format: ProcessGroupNCCL's `NCCL error in:` line).
SYSTEM_ERROR = ("[rank2]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
                "version 2.18.1")
# Another node's fault, for the near misses (format: NVRM's Xid line; NCCL's completion WARN and async event).
XID_79 = "Nov  2 10:01:00 node-03 kernel: NVRM: Xid (PCI:0000:41:00): 79, pid=1234, GPU has fallen off the bus.\n"
PEER = ("node-03:55:66 [4] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<45763> with "
        "status=12 opcode=129 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.3 remoteGid ::ffff:10.0.0.2")
LINK = "node-03:55:66 [4] NCCL WARN NET/IB : mlx5_0:1 Got async error event: port error"
TS_EARLY, TS_INIT = "[2026-11-02 10:01:00] ", "[2026-11-02 10:05:00] "


def _body(line: str) -> str:
    """The WARN's message as PyTorch quotes it after `Last error:` (no NCCL header)."""
    return line.split(" NCCL WARN ", 1)[1]


# ------------------------------------------------------------------ the table


def test_every_row_has_a_line_here() -> None:
    """A row added to the table without a line here fails: each row gets its positive and near-miss tests."""
    setup = {(r.name, t) for r in nccl_node_warns() if r.reading == "setup" for t in (*r.texts, *r.files)}
    platform = {(r.name, t) for r in nccl_node_warns() if r.reading == "platform" for t in r.texts}
    benign = {(r.name, t) for r in nccl_node_warns() if r.reading == "benign" for t in r.texts}
    internal = {(r.name, t) for r in nccl_node_warns() if r.reading == "internal" for t in r.texts}
    assert {n for n, _ in setup} == {n for n, _ in SETUP_LINES}
    assert {n for n, _ in platform} == {n for n, _ in PLATFORM_LINES}
    assert {n for n, _ in benign} == {n for n, _ in BENIGN_LINES}
    assert {n for n, _ in internal} == {n for n, _ in INTERNAL_LINES}
    for name, line in SETUP_LINES + PLATFORM_LINES + BENIGN_LINES + INTERNAL_LINES:
        assert any(n == name and t in line for n, t in setup | platform | benign | internal), (name, line)
    # every spelling of a row added by the audit has its own line (the earlier rows: one line a row at least)
    audited = {"invalid_usage", "rank_layout_mismatch", "algorithm_settings_invalid", "ofi_rail_mismatch",
               "ofi_setting_invalid",
               *(n for n, _ in internal)}
    for name, text in setup | internal:
        if name in audited:
            assert any(n == name and text in line for n, line in SETUP_LINES + INTERNAL_LINES), (name, text)


def _build_with(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]]) -> object:
    real = tables._document

    def fake(name: str) -> Any:
        doc = real(name)
        return {**doc, "nccl_node_warns": rows} if name == "transport.yaml" else doc

    monkeypatch.setattr(tables, "_document", fake)
    build = nccl_node_warns.__wrapped__.__wrapped__  # type: ignore[attr-defined]  # lru_cache, then _kept
    return build()


GOOD = {"name": "duplicate_gpu", "reading": "setup", "source": "src/init.cc initTransportsRank",
        "texts": ["Duplicate GPU detected : rank"]}


@pytest.mark.parametrize(("rows", "problem"), [
    ([GOOD, {**GOOD, "name": "other"}], "appears twice"),
    ([{**GOOD, "texts": ["no socket interface found here"]}], "meets a local or peer status's words"),
    ([{**GOOD, "texts": ["Connection timed out"]}], "meets a local or peer status's words"),
    ([{**GOOD, "reading": "fatal"}], "reading"),
    ([{**GOOD, "source": "init.cc"}], "source"),
    ([{**GOOD, "texts": []}], "texts"),
    ([{**GOOD, "texts": [], "files": ["misc/argcheck.cc"], "reading": "benign"}], "never announced at INFO nor benign"),
    ([{**GOOD, "files": ["misc/argcheck.cc"]}, {**GOOD, "name": "other", "texts": ["something else entirely"],
      "files": ["misc/argcheck.cc"]}], "appears twice"),
    ([{**GOOD, "name": "nccl_ring_check", "reading": "internal"}], "header"),
], ids=["twice", "local-word", "peer-word", "reading", "uncited", "no-words-no-file", "benign-file", "file-twice",
        "internal-without-header"])
def test_the_table_refuses(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(CatalogTableError, match=problem):
        _build_with(monkeypatch, rows)


# ------------------------------------------------------------------ the extractor


@pytest.mark.parametrize(("name", "line"), SETUP_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SETUP_LINES)])
def test_a_setup_warn_is_the_jobs_setup_on_its_node(name: str, line: str) -> None:
    d = helpers.one(ERROR, line, "application")
    assert d.kind == "nccl.error"
    helpers.assert_fields(d, {"setup": True, "local_status": name})
    assert d.host == "node-02"


def _header_only(line: str) -> bool:
    """Whether the row words a line holds count only under NCCL's WARN header (`header: true`)."""
    return any(r.header and any(t in line for t in (*r.texts, *r.files)) for r in nccl_node_warns())


@pytest.mark.parametrize(("name", "line"), [(n, ln) for n, ln in SETUP_LINES if not _header_only(ln)])
def test_a_setup_warn_quoted_after_last_error_is_read_the_same(name: str, line: str) -> None:
    """PyTorch's `Last error:` quotes the WARN's message without NCCL's header (verl-project/verl#161 quotes
    `Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10` so)."""
    d = helpers.one(ERROR, _body(line), "application")
    helpers.assert_fields(d, {"setup": True, "local_status": name})


@pytest.mark.parametrize(("name", "line"), BENIGN_LINES, ids=[n for n, _ in BENIGN_LINES])
def test_a_fallback_warn_is_no_event(name: str, line: str) -> None:
    assert helpers.scan(ERROR, [line], "application") == []


@pytest.mark.parametrize("line", [
    # NCCL's INFO lines holding the words: a setting reported, nothing failed (format: search.cc, topo.cc)
    "node-02:1234:1300 [2] NCCL INFO NCCL_GRAPH_FILE set by environment to /opt/microsoft/ncv4/graph.xml",
    "node-02:1234:1300 [2] NCCL INFO Failed to find reverse path from remNode 0/41000 nlinks 2 to node 0/61000",
    "node-02:1234:1300 [2] NCCL INFO Could not find a path for pattern 4, falling back to simple order",
    # `Error: network ` is NCCL's only under its WARN header (synthetic: another program's words)
    "requests.exceptions.ConnectionError: Error: network unreachable while fetching the dataset",
    # aws-ofi-nccl from aws/aws-ofi-nccl#986 on: the same words at INFO, the plugin falls back to NCCL's own tuner
    # (format: src/tuner/nccl_ofi_tuner.cpp nccl_ofi_tuner_init_v2)
    "node-02:1234:1300 [2] NCCL INFO NET/OFI The tuner plugin can not be loaded when explicitly choosing an algorithm "
    "or protocol with NCCL_ALGO/NCCL_PROTO. Defaulting to internal tuner.",
    # a program's own check in PtrCheck's words, with no NCCL header (synthetic): not NCCL's refusal
    "ValueError: buffer argument is NULL",
    # a program's own lookup in its own words, with no NCCL header (synthetic)
    "KeyError: Could not find GPU with id 3 in the inventory",
    # NCCL's INFO line of the result the argument check returned, passed up the stack (NVIDIA/nccl#963): the file
    # is the INFO's words, not a WARN header's, and says nothing of its own
    "node-02:248281:248306 [1] NCCL INFO enqueue.cc:1450 -> 4",
    # a WARN of another source file in words an argument check could use (format: src/transport/p2p.cc, p2pMap's
    # `Cuda failure 'peer access is not supported between these two devices'` is the CUDA table's, not this row's)
    "node-02:1234:1300 [2] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported between these "
    "two devices'",
    # NCCL reporting the NCCL_COMM_ID it was given, at INFO (format: src/bootstrap.cc): nothing failed
    "node-02:1234:1300 [2] NCCL INFO NCCL_COMM_ID set by environment to node-01:29500",
    # an XML parser's words without NCCL's WARN header (synthetic: another program's)
    "XML Parse error : unexpected trailing / in closing tag gpu",
    # the advice in a person's words, not NCCL's WARN (synthetic)
    "try selecting NICs of only one link type, then rerun the job",
    # aws-ofi-nccl v1.17-v1.18 wrote a setting it refused to stderr without NCCL's header (include/
    # nccl_ofi_param_impl.h at v1.17.3: `std::cerr << "WARNING: " << envname << " set to invalid value "`): the
    # words alone are any program's
    "WARNING: OFI_NCCL_PROTOCOL set to invalid value RMDA",
    # the plugin reporting the settings it took, at INFO (format: include/nccl_ofi_param.h at v1.14.0, `Setting %s
    # environment variable to %s`): nothing refused
    "node-02:1234:1300 [2] NCCL INFO NET/OFI Setting OFI_NCCL_EAGER_MAX_SIZE environment variable to 8192",
], ids=["graph-file-info", "reverse-path-info", "pattern-info", "network-not-nccl", "tuner-info-fallback",
        "null-not-nccl", "lookup-not-nccl", "result-info-line", "other-file-warn", "comm-id-info", "xml-not-nccl",
        "nic-advice-prose", "ofi-setting-stderr", "ofi-setting-info"])
def test_near_misses_are_no_setup(line: str) -> None:
    assert not any(d.fields.get("setup") for d in helpers.scan(ERROR, [line], "application"))


# ------------------------------------------------------------------ through the engine


def _verdict(make_bundle: BundleMaker, files: dict[str, str], name: str = "b",
             ) -> tuple[str | None, str | None, list[str] | None]:
    v = Analyzer().analyze_path(str(make_bundle(files, copy.deepcopy(WORKLOAD), name)))
    rc = v.root_cause
    return v.attributed_domain, rc.category if rc else None, rc.nodes if rc else None


@pytest.mark.parametrize(("name", "line"), SETUP_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SETUP_LINES)])
def test_a_setup_warn_then_the_frameworks_error_is_software_setup_on_that_node(
        make_bundle: BundleMaker, name: str, line: str) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": f"{line}\n{SYSTEM_ERROR}\n"})
    assert got == ("software", "app.exception.setup", ["node-02"])


@pytest.mark.parametrize(("name", "line"), SETUP_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SETUP_LINES)])
def test_a_setup_warn_never_outranks_a_fault_elsewhere(make_bundle: BundleMaker, name: str, line: str) -> None:
    rank2 = f"{TS_INIT}{line}\n{TS_INIT}{SYSTEM_ERROR}\n"
    xid = _verdict(make_bundle, {"app/rank-2.log": rank2, "nodes/node-03/kern.log": XID_79}, "xid")
    assert xid[:2] == ("hardware", "gpu.fallen_off_bus")
    peer_first = _verdict(make_bundle, {"app/rank-2.log": rank2, "app/rank-4.log": f"{TS_EARLY}{PEER}\n"}, "peer")
    assert peer_first[1] != "app.exception.setup" and peer_first[2] == ["node-03"]
    link = _verdict(make_bundle, {"app/rank-2.log": rank2, "app/rank-4.log": f"{LINK}\n"}, "link")
    assert link[:2] == ("network", "network.link")


@pytest.mark.parametrize(("name", "line"), BENIGN_LINES, ids=[n for n, _ in BENIGN_LINES])
def test_a_fallback_warn_then_the_frameworks_error_is_no_setup(make_bundle: BundleMaker, name: str,
                                                               line: str) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": f"{line}\n{SYSTEM_ERROR}\n"})
    assert got[1] != "app.exception.setup"


# ------------------------------------------------------------------ what the other tables already read

# NCCL 2.7's shmSetup (src/include/shm.h, format: SYSCHECKVAL's `Call to shm_open failed : %s`) and shmOpen's
# `Error while creating shared memory segment %s (size %d)` after it; from 2.12 the open's errno is an INFO line and
# the second line alone is printed. The creation failing is /dev/shm as the job's container gives it, whatever the
# errno (permissions, size): the shared-memory reading of extract/nccl.py (app.exception, software, on that node).
SHM_CREATE = ["node-02:1234:1300 [2] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
              "node-02:1234:1300 [2] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
              "nccl-shm-recv-5c6f2c1e-2-1-0 (size 9637888)"]
# The same open failing while attaching to the segment a peer made: the peer's side, no set-up of this node.
SHM_ATTACH = ["node-02:1234:1300 [2] include/shm.h:27 NCCL WARN Call to shm_open failed : No such file or directory",
              "node-02:1234:1300 [2] include/shm.h:48 NCCL WARN Error while attaching to shared memory segment "
              "nccl-shm-recv-5c6f2c1e-2-1-0 (size 9637888)"]
# format: CUDACHECK's `Cuda failure '%s'`, cudaSetDevice given an index the node's GPUs do not have
ORDINAL = "node-02:1234:1300 [2] init.cc:1700 NCCL WARN Cuda failure 'invalid device ordinal'"


def test_a_shared_memory_segment_nccl_cannot_create_is_the_jobs_on_that_node(make_bundle: BundleMaker) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": "\n".join([*SHM_CREATE, SYSTEM_ERROR]) + "\n"})
    assert got[0] == "software" and got[2] == ["node-02"]


def test_a_segment_it_cannot_attach_to_is_no_setup(make_bundle: BundleMaker) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": "\n".join([*SHM_ATTACH, SYSTEM_ERROR]) + "\n"})
    assert got[1] not in ("app.exception", "app.exception.setup")


def test_an_invalid_device_ordinal_is_the_cuda_tables_device_choice_reading(make_bundle: BundleMaker) -> None:
    """Left to catalog/cuda.yaml (class device_choice): the job's set-up chose a GPU the process does not see,
    software, on that node."""
    got = _verdict(make_bundle, {"app/rank-2.log": f"{ORDINAL}\n{SYSTEM_ERROR}\n"})
    assert got == ("software", "app.exception.setup", ["node-02"])


# ------------------------------------------------------------------ the platform's services (IMEX)


@pytest.mark.parametrize(("name", "line"), PLATFORM_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(PLATFORM_LINES)])
def test_a_platform_warn_is_no_setup(name: str, line: str) -> None:
    d = helpers.one(ERROR, line, "application")
    assert d.kind == "nccl.error" and d.host == "node-02"
    helpers.assert_fields(d, {"local_status": name})
    assert "setup" not in d.fields


@pytest.mark.parametrize(("name", "line"), PLATFORM_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(PLATFORM_LINES)])
def test_imex_refusing_nccls_handles_is_the_nodes_platform(make_bundle: BundleMaker, name: str, line: str) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": f"{line}\n{SYSTEM_ERROR}\n"})
    assert got == ("infrastructure", "node.driver.imex", ["node-02"])


def test_an_imex_channel_the_job_was_not_given_is_its_setup_not_the_platform(make_bundle: BundleMaker) -> None:
    line = dict(SETUP_LINES)["imex_channel_missing"]
    got = _verdict(make_bundle, {"app/rank-2.log": f"{line}\n{SYSTEM_ERROR}\n"})
    assert got == ("software", "app.exception.setup", ["node-02"])


def test_a_fault_elsewhere_minutes_before_imex_stays_the_root(make_bundle: BundleMaker) -> None:
    rank2 = f"{TS_INIT}{PLATFORM_LINES[0][1]}\n{TS_INIT}{SYSTEM_ERROR}\n"
    got = _verdict(make_bundle, {"app/rank-2.log": rank2, "nodes/node-03/kern.log": XID_79})
    assert got[:2] == ("hardware", "gpu.fallen_off_bus")


@pytest.mark.parametrize("line", [
    # NCCL's INFO line holding the words: nothing failed (synthetic)
    "node-02:1234:1300 [2] NCCL INFO MNNVL: Check the IMEX configuration (nvidia-imex-ctl -N) if MNNVL is wanted",
    # a person's words, lower case (synthetic)
    "if the job hangs at init, check the IMEX configuration on the compute tray",
], ids=["info", "prose"])
def test_near_misses_are_no_platform_fault(line: str) -> None:
    assert not any(d.fields.get("local_status") for d in helpers.scan(ERROR, [line], "application"))


# ------------------------------------------------------------------ a net plugin that did not start

# aws-ofi-nccl's own errno line before its summary (format: aws/aws-ofi-nccl src/nccl_ofi_rdma.cpp
# nccl_net_ofi_rdma_init's `OFI fi_getinfo() call failed: %s`, fi_strerror(FI_ENODATA)); NCCL then goes on with its
# internal transports (src/plugin/net.cc: `Failed to initialize NET plugin` at INFO).
OFI_GETINFO = ("node-02:1234:1300 [2] nccl_net_ofi_rdma_init:7308 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No "
               "data available")
OFI_SUMMARY = [line for name, line in BENIGN_LINES if name == "ofi_plugin_fallback"]


def test_the_plugins_summary_adds_nothing_to_its_errno_line(make_bundle: BundleMaker) -> None:
    """The errno line is the node's RDMA stack (node-rdma-stack: no EFA device where the job runs); the summaries
    after it are no second event."""
    evs = helpers.events([OFI_GETINFO, *OFI_SUMMARY])
    assert [e.kind for e in evs] == ["nccl.error"] and evs[0].fields.get("errno") == "ENODATA"
    got = _verdict(make_bundle, {"app/rank-2.log": "\n".join([OFI_GETINFO, *OFI_SUMMARY, SYSTEM_ERROR]) + "\n"})
    assert got == ("infrastructure", "node.driver.rdma", ["node-02"])


@pytest.mark.parametrize("head", [
    "nccl_net_ofi_rdma_init:7308",  # a C build of the plugin: its function's name
    # a C++ build (aws-ofi-nccl 1.14 and later): __PRETTY_FUNCTION__, as posted lines show it (`int
    # cm_req_handle_error_entry(nccl_net_ofi_context_t*, fid_cq*, fi_cq_err_entry*, uint16_t):46 NCCL WARN NET/OFI ...`)
    "int nccl_net_ofi_rdma_init(const char*, nccl_net_ofi_plugin_t**, bool*, nccl_ofi_topo_t*):7308",
], ids=["c", "cpp"])
def test_the_plugins_errno_line_is_the_rdma_stack_whatever_names_its_function(make_bundle: BundleMaker,
                                                                               head: str) -> None:
    line = f"node-02:1234:1300 [2] {head} NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available"
    (e,) = helpers.events([line])
    assert (e.fields.get("transport"), e.fields.get("errno")) == ("ofi", "ENODATA")
    got = _verdict(make_bundle, {"app/rank-2.log": f"{line}\n{SYSTEM_ERROR}\n"})
    assert got == ("infrastructure", "node.driver.rdma", ["node-02"])


# format: NVIDIA/nccl src/init.cc (`Using network %s`): the communicator got a network
USING_SOCKET = "node-02:1234:1300 [2] NCCL INFO Using network Socket"
USING_OFI = "node-02:1234:1300 [2] NCCL INFO Using network AWS Libfabric"
# format: PyTorch's c10d watchdog (ProcessGroupNCCL.cpp), the run's end
WATCHDOG = ("[rank2]:[E1102 10:40:00.000000 1234 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=5120, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
            "ran for 600012 milliseconds before timing out.")


@pytest.mark.parametrize("ready", [USING_SOCKET, USING_OFI], ids=["sockets", "plugin-protocol"])
def test_the_plugins_errno_line_that_nccl_found_a_network_after_is_no_cause(make_bundle: BundleMaker,
                                                                          ready: str) -> None:
    """NCCL went on over its sockets (or the plugin over its other protocol) and the run trained until a collective
    timed out: the plugin's failure at start-up did not stop it. The same lines without NCCL's word are the RDMA
    stack's (above)."""
    rank2 = [OFI_GETINFO, *OFI_SUMMARY, ready, "[2026-11-02 10:30:00] step 1200 loss 2.31", WATCHDOG]
    got = _verdict(make_bundle, {"app/rank-2.log": "\n".join(rank2) + "\n"})
    assert got[1] != "node.driver.rdma"
    store = feed_store([Candidate("application", "app.log", 1, None, None, None, ready)])
    assert [net for net, *_ in store.net_ready] == [ready.split("Using network ")[1]]


def test_nccls_network_word_before_the_plugins_failure_does_not_excuse_it(make_bundle: BundleMaker) -> None:
    """Near miss: a network found for an earlier communicator, then the plugin failing as a later one starts."""
    rank2 = [USING_SOCKET, OFI_GETINFO, SYSTEM_ERROR]
    assert _verdict(make_bundle, {"app/rank-2.log": "\n".join(rank2) + "\n"}) == ("infrastructure",
                                                                                   "node.driver.rdma", ["node-02"])


def test_the_plugins_words_are_not_ofi_outside_a_warn() -> None:
    """Near miss (format: aws-ofi-nccl's NCCL_OFI_INFO): an INFO line of the plugin is no event."""
    assert helpers.events(["node-02:1234:1300 [2] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 "
                           "nics)"]) == []


def test_a_plugin_that_did_not_start_in_a_run_that_went_on_is_no_cause(make_bundle: BundleMaker) -> None:
    """NCCL went on with its sockets and the run trained until another node's GPU fell off the bus."""
    train = "[2026-11-02 10:30:00] step 1200 loss 2.31"
    rank2 = "\n".join(f"{TS_EARLY}{ln}" for ln in OFI_SUMMARY) + f"\n{train}\n"
    xid = "Nov  2 10:40:00 node-03 kernel: NVRM: Xid (PCI:0000:41:00): 79, pid=1234, GPU has fallen off the bus.\n"
    got = _verdict(make_bundle, {"app/rank-2.log": rank2, "nodes/node-03/kern.log": xid})
    assert got == ("hardware", "gpu.fallen_off_bus", ["node-03"])
    assert helpers.events(OFI_SUMMARY) == []


# ------------------------------------------------------------------ NCCL's own transports, one after another

# format: src/transport/net_ib/init.cc ncclIbInitDevices, src/transport/net_socket.cc (`NET/Socket : no interface
# found`), src/plugin/net.cc ncclNetInit: IB fails, sockets next, then none
IB_NO_IP = "node-02:1234:1300 [2] transport/net_ib/init.cc:307 NCCL WARN NET/IB : No IP interface found."
SOCKET_NONE = "node-02:1234:1300 [2] transport/net_socket.cc:120 NCCL WARN NET/Socket : no interface found"
NONE_LEFT = "node-02:1234:1300 [2] plugin/net.cc:349 NCCL WARN Failed to initialize any NET plugin"


def test_the_last_transport_that_could_not_start_says_the_setup(make_bundle: BundleMaker) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": "\n".join([IB_NO_IP, SOCKET_NONE, NONE_LEFT, SYSTEM_ERROR]) + "\n"})
    assert got == ("software", "app.exception.setup", ["node-02"])
    assert [e.fields.get("local_status") for e in helpers.events([IB_NO_IP, SOCKET_NONE, NONE_LEFT])
            if e.fields.get("setup")] == ["no_interface", "network_not_available"]


def test_nccls_ib_transport_that_did_not_start_while_its_sockets_did_is_no_cause(make_bundle: BundleMaker) -> None:
    """NCCL went on over its sockets (`NET/IB : No device found.` is its INFO line where NCCL_IB_HCA names no HCA of
    the node: format src/transport/net_ib/init.cc) and the run trained until another node's GPU fell off the bus."""
    rank2 = [f"{TS_EARLY}{IB_NO_IP}", f"{TS_EARLY}node-02:1234:1300 [2] NCCL INFO NET/IB : No device found.",
             f"{TS_EARLY}node-02:1234:1300 [2] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>",
             "[2026-11-02 10:30:00] step 1200 loss 2.31"]
    assert helpers.events(rank2[:3]) == []  # no failure (the socket it uses is an address, no event)
    xid = "Nov  2 10:40:00 node-03 kernel: NVRM: Xid (PCI:0000:41:00): 79, pid=1234, GPU has fallen off the bus.\n"
    got = _verdict(make_bundle, {"app/rank-2.log": "\n".join(rank2) + "\n", "nodes/node-03/kern.log": xid})
    assert got == ("hardware", "gpu.fallen_off_bus", ["node-03"])


# format: NVIDIA/nccl src/misc/ibvwrap.cc (`Call to ibv_open_device failed`) and src/transport/net_ib.cc
# ncclIbInit (`NET/IB : Unable to open device %s`, then `continue` to the next device): the HCA's device file is not
# in the job's container
IB_OPEN = "node-02:1234:1300 [2] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed"
IB_DEVICE = "node-02:1234:1300 [2] transport/net_ib.cc:148 NCCL WARN NET/IB : Unable to open device mlx5_0"


def _ended(make_bundle: BundleMaker, lines: list[str], name: str = "b") -> tuple[str | None, list[str]]:
    """The verdict of a run whose end is not shown (no terminal state), and the categories of its symptoms."""
    wl = copy.deepcopy(WORKLOAD)
    del wl["workload"]["terminal_state"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": "\n".join(lines) + "\n"}, wl, name)))
    return v.attributed_domain, sorted({s.category for s in v.symptoms})


def test_nccls_ib_transport_that_could_not_open_its_device_before_sockets_is_no_failure(
        make_bundle: BundleMaker) -> None:
    """NCCL's IB transport could not open the HCA, NCCL went on over its sockets and the run trained: a run whose end
    is not shown holds no failure (docs/verdict.md), where the WARNs would otherwise be NCCL's error symptoms."""
    lines = [IB_OPEN, IB_DEVICE, "node-02:1234:1300 [2] NCCL INFO NET/IB : No device found.", USING_SOCKET,
             "[2026-11-02 10:30:00] step 1200 loss 2.31"]
    assert _ended(make_bundle, lines) == ("none", [])


def test_the_ib_transport_failing_without_another_network_after_it_stays_a_failure(make_bundle: BundleMaker) -> None:
    """Near misses: no network found after the WARNs, a network found only before them (an earlier communicator),
    and IB itself found after them (NCCL skipped one device and opened another: the failure is not a fallback)."""
    assert _ended(make_bundle, [IB_OPEN, IB_DEVICE], "a") == ("unknown", ["nccl.error"])
    assert _ended(make_bundle, [USING_SOCKET, IB_OPEN, IB_DEVICE], "b") == ("unknown", ["nccl.error"])
    using_ib = "node-02:1234:1300 [2] NCCL INFO Using network IB"
    assert _ended(make_bundle, [IB_DEVICE, using_ib], "c") == ("unknown", ["nccl.error"])


# ------------------------------------------------------------------ the WARN above PyTorch's `unhandled system error`

# NCCL's WARN names the call and the errno; PyTorch's line after it names only NCCL's result. Each line is its own
# event on the rank, and the WARN's decides (extract/nccl.py reads its errno: `_where_in_nccl`); no state joins them.
# format: src/include/checks.h SYSCHECK (`Call to bind failed: %s`) from src/misc/socket.cc ncclSocketListen, a port
# NCCL_COMM_ID forced that another process holds
BIND_IN_USE = "node-02:1234:1300 [2] misc/socket.cc:137 NCCL WARN Call to bind failed: Address already in use"
# format: src/misc/socket.cc socketProgress: the peer's side
CLOSED_BY_PEER = ("node-02:1234:1300 [2] misc/socket.cc:58 NCCL WARN socketProgress: Connection closed by remote peer "
                  "10.0.0.3<52042>")


def test_the_warns_local_errno_decides_the_system_error_after_it(make_bundle: BundleMaker) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": f"{BIND_IN_USE}\n{SYSTEM_ERROR}\n"})
    assert got == ("software", "app.exception.setup", ["node-02"])


def test_a_warn_about_the_peer_above_the_system_error_is_no_setup(make_bundle: BundleMaker) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": f"{CLOSED_BY_PEER}\n{SYSTEM_ERROR}\n"})
    assert got[1] != "app.exception.setup"
    assert not any(e.fields.get("setup") for e in helpers.events([CLOSED_BY_PEER, SYSTEM_ERROR]))


def test_a_fallback_warn_is_understood_not_listed_as_unrecognized(make_bundle: BundleMaker) -> None:
    lines = [line for _, line in BENIGN_LINES]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-2.log": "\n".join([*lines, SYSTEM_ERROR]) + "\n"},
                                                copy.deepcopy(WORKLOAD))))
    listed = " ".join(u.first.text for u in v.unrecognized)
    assert not [line for line in lines if line in listed]
    # ... while a WARN no row knows is still an event (a symptom), never dropped (format: NCCL's WARN header)
    assert [e.kind for e in helpers.events(["node-02:1234:1300 [2] misc/foo.cc:1 NCCL WARN something new"])] == [
        "nccl.error"]


# ------------------------------------------------------------------ announced at INFO, failing later

# NCCL 2.25's INFO of the same shared-memory check (tinygrad/open-gpu-kernel-modules#29, eight RTX 5090 with
# 2.25.1+cuda12.8; its host and ids made ours), and the kernel launch failing after it (NVIDIA/nccl-tests#287:
# `enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'`, its host made node-02)
SHMEM_INFO = "node-02:259034:259126 [2] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856"
LAUNCH = "node-02:259034:259034 [2] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'"


def test_the_info_line_itself_is_no_event_but_the_failure_after_it_is_the_rows() -> None:
    drafts = helpers.scan(ERROR, [SHMEM_INFO, LAUNCH], "application")
    assert [d.kind for d in drafts] == ["nccl.error"]
    helpers.assert_fields(drafts[0], {"setup": True, "local_status": "nccl_too_old"})


def test_the_launch_failure_without_the_info_line_is_no_setup() -> None:
    (d,) = helpers.scan(ERROR, [LAUNCH], "application")
    assert not d.fields.get("setup")


def test_an_info_line_of_another_check_announces_nothing() -> None:
    # an INFO line NCCL prints on every run (format: src/init.cc), then the same launch failure
    info = "node-02:259034:259126 [2] NCCL INFO ncclCommInitRank comm 0x55cc27005c20 rank 2 nranks 8 - Init COMPLETE"
    (d,) = helpers.scan(ERROR, [info, LAUNCH], "application")
    assert not d.fields.get("setup")


def test_announced_then_the_launch_failure_is_software_setup_on_that_node(make_bundle: BundleMaker) -> None:
    got = _verdict(make_bundle, {"app/rank-2.log": f"{SHMEM_INFO}\n{LAUNCH}\n{SYSTEM_ERROR}\n"})
    assert got == ("software", "app.exception.setup", ["node-02"])


def test_announced_never_outranks_a_fault_elsewhere(make_bundle: BundleMaker) -> None:
    rank2 = f"{TS_INIT}{SHMEM_INFO}\n{TS_INIT}{LAUNCH}\n{TS_INIT}{SYSTEM_ERROR}\n"
    got = _verdict(make_bundle, {"app/rank-2.log": rank2, "nodes/node-03/kern.log": XID_79})
    assert got[:2] == ("hardware", "gpu.fallen_off_bus")


# ------------------------------------------------------------------ NCCL's own consistency checks (`internal`)


@pytest.mark.parametrize(("name", "line"), INTERNAL_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INTERNAL_LINES)])
def test_an_internal_check_is_the_symptom_naming_the_check(name: str, line: str) -> None:
    d = helpers.one(ERROR, line, "application")
    assert d.kind == "nccl.error" and d.host == "node-02"
    helpers.assert_fields(d, {"local_status": name, "internal": True})
    assert "setup" not in d.fields


# The forms a WARN reaches a log in: NCCL's whole header, the header less the host (`[7] graph/rings.cc:38 NCCL WARN`,
# as NVIDIA/nccl#1020 posted it), the source file and WARN alone, and the message alone (PyTorch's `Last error:`, or a
# copy that cut NCCL's prefix off).
_RING = INTERNAL_LINES[0][1]
_RAILS = dict(SETUP_LINES)["ofi_rail_mismatch"]


@pytest.mark.parametrize("line", [_RING, _RING.split(" ", 1)[1], _RING.split("] ", 1)[1]],
                         ids=["header", "no-host", "file-only"])
def test_an_internal_check_is_read_with_and_without_nccls_prefix(line: str) -> None:
    (d,) = [x for x in helpers.scan(ERROR, [line], "application") if x.kind == "nccl.error"]
    helpers.assert_fields(d, {"local_status": "nccl_ring_check", "internal": True, "nccl_source": "graph/rings.cc"})


@pytest.mark.parametrize("line", [_RAILS, _RAILS.split(" ", 1)[1], _body(_RAILS)],
                         ids=["header", "no-host", "prefix-cut"])
def test_the_plugins_rail_mismatch_is_read_with_and_without_nccls_prefix(line: str) -> None:
    (d,) = [x for x in helpers.scan(ERROR, [line], "application") if x.kind == "nccl.error"]
    helpers.assert_fields(d, {"setup": True, "local_status": "ofi_rail_mismatch"})


@pytest.mark.parametrize("line", [
    # the message alone, with no NCCL WARN around it: an `internal` row is NCCL's only under its WARN (synthetic:
    # another program's words)
    "Error : ring 0 does not loop back to start (13 != 15).",
    "the token ring does not loop back to start when a member leaves",
    # NCCL's INFO line passing the check's result up (format: src/init.cc's NCCLCHECK trace): no WARN of its own
    "node-02:1234:1300 [2] NCCL INFO graph/rings.cc:38 -> 3",
    # NCCL 2.23 and before (format: src/enqueue.cc v2.21.5): names neither a setting nor NCCL's tuning, decides nothing
    "node-02:1234:1300 [2] enqueue.cc:1528 NCCL WARN Error : no algorithm/protocol available",
    # the plugin's rail count at INFO (synthetic wording around the row's words): nothing refused
    "node-02:1234:1300 [2] NCCL INFO NET/OFI Selected 4 rails for dev 0",
], ids=["ring-bare", "ring-prose", "ring-info", "algo-old", "rails-info"])
def test_near_misses_are_no_internal_check_nor_setup(line: str) -> None:
    for d in helpers.scan(ERROR, [line], "application"):
        assert not d.fields.get("internal") and not d.fields.get("setup"), (line, d.fields)


@pytest.mark.parametrize(("name", "line"), INTERNAL_LINES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INTERNAL_LINES)])
def test_an_internal_check_then_the_frameworks_error_decides_nothing(make_bundle: BundleMaker, name: str,
                                                                     line: str) -> None:
    """The same ring WARN was an NCCL defect in one thread and undecided in another (software or the instances'
    topology): a symptom, never the job's set-up nor a cause of its own."""
    got = _verdict(make_bundle, {"app/rank-2.log": f"{line}\n{SYSTEM_ERROR}\n"})
    assert got[1] is None, got


def test_the_setting_a_warn_names_outranks_nccls_check() -> None:
    """`No algorithm/protocol available ...` is an `internal` row's words and, with `NCCL_ALGO was set to`, a set-up
    row's too: the setting explains the check."""
    d = helpers.one(ERROR, dict(SETUP_LINES)["algorithm_settings_invalid"], "application")
    helpers.assert_fields(d, {"setup": True, "local_status": "algorithm_settings_invalid"})
    assert "internal" not in d.fields

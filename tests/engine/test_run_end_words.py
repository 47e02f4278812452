"""Whether the run failed at all, where its end is not shown: lines that look like errors but that their printers'
own sources show decide nothing by themselves (understood, naming nothing), against the lines after them that do.
Lines are verbatim from the threads cited, or in the printing program's own format where marked `form`."""

from __future__ import annotations

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker, workload_ending

_HELLO = "Hello world from processor e001, rank 0 out of 2 processors\n"


def _verdict(make_bundle: BundleMaker, text: str, name: str = "b") -> tuple[str, list[str]]:
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text}, workload_ending(None), name)))
    return v.attributed_domain, [u.first.text for u in v.unrecognized]


def test_an_optional_spank_plugin_srun_could_not_load_is_no_failure(make_bundle: BundleMaker) -> None:
    # ResearchComputing's Arjuna cluster (tests/wild ok-slurm-mpi-helloworld-...-216): Slurm before 26.05 printed the
    # plugin loader's error for an optional plugstack.conf entry too (src/common/spank.c _spank_plugin_create), and
    # the job ran
    assert _verdict(make_bundle, "srun: error: spank: x11.so: Plugin file not found\n" + _HELLO) == ("none", [])


def test_a_required_spank_plugin_that_aborts_the_client_stays_a_failure(make_bundle: BundleMaker) -> None:
    # near miss (form: spank.c _spank_stack_process_line and srun's `Failed to initialize plugin stack`): the lines
    # after the loader's error say the client gave up, so the run is not `none`: the site's plugin stack that would
    # not start (catalog/slurm.yaml, side node: a required plugstack.conf entry whose file is not on the node), and the
    # loader's own line stays understood, no unrecognized line
    domain, seen = _verdict(make_bundle, "srun: error: spank: x11.so: Plugin file not found\n"
                            "srun: error: spank: /etc/slurm/plugstack.conf:1: Failed to load plugin x11.so. Aborting.\n"
                            "srun: error: Failed to initialize plugin stack\n")
    assert domain == "infrastructure"
    assert all("Plugin file not found" not in t for t in seen)


def test_htcondors_reconnect_failed_title_decides_nothing(make_bundle: BundleMaker) -> None:
    # gwastro/pycbc#2596's event log (its starter killed on purpose, the job rescheduled): `unknown` before for the
    # 024 record's title alone
    log = ("022 (6509789.000.000) 03/27 15:12:43 Job disconnected, attempting to reconnect\n"
           "    Socket between submit and execute hosts closed unexpectedly\n"
           "024 (6509789.000.000) 03/27 15:12:51 Job reconnection failed\n"
           "    Job not found at execution machine\n"
           "    Can not reconnect to slot1@CRUSH-SUGWG-OSG-10-5-137-88, rescheduling job\n")
    assert _verdict(make_bundle, log) == ("none", [])
    # near miss: the same record whose reason is the job's lease run out is the execute node lost (LSST's report)
    lost = ("024 (16452834.000.000) 2025-05-06 22:19:12 Job reconnection failed\n"
            "    Job disconnected too long: JobLeaseDuration (2400 seconds) expired\n"
            "    Can not reconnect to slot_lsstsvc1_31838_1_9@sdfmilan167.sdf.slac.stanford.edu, rescheduling job\n")
    assert _verdict(make_bundle, lost, "lost")[0] not in ("none", "unknown")

"""The .tar.gz form refuses what could escape or explode: `..` members, absolute paths, links, device
files, too many members, and archives that inflate past the limit. Each is refused with a 4xx naming the
member, nothing is written outside the extraction directory, and the Service stays healthy."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import httpx
import pytest

from firstfault.service.errors import Problem
from firstfault.service.tarball import TarLimits, extract
from tests.memory import MB, run_measured
from tests.service.server import ServiceProcess

WORKLOAD = b"apiVersion: firstfault/v1\nworkload: {id: '1', nodes: [n1]}\nsources: []\n"
LIMITS = TarLimits(max_members=50, max_bytes=4 << 20)


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]], raw: bool = False) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return buf.getvalue() if raw else gzip.compress(buf.getvalue())


def _file(name: str, data: bytes = b"x\n") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _special(name: str, kind: bytes, target: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


CASES = {
    "dotdot": [_file("workload.yaml", WORKLOAD), _file("../escaped.txt")],
    "dotdot-nested": [_file("b/workload.yaml", WORKLOAD), _file("b/logs/../../../escaped.txt")],
    "absolute": [_file("workload.yaml", WORKLOAD), _file("/tmp/firstfault-escaped.txt")],
    "symlink": [_file("workload.yaml", WORKLOAD), _special("kern.log", tarfile.SYMTYPE, "/etc/passwd")],
    "hardlink": [_file("workload.yaml", WORKLOAD), _special("kern.log", tarfile.LNKTYPE, "/etc/passwd")],
    "device": [_file("workload.yaml", WORKLOAD), _special("zero", tarfile.CHRTYPE)],
    "fifo": [_file("workload.yaml", WORKLOAD), _special("pipe", tarfile.FIFOTYPE)],
    "too-many-members": [_file("workload.yaml", WORKLOAD)] + [_file(f"f{i}.log") for i in range(60)],
    "bomb-one-member": [_file("workload.yaml", WORKLOAD), _file("huge.log", b"\0" * (8 << 20))],
    "no-workload": [_file("kern.log")],
}
EXPECT = {
    "dotdot": (422, "leaves the archive root"), "dotdot-nested": (422, "leaves the archive root"),
    "absolute": (422, "absolute path"), "symlink": (422, "symbolic link"), "hardlink": (422, "hard link"),
    "device": (422, "not a regular file"), "fifo": (422, "not a regular file"),
    "too-many-members": (422, "more than 50 members"), "bomb-one-member": (413, "inflates to more than"),
    "no-workload": (422, "no workload.yaml"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_extract_refuses(case: str, tmp_path: Path) -> None:
    dest = tmp_path / "x" / "dest"
    dest.mkdir(parents=True)
    with pytest.raises(Problem) as err:
        extract(io.BytesIO(_tar(CASES[case])), dest, LIMITS)
    status, fragment = EXPECT[case]
    assert err.value.status == status
    assert fragment in err.value.message
    assert not (tmp_path / "x" / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/firstfault-escaped.txt").exists()
    for p in dest.rglob("*"):
        assert not p.is_symlink()


def test_bomb_in_a_header_stops_while_inflating(tmp_path: Path) -> None:
    """A GNU long-name header is read whole into memory by tarfile: an 8 MiB name (a few KiB
    compressed) must stop at the inflated-bytes cap, before tarfile buffers it."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        info = tarfile.TarInfo("a" * (8 << 20))
        tar.addfile(info, io.BytesIO(b""))
    bomb = gzip.compress(buf.getvalue(), compresslevel=9)
    assert len(bomb) < 100_000
    with pytest.raises(Problem) as err:
        extract(io.BytesIO(bomb), tmp_path, LIMITS)
    assert err.value.status == 413


def test_padding_after_the_end_is_never_inflated(tmp_path: Path) -> None:
    """Zero blocks end a tar: 1 GiB of padding after them is not read at all."""
    raw = _tar([_file("workload.yaml", WORKLOAD)], raw=True)
    zeros = gzip.compress(b"\0" * (64 << 20), compresslevel=9)
    body = gzip.compress(raw) + zeros * 16
    assert extract(io.BytesIO(body), tmp_path, LIMITS) == tmp_path


def test_extracts_a_bundle_under_one_top_directory(tmp_path: Path) -> None:
    data = _tar([_file("mine/workload.yaml", WORKLOAD), _file("mine/nodes/n1/kern.log", b"hello\n"),
                 _file("./mine/app/x.log")])
    root = extract(io.BytesIO(data), tmp_path, LIMITS)
    assert root == tmp_path / "mine"
    assert (root / "nodes" / "n1" / "kern.log").read_bytes() == b"hello\n"


def test_not_a_tarball(tmp_path: Path) -> None:
    with pytest.raises(Problem) as err:
        extract(io.BytesIO(gzip.compress(b"just text, not tar" * 100)), tmp_path, LIMITS)
    assert err.value.status == 422


@pytest.mark.integration
@pytest.mark.parametrize("case", sorted(CASES))
def test_service_refuses_cleanly(case: str, tight: ServiceProcess) -> None:
    r = httpx.post(tight.url + "/v1/analyze", content=_tar(CASES[case]), headers={"Content-Type": "application/gzip"})
    status, fragment = EXPECT[case]
    assert r.status_code == status, r.text
    assert fragment in r.json()["message"]
    assert httpx.get(tight.url + "/healthz").status_code == 200


@pytest.mark.integration
def test_service_names_workload_errors_by_archive_path(tight: ServiceProcess) -> None:
    bad = b"apiVersion: firstfault/v1\nworkload: {id: '1', nodez: [n1]}\n"
    r = httpx.post(tight.url + "/v1/analyze", content=_tar([_file("b/workload.yaml", bad)]),
                   headers={"Content-Type": "application/x-tar+gzip"})
    assert r.status_code == 422
    msg = r.json()["message"]
    assert "workload.yaml:2" in msg and "nodez" in msg
    assert "firstfault-bundle-" not in msg  # the temporary directory is not shown


def test_a_gib_long_name_is_refused_before_it_is_read() -> None:
    """A GNU long-name header of 1 GiB of zeros (a 1 MB body), at the default 4 GiB inflate limit:
    refused when the header is seen, in little memory, naming the header."""
    out, peak = run_measured("""
        import io, tarfile, zlib
        from firstfault.service.errors import Problem
        from firstfault.service.tarball import TarLimits, extract
        import tempfile, pathlib
        head = tarfile.TarInfo("././@LongLink")
        head.type = tarfile.GNUTYPE_LONGNAME
        head.size = 1 << 30
        comp = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [comp.compress(head.tobuf(format=tarfile.USTAR_FORMAT))]
        block = bytes(1 << 20)
        parts += [comp.compress(block) for _ in range(1024)]
        parts.append(comp.flush())
        body = b"".join(parts)
        del parts
        try:
            with tempfile.TemporaryDirectory() as d:
                extract(io.BytesIO(body), pathlib.Path(d), TarLimits(200_000, 4 << 30))
        except Problem as exc:
            print("STATUS", exc.status, exc.message)
    """)
    assert "STATUS 413" in out or "STATUS 422" in out, out
    assert "long name" in out, out
    assert peak < 300 * MB, peak


def test_a_second_workload_yaml_is_refused(tmp_path: Path) -> None:
    data = _tar([_file("workload.yaml", WORKLOAD), _file("nodes/n1/kern.log"),
                 _file("./workload.yaml", b"apiVersion: firstfault/v1\nworkload: {id: '2'}\n")])
    with pytest.raises(Problem) as err:
        extract(io.BytesIO(data), tmp_path, LIMITS)
    assert err.value.status == 422
    assert "'./workload.yaml'" in err.value.message and "member 3" in err.value.message
    assert "member 1" in err.value.message


def test_a_member_name_too_long_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("d/" + "a" * 5000)
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(Problem) as err:
        extract(io.BytesIO(gzip.compress(buf.getvalue())), tmp_path, LIMITS)
    assert err.value.status == 422 and "a name over 4096 bytes" in err.value.message


# Issue 26, item 9: a sparse member (`tar --sparse`) took 0.5-1.6 GB and gave a 500. A few hundred bytes of archive
# stand for gigabytes of zeros once written out, and tarfile reads a GNU sparse map's extension blocks for as long as
# each says another follows. Refused when its header is read, naming it: the archives below are GNU tar's own
# output (every sparse format it writes) for a 600 MiB log with six bytes in it.
SPARSE_FORMATS = {"gnu": ["--format=gnu"], "pax-0.0": ["--format=posix", "--sparse-version=0.0"],
                  "pax-0.1": ["--format=posix", "--sparse-version=0.1"],
                  "pax-1.0": ["--format=posix", "--sparse-version=1.0"]}


def _gnu_tar_sparse(tmp_path: Path, fmt: str) -> bytes:
    import shutil
    import subprocess

    tar = shutil.which("tar")
    if tar is None or "GNU tar" not in subprocess.run([tar, "--version"], capture_output=True, text=True).stdout:
        pytest.skip("GNU tar is not installed")
    b = tmp_path / "src" / "b"
    b.mkdir(parents=True, exist_ok=True)
    (b / "workload.yaml").write_bytes(WORKLOAD)
    with (b / "kern.log").open("wb") as f:
        f.truncate(600 << 20)
        f.seek(1000)
        f.write(b"hello\n")
    out = tmp_path / f"{fmt}.tgz"
    subprocess.run([tar, "--sparse", *SPARSE_FORMATS[fmt], "-czf", str(out), "-C", str(b.parent), "b"], check=True)
    data = out.read_bytes()
    assert len(data) < 1000  # the bomb: a few hundred bytes for 600 MiB
    return data


@pytest.mark.parametrize("fmt", sorted(SPARSE_FORMATS))
def test_a_sparse_member_is_refused_unexpanded(tmp_path: Path, fmt: str) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(Problem) as err:
        extract(io.BytesIO(_gnu_tar_sparse(tmp_path, fmt)), dest, TarLimits(200_000, 4 << 30))
    assert err.value.status == 422
    assert err.value.message.startswith("archive member 'b/kern.log': a sparse file (a GNU sparse header)")
    assert sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) < 4096


def test_the_same_bundle_packed_without_sparse_is_read(tmp_path: Path) -> None:
    # near miss: a regular member of the same name and a little content
    data = _tar([_file("b/workload.yaml", WORKLOAD), _file("b/kern.log", b"\0" * 1000 + b"hello\n")])
    root = extract(io.BytesIO(data), tmp_path, LIMITS)
    assert (root / "kern.log").read_bytes().endswith(b"hello\n")


def test_a_sparse_map_that_never_ends_is_refused_in_little_memory() -> None:
    """A GNU sparse header whose extension blocks each say another follows, 64 MiB of them: tarfile used to read
    them all into a list (then fail with an IndexError at the end of the stream: a 500)."""
    out, peak = run_measured("""
        import io, tarfile, zlib, tempfile, pathlib
        from firstfault.service.errors import Problem
        from firstfault.service.tarball import TarLimits, extract

        head = bytearray(tarfile.TarInfo("b/kern.log").tobuf(format=tarfile.GNU_FORMAT))
        head[156:157] = tarfile.GNUTYPE_SPARSE
        head[482] = 1  # isextended: an extension block follows
        head[483:495] = b"%011o\\0" % (1 << 30)  # realsize
        head[148:156] = b" " * 8
        head[148:156] = b"%06o\\0 " % sum(head)
        block = bytearray(512)
        block[504] = 1  # and another, and another
        comp = zlib.compressobj(9, zlib.DEFLATED, 31)
        parts = [comp.compress(bytes(head))] + [comp.compress(bytes(block) * 2048) for _ in range(64)]
        parts.append(comp.flush())
        body = b"".join(parts)
        try:
            with tempfile.TemporaryDirectory() as d:
                extract(io.BytesIO(body), pathlib.Path(d), TarLimits(200_000, 4 << 30))
            print("EXTRACTED")
        except Problem as exc:
            print("STATUS", exc.status, exc.message)
        except Exception as exc:
            print("CRASH", type(exc).__name__, exc)
    """)
    assert "STATUS 422 archive member 'b/kern.log': a sparse file" in out, out
    assert peak < 150 * MB, peak


@pytest.mark.integration
def test_service_refuses_a_sparse_member(tight: ServiceProcess, tmp_path: Path) -> None:
    r = httpx.post(tight.url + "/v1/analyze", content=_gnu_tar_sparse(tmp_path, "gnu"),
                   headers={"Content-Type": "application/gzip"})
    assert r.status_code == 422, r.text
    assert "a sparse file" in r.json()["message"]
    assert httpx.get(tight.url + "/healthz").status_code == 200

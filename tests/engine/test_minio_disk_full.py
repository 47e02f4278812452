"""MinIO's own word for a full drive under it, read as the ENOSPC it stands for (catalog/exceptions.yaml `errnos`
ENOSPC `spellings`).

MinIO's storage layer turns the drive file system's ENOSPC into errDiskFull (minio/minio cmd/xl-storage-errors.go
isSysErrNoSpace; cmd/xl-storage.go), whose words are `disk path full` until RELEASE.2022-08 and `drive path full`
since (cmd/storage-errors.go; minio/minio#15464, commit b57e7321e, renamed disk to drive). Its server log prints an
error's cause as a logrus field in its older releases (`cause=disk path full source=[fs-v1.go:577:...]`) and after
`Error: ` in its newer console format (`Error: drive path full (cmd.StorageErr)`). The lines are written here in
those formats. Near misses: the same words in a record that calls itself a warning or says it retries (no failure
the process ended with), and MinIO's other storage errors that are no errno (`drive not found`: a drive offline,
which MinIO's quorum rides out; left to the object-store codes its clients receive, XMinioReadQuorum and the rest).
"""

from __future__ import annotations

import pytest

from firstfault.extract import traceback as tb

POSITIVE = [
    "ERRO[0025] Failed to create object                       bucket=models cause=disk path full "
    "object=ckpt/model-00003.safetensors source=[fs-v1.go:577:fsObjects.PutObject()]",
    "API: PutObject(bucket=models, object=ckpt/model-00003.safetensors) Error: drive path full (cmd.StorageErr)",
]

NEAR_MISS = [
    "WARN[0025] Failed to create object bucket=models cause=disk path full, retrying",
    "API: SYSTEM() Error: drive not found (cmd.StorageErr)",
]


@pytest.mark.parametrize("line", POSITIVE)
def test_minios_full_drive_is_enospc(line: str) -> None:
    d = tb.words_cause(line)
    assert d is not None and d.kind == "storage.error" and d.fields.get("errno") == "ENOSPC"


@pytest.mark.parametrize("line", NEAR_MISS)
def test_the_same_words_where_they_name_no_full_drive(line: str) -> None:
    d = tb.words_cause(line)
    assert d is None or d.fields.get("errno") != "ENOSPC"

"""The node's GPU driver that could not be installed or loaded (catalog/platform.yaml `nvml_errors`, class driver:
node.driver): a cloud's own driver installer that failed (the Pipelines API / Cloud Life Sciences worker's driver step,
Azure's NVIDIA GPU driver VM extension), nvidia-installer's own errors (a module already loaded, no kernel source tree,
a module Secure Boot refused; the loaders' own words for the driver's module, read by extract/kmod.py, also here);
and a CUDA check macro's exception (`<cudaGetErrorString> at FILE:LINE`, extract/codes.py `_at_source`).
The near misses: a successful install's log, the words in a how-to, another module's DKMS build or symbols.

Lines marked with a source are verbatim from it, or follow its format where marked so (versions, paths and names are
this test's).
"""

from __future__ import annotations

import pytest

from firstfault.model import Event
from tests.extract import helpers


def feed(lines: list[str], source: str = "application") -> list[Event]:
    return helpers.events(lines, source, file="nodes/node-02/job.log", node="node-02")


def driver_events(lines: list[str], source: str = "application") -> list[str]:
    return [str(e.fields.get("nvml_error")) for e in feed(lines, source)
            if e.kind == "gpu.nvml_error" and e.fields.get("error") == "driver"]


@pytest.mark.parametrize(("line", "name"), [
    # the Life Sciences worker's failure message as dsub prints it (its words; DataBiosphere/dsub's reports quote it)
    ("Failure message: installing drivers: installing GPU drivers: exit status 1", "CLOUD_GPU_DRIVER_INSTALL_FAILED"),
    # ARM's VMExtensionProvisioningError for the NVIDIA GPU driver extension (its format, as the Azure CLI prints it;
    # the error message here is this test's)
    ("(VMExtensionProvisioningError) VM has reported a failure when processing extension 'NvidiaGpuDriverLinux' "
     "(publisher 'Microsoft.HpcCompute' and type 'NvidiaGpuDriverLinux'). Error message: 'Enable failed'.",
     "CLOUD_GPU_DRIVER_INSTALL_FAILED"),
    # nvidia-installer's own ERROR lines (NVIDIA/nvidia-installer kernel.c; the module named is this test's)
    ("ERROR: An NVIDIA kernel module 'nvidia-uvm' appears to already be loaded in your kernel.  This may be because "
     "it is in use (for example, by an X server, a CUDA program, or the NVIDIA Persistence Daemon), but this may also "
     "happen if your kernel was configured without support for module unloading.", "NVIDIA_KERNEL_MODULE_IN_USE"),
    ("ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make sure you have "
     "installed the kernel source files for your kernel and that they are properly configured",
     "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    ("ERROR: The kernel module failed to load. Secure boot is enabled on this system, so this is likely because it was "
     "not signed by a key that is trusted by the kernel. Please try installing the driver again, and sign the kernel "
     "module when prompted to do so.", "NVIDIA_KERNEL_MODULE_NOT_LOADED"),
    # nvidia-docker 1.x's plugin unable to load nvidia_uvm (src/nvidia/nvidia.go LoadUVM), its journal line as a public
    # xmrMiner how-to pastes it
    ("Jun 24 18:23:36 robo-unseptium nvidia-docker-plugin[27553]: /usr/bin/nvidia-docker-plugin | 2017/06/24 18:23:36 "
     "Error: Could not load UVM kernel module. Is nvidia-modprobe installed?", "NVIDIA_KERNEL_MODULE_NOT_LOADED"),
    # nvidia-installer's step of its module build that failed (its ui_error; the 378.13 runfile as a public install
    # note quotes it, and the check of the build's output as a public Ubuntu 20.04 note quotes the 5.15 kernel's)
    ('ERROR: An error occurred while performing the step: "Building kernel modules". See '
     "/var/log/nvidia-installer.log for details.", "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    ('ERROR: An error occurred while performing the step: "Checking to see whether the nvidia kernel module was '
     'successfully built". See /var/log/nvidia-installer.log for details.', "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    # the kernel's modpost refusing the driver's module (scripts/mod/modpost.c; the linux-mm report on 4.14.0rc2 and
    # the driver 340.102, FATAL in that kernel's words)
    ("FATAL: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'sme_me_mask'",
     "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
])
def test_a_driver_that_could_not_be_installed_or_loaded(line: str, name: str) -> None:
    assert driver_events([line]) == [name]


@pytest.mark.parametrize(("line", "source", "reason"), [
    # the kernel's module loader (kernel/module/main.c: `%s: Unknown symbol %s (err %d)`; the symbol is this test's)
    ("[   12.345678] nvidia: Unknown symbol drm_gem_prime_handle_to_fd (err -2)", "kernel", "Unknown symbol"),
    # modprobe under Secure Boot (kmod's format)
    ("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", "application",
     "Key was rejected by service"),
    # nvidia-installer's DKMS build of the module (its `Failed to run` of the command it ran)
    ("ERROR: Failed to run `/usr/sbin/dkms build -m nvidia -v 535.104.05 -k 6.5.0-14-generic`: Error! Bad return "
     "status for module build on kernel: 6.5.0-14-generic (x86_64)", "application", "DKMS build failed"),
])
def test_the_kernel_refusing_the_drivers_own_module(line: str, source: str, reason: str) -> None:
    # the loaders' words name the module; catalog/platform.yaml `kernel_modules` says it is the driver's (kmod.py)
    got = [(e.fields.get("module"), e.fields.get("part"), e.fields.get("reason")) for e in feed([line], source)
           if e.kind == "node.kernel_module"]
    assert got == [("nvidia", "driver", reason)]


@pytest.mark.parametrize("line", [
    # a successful install's lines (nvidia-installer's and DKMS's progress, the extension's success)
    "Building module: cleaning build area... make -j16 KERNELRELEASE=6.5.0-14-generic... Signing module: done",
    "Installation of the kernel module for the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version "
    "535.104.05) is now complete.",
    "VM has reported success when processing extension 'NvidiaGpuDriverLinux'.",
    # another program's DKMS module and another module's symbols
    "Error! Bad return status for module build on kernel: 6.5.0-14-generic (x86_64)",
    "nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -2)",
    # a how-to's words about installing drivers
    "Installing GPU drivers...",
    # the same plugin's progress line before it loads the module
    "Jun 24 18:23:36 robo-unseptium nvidia-docker-plugin[27553]: /usr/bin/nvidia-docker-plugin | 2017/06/24 18:23:36 "
    "Loading NVIDIA unified memory",
    # the installer's step retold in a person's prose, without its quoted step name (a forum post's words)
    "Next Error said an Error occurred while performing the step building kernel modules",
    # another module's modpost warning the build goes on from (scripts/mod/modpost.c's section mismatch warning)
    "WARNING: modpost: vmlinux.o(.text+0x1234): Section mismatch in reference from the function nv_init() to the "
    "function .init.text:nv_setup()",
])
def test_near_misses(line: str) -> None:
    assert driver_events([line]) == []


@pytest.mark.parametrize("line", [
    # a C++ exception of a CUDA check macro: the message, then the check's source location (Horovod's format, the
    # path here is this test's)
    "  what():  CUDA driver version is insufficient for CUDA runtime version at "
    "horovod/common/ops/cuda_operations.cc:48",
    "terminate called after throwing an instance of 'std::logic_error' what():  CUDA driver version is insufficient "
    "for CUDA runtime version at src/gpu/check.cu:91",
])
def test_a_check_macros_message_at_its_source_line_is_cudas(line: str) -> None:
    got = [e.fields.get("cuda_error") for e in feed([line]) if e.kind == "app.cuda_error"]
    assert got == ["cudaErrorInsufficientDriver"]


@pytest.mark.parametrize("line", [
    # an errno's words at a source line are any C++ program's (EINVAL's strerror), and a Python file is no check macro
    "invalid argument at src/io/reader.cc:12",
    "CUDA driver version is insufficient for CUDA runtime version at train.py:32",
    # the message at a place that is no source file's line (a how-to's words)
    "Seeing CUDA driver version is insufficient for CUDA runtime version at startup? Update the host driver.",
])
def test_check_macro_near_misses(line: str) -> None:
    assert [e for e in feed([line]) if e.kind == "app.cuda_error"] == []

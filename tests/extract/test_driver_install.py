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

from firstfault.catalog.tables import nvml_anchors, nvml_table
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


# ---------------------------------------------------------------- every spelling of the install's rows, in its forms

# The rows of the node's driver install (catalog/platform.yaml `nvml_errors`, no nvmlReturn_t: code 1000 on, class
# driver) whose texts are their own report (an `nvml_anchors` entry each; the container CLI's `driver error: timed out`
# counts only after the CLI's own anchor), each text with the words its row needs beside it (`also`)
_INSTALL_TEXTS = [(row.name, text, row.also) for code, row in sorted(nvml_table().items())
                  if code >= 1000 and row.nvml_class == "driver" for text in (row.message, *row.aliases)
                  if text in nvml_anchors()]


@pytest.mark.parametrize(("name", "text", "also"), _INSTALL_TEXTS, ids=[t for _, t, _ in _INSTALL_TEXTS])
@pytest.mark.parametrize("form", [
    # the program's line as it prints it, nvidia-installer's tag, a glog record (GKE's installers), a shell script's
    # echo in a pod's log with the runtime's stamp, and a Cloud Logging console row copied with its local stamp and
    # zone glued to the payload (container-engine-accelerators#382's `2024-05-31 21:59:39.905 GETThe requested ...`)
    "{text} (details)",
    "ERROR: {text} (details)",
    "E0625 05:36:32.767916    5389 install.go:452] {text} (details)",
    "2026-03-06T20:37:58.123456789Z stderr F {text} (details)",
    "2024-05-31 21:59:39.905 GET{text} (details)",
], ids=["bare", "installer", "glog", "cri", "console"])
def test_every_spelling_of_the_install_rows_in_each_line_form(name: str, text: str, also: tuple[str, ...],
                                                              form: str) -> None:
    line = form.format(text=text) + "".join(f" [{w}]" for w in also)
    assert driver_events([line]) == [name]


@pytest.mark.parametrize(("line", "name"), [
    # container-engine-accelerators#382 (the thread's log, GKE's Ubuntu installer behind the console's glued stamp)
    ("2024-05-31 21:59:39.905 GETThe requested driver does not exist. Please check that the NVIDIA_DRIVER_VERSION "
     "variable passed into the daemonset is correct", "CLOUD_GPU_DRIVER_INSTALL_FAILED"),
    # nvidia-installer 590.48.01's words, their format filled in (kernel.c, misc.c, install-from-cwd.c; the module,
    # tool and path are this test's), each as the first row of its 80-column wrap where it wraps
    ("ERROR: The kernel module failed to load because it was not signed by a key that",
     "NVIDIA_KERNEL_MODULE_NOT_LOADED"),
    ("ERROR: Unable to load the 'nvidia-drm' kernel module.", "NVIDIA_KERNEL_MODULE_NOT_LOADED"),
    ("ERROR: The nvidia-uvm kernel module failed to load. This kernel module is",
     "NVIDIA_KERNEL_MODULE_NOT_LOADED"),
    ("ERROR: The nvidia-uvm kernel module was not created.", "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    ('ERROR: An error occurred while performing the step: "Checking to see whether the nvidia-drm kernel module was '
     'successfully built". See /var/log/nvidia-installer.log for details.', "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    ("ERROR: The kernel header file '/lib/modules/6.8.0-1015-aws/build/include/linux/kernel.h' does",
     "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    ("ERROR: Unable to find the development tool `cc` in your path; please make sure",
     "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    ("ERROR: You do not appear to have libc header files installed on your system.",
     "NVIDIA_KERNEL_MODULE_NOT_BUILT"),
    ("ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for",
     "NVIDIA_INSTALLER_FAILED"),
    ("WARNING: The Nouveau kernel driver is currently in use by your system.  This", "NOUVEAU_DRIVER_IN_USE"),
    ("ERROR: Unable to unload the 'nvidia-uvm' kernel module.", "NVIDIA_KERNEL_MODULE_IN_USE"),
    # NVIDIA/gpu-driver-container 06a208ca rhel9/nvidia-driver (_unload_driver, _resolve_rhel_version,
    # _update_package_cache's echo with its continuation)
    ("Could not stop NVIDIA persistence daemon", "NVIDIA_KERNEL_MODULE_IN_USE"),
    ("Unable to resolve RHEL version from kernel version", "DRIVER_CONTAINER_NO_KERNEL"),
    ("FATAL: failed to reach RHEL package repositories.  Ensure that the cluster can access the proper networks.",
     "DRIVER_CONTAINER_NO_KERNEL_HEADERS"),
])
def test_the_install_in_its_printers_other_words(line: str, name: str) -> None:
    assert driver_events([line]) == [name]


def nvml_classes(lines: list[str], source: str = "syslog") -> list[object]:
    return [e.fields.get("error") for e in feed(lines, source) if e.kind == "gpu.nvml_error"]


def test_bottlerocket_running_nvidia_smi_that_failed_is_nvml_failing_unnamed() -> None:
    # bottlerocket-os/bottlerocket#4889 (the reporter's EC2 console): the MIG manager's run of nvidia-smi at boot,
    # its stderr empty; a reason nvidia-smi gives on the line decides the class
    assert nvml_classes(["nvidia-migmanager[2755]: '/usr/bin/nvidia-smi' failed - stderr:"]) == ["unknown"]
    assert nvml_classes(["nvidia-migmanager[2755]: '/usr/bin/nvidia-smi' failed - stderr: NVIDIA-SMI has failed "
                         "because it couldn't communicate with the NVIDIA driver."]) == ["driver"]


@pytest.mark.parametrize("line", [
    # bottlerocket-os/bottlerocket#4889: ghostdog's ExecCondition= answer for each driver it did not pick (every boot)
    "ghostdog[2337]: Error: open-gpu is not preferred driver: tesla",
    # another command of the same programs (bottlerocket-core-kit sources/api/host-containers' format)
    "host-containers[1203]: '/usr/bin/host-ctr' failed - stderr: connection refused",
    # substratusai/runbooks#37: GKE's installer's W record before its fallback, and the fallback taken (install.go's
    # format); its retry with legacy linking (Info)
    "W0625 05:36:32.745071    5389 install.go:488] Driver version 470.182.03 doesn't support L4 GPU devices.",
    "W0625 05:36:32.745071    5389 install.go:494] Using driver version 525.105.17 for L4 GPU compatibility.",
    "I0625 05:36:40.000000    5389 install.go:330] Failed to load kernel module, err: failed to load GPU drivers. "
    "Retrying driver installation with legacy linking",
    # the device plugin waiting for the installer (container-engine-accelerators' nvidia_gpu)
    "Waiting for GPU driver libraries to be available.",
    # the Ubuntu installer's first sentence alone is any web service's answer (a ride app's API)
    "DriverNotFoundException: The Requested Driver does not exist :(",
    # the installer's other words in prose: a how-to, not a report
    "If the installation has failed, read /var/log/nvidia-installer.log first.",
    "Make sure the nouveau kernel driver is blacklisted before you run the installer.",
    # another module's build check (GPUDirect's nvidia-peermem, whose own load failures `kernel_modules` reads)
    "ERROR: The nvidia-peermem kernel module was not created.",
])
def test_install_near_misses(line: str) -> None:
    assert driver_events([line], "syslog") == []
    assert driver_events([line]) == []
    assert nvml_classes([line]) == []

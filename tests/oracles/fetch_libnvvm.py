#!/usr/bin/env python3
"""The real libNVVM of the toolkit's exact version, for tests to compare with.

Prints the path of a libnvvm.so.4: the toolkit's own
(CUDA_ROOT/nvvm/lib64/libnvvm.so.4) when it has one; otherwise the one of
the `nvidia-nvvm` wheel of the toolkit's version (nvcc --version), fetched
once from PyPI by pip (which checks the index's hash) into DEST, and kept
there. Only a test oracle: nothing jitcache builds or runs uses it.

usage: fetch_libnvvm.py CUDA_ROOT DEST
"""
import fcntl
import os
import re
import subprocess
import sys
import tempfile
import zipfile


def toolkit_version(cuda_root):
    out = subprocess.run([os.path.join(cuda_root, "bin", "nvcc"), "--version"],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"\bV(\d+\.\d+\.\d+)\b", out)
    if not match:
        sys.exit("fetch_libnvvm: no version in nvcc --version")
    return match.group(1)


def download_wheel(version, into):
    """pip's download (as configured on this machine: index, proxy,
    certificates), which checks the hash the index gives."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                    "--no-deps", "--only-binary=:all:", "--dest", into,
                    f"nvidia-nvvm=={version}"], check=True)
    wheels = [f for f in os.listdir(into) if f.endswith(".whl")]
    if len(wheels) != 1:
        sys.exit(f"fetch_libnvvm: pip gave {wheels}")
    return os.path.join(into, wheels[0])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    cuda_root, dest = sys.argv[1], sys.argv[2]
    own = os.path.join(cuda_root, "nvvm", "lib64", "libnvvm.so.4")
    if os.path.exists(own):
        print(own)
        return
    version = toolkit_version(cuda_root)
    home = os.path.join(dest, f"nvidia-nvvm-{version}")
    lib = os.path.join(home, "libnvvm.so.4")
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one download for parallel tests
        if not os.path.exists(lib):
            with tempfile.TemporaryDirectory(dir=dest) as tmp:
                wheel = download_wheel(version, tmp)
                with zipfile.ZipFile(wheel) as z:
                    name = next(n for n in z.namelist()
                                if n.endswith("/lib/libnvvm.so.4"))
                    staged = os.path.join(tmp, "home")
                    os.makedirs(staged)
                    with z.open(name) as src, \
                            open(os.path.join(staged, "libnvvm.so.4"), "wb") as out:
                        out.write(src.read())
                os.chmod(os.path.join(staged, "libnvvm.so.4"), 0o755)
                os.rename(staged, home)
    print(lib)


if __name__ == "__main__":
    main()

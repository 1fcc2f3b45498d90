"""graphrt Python bindings: pure Python (ctypes over libgraphrt), no compiled extension.

Install offline with Debian's pip/setuptools:  pip install --no-index ./python
(no pyproject.toml on purpose: pip would then build in an isolated environment
and try to download setuptools). libgraphrt.so is found at import time through
GRAPHRT_LIBRARY_PATH, else the library this package was installed with, else the
build tree, else the system library path.

"The library this package was installed with": the libgraphrt that `cmake --install`
put in place (read from <repo>/build/install_manifest.txt; GRAPHRT_BUILD_DIR names
another build folder), else the build tree's
<repo>/build/libgraphrt.so; its absolute path is written into the installed package
(graphrt/_install_location.py). `cmake --install` itself installs this package too.
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# The build folder whose install (or library) to record: GRAPHRT_BUILD_DIR, else <repo>/build.
BUILD = os.environ.get("GRAPHRT_BUILD_DIR") or os.path.join(os.path.dirname(HERE), "build")


def installed_library_dir():
    """The folder of the libgraphrt this package should load, or None."""
    manifest = os.path.join(BUILD, "install_manifest.txt")
    if os.path.isfile(manifest):
        with open(manifest) as f:
            for line in f:
                path = line.strip()
                if os.path.basename(path).startswith("libgraphrt.so") and os.path.isfile(path):
                    return os.path.dirname(path)
    if os.path.isfile(os.path.join(BUILD, "libgraphrt.so")):
        return BUILD
    return None


class BuildPyWithLibraryLocation(build_py):
    def run(self):
        super().run()
        libdir = installed_library_dir()
        target = os.path.join(self.build_lib, "graphrt", "_install_location.py")
        if libdir is None:
            if os.path.exists(target):
                os.remove(target)  # left by an earlier build of this folder
        else:
            with open(target, "w") as f:
                f.write("# Written by setup.py: the folder of the libgraphrt this package was installed with.\n")
                f.write("LIBRARY_DIR = %r\n" % libdir)


setup(
    name="graphrt",
    version="0.1.0",
    description="ctypes bindings for graphrt, a runtime for Apache TVM-exported models",
    packages=["graphrt", "graphrt.runtime", "graphrt.contrib", "graphrt.contrib.debugger", "graphrt.relax"],
    python_requires=">=3.8",
    install_requires=[],
    extras_require={"numpy": ["numpy>=1.22"]},
    cmdclass={"build_py": BuildPyWithLibraryLocation},
)

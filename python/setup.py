"""graphrt Python bindings: pure Python (ctypes over libgraphrt), no compiled extension.

Install offline with Debian's pip/setuptools:  pip install ./python
(no pyproject.toml on purpose: pip would then build in an isolated environment
and try to download setuptools). libgraphrt.so is found at import time through
GRAPHRT_LIBRARY_PATH, the build tree, or the system library path.
"""
from setuptools import setup

setup(
    name="graphrt",
    version="0.1.0",
    description="ctypes bindings for graphrt, a runtime for Apache TVM-exported models",
    packages=["graphrt", "graphrt.runtime", "graphrt.contrib", "graphrt.contrib.debugger"],
    python_requires=">=3.8",
    install_requires=[],
    extras_require={"numpy": ["numpy>=1.22"]},
)

"""TVM's compiler packages (relay, te, tir, ...) are not part of graphrt: graphrt runs what TVM
exports, TVM compiles. Importing one, as `from tvm import relay` under install_as_tvm() or
`import graphrt.relay`, raises an ImportError saying so instead of "No module named"."""
import importlib.abc
import sys

# Subpackages of TVM v0.18's python/tvm that build or tune models (the runtime's are graphrt's).
COMPILER_PACKAGES = ("relay", "te", "tir", "topi", "autotvm", "auto_scheduler", "meta_schedule", "driver", "target",
                     "transform", "ir", "script", "dlight", "micro", "arith", "parser", "rpc", "testing", "tvmc")


def message(name):
    return ("%s is part of TVM's compiler, which graphrt does not include: graphrt runs the models TVM exports "
            "(export_library's deploy.so / .tar), and TVM compiles them. Build and export the model with TVM, "
            "then load the export with tvm.runtime.load_module (graphrt.load_module)" % name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, package):
        self.package = package  # "graphrt"

    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if not rest:
            return None
        # "tvm.relay" only while `tvm` is graphrt (install_as_tvm); "graphrt.relay" always.
        if head == "tvm" and sys.modules.get("tvm") is not sys.modules.get(self.package):
            return None
        if head not in ("tvm", self.package) or rest.split(".")[0] not in COMPILER_PACKAGES:
            return None
        # ImportError, not ModuleNotFoundError: `from tvm import relay` ignores the latter (a
        # fromlist name that is no module falls back to an attribute lookup) and would then say
        # only "cannot import name 'relay'".
        raise ImportError(message("tvm." + rest), name=fullname)


def install(package):
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(package))

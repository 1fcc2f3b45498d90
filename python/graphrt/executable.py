"""TVM's executable wrappers around a loaded module: tvm.runtime.Executable (what TVM v0.20's
tvm.compile returns) and relax.Executable / relax.VMExecutable (what relax.build returns). Deploy
code wraps a loaded library in them and hands them to relax.VirtualMachine; graphrt runs what
export_library wrote, so there is nothing left to compile or link."""
from ._lib import GraphrtError

__all__ = ["Executable", "VMExecutable"]


class Executable:
    """A loaded module as TVM's Executable: ex["name"], ex(*args), ex.jit() and ex.mod."""

    def __init__(self, mod):
        self.mod = mod
        self.entry_name = getattr(mod, "entry_name", "__tvm_main__")

    def __getitem__(self, name):
        return self.mod.get_function(name, query_imports=True)

    def __call__(self, *args):
        return self.mod.get_function(self.entry_name, query_imports=True)(*args)

    def jit(self, **kwargs):
        """The module itself: an exported library is already compiled and linked."""
        return self.mod

    def export_library(self, *args, **kwargs):
        raise GraphrtError("export_library compiles and links, which TVM does; graphrt runs what it wrote")


class VMExecutable(Executable):
    """A Relax executable (relax.Executable before TVM v0.20, relax.VMExecutable since):
    its statistics and its code as text, as TVM prints them."""

    def stats(self):
        return self.mod["stats"]()

    def as_text(self):
        return self.mod["as_text"]()

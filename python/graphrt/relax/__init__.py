"""tvm.relax's deploy-time names under `import graphrt as tvm`: relax.VirtualMachine and the
executable wrappers (relax.Executable, relax.VMExecutable)."""
from ..relax_vm import VirtualMachine, VMInstrumentReturnKind
from ..executable import VMExecutable

Executable = VMExecutable  # its name before TVM v0.20

__all__ = ["VirtualMachine", "VMInstrumentReturnKind", "VMExecutable", "Executable"]

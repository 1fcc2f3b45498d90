"""tvm.relax.vm, where early Relax releases kept the VM's Python names (later moved to
tvm.runtime.relax_vm): `from tvm.relax.vm import VirtualMachine, Executable` keeps working."""
from ..executable import VMExecutable as Executable
from ..relax_vm import VirtualMachine, VMInstrumentReturnKind

__all__ = ["VirtualMachine", "Executable", "VMInstrumentReturnKind"]

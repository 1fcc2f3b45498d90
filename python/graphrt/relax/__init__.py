"""tvm.relax's deploy-time name under `import graphrt as tvm`: relax.VirtualMachine."""
from ..relax_vm import VirtualMachine, VMInstrumentReturnKind

__all__ = ["VirtualMachine", "VMInstrumentReturnKind"]

"""graphrt.contrib.debugger: TVM's debug executor (per-node outputs and timing)."""
import sys

from . import debug_executor

debug_runtime = debug_executor
sys.modules.setdefault(__name__ + ".debug_runtime", debug_executor)

"""graphrt.contrib: TVM's tvm.contrib names for deploy code (graph_executor, debugger)."""
import sys

from . import graph_executor
from . import debugger

# TVM's deprecated aliases of the same modules.
graph_runtime = graph_executor
sys.modules.setdefault(__name__ + ".graph_runtime", graph_executor)

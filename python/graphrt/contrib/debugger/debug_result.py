"""The debug executor's dump files, in TVM's layout, under <dump_root>/_tvmdbg_device_<DEV>_<id>/:

- _tvmdbg_graph_dump.json: the graph JSON with each node annotated: "op" is the kernel name
  (or "param" for an input/parameter node), "inputs" the input node names, "shape" the first
  output's shape and attrs["T"] its dtype ("type: float32");
- output_tensors.params: every node output in save_param_dict format, keyed
  "<node name>____topo-index:<node index>____output-num:<output index>";
- _tvmdbg_execution_trace.json: a Chrome trace of the mean per-node times, nodes back to back.
"""
import json
import os

from ...params import save_param_dict

GRAPH_DUMP_FILE_NAME = "_tvmdbg_graph_dump.json"
CHROME_TRACE_FILE_NAME = "_tvmdbg_execution_trace.json"
OUTPUT_TENSORS_FILE_NAME = "output_tensors.params"


def _mean(values):
    return sum(values) / len(values) if values else 0.0


def output_key(node_name, node_index, output_index):
    """The name a node output has in output_tensors.params (names repeat; the index does not)."""
    return "%s____topo-index:%d____output-num:%d" % (node_name, node_index, output_index)


class DebugResult:
    """Collects one debug run (per-node times and outputs) and writes the dump files."""

    def __init__(self, graph_json, dump_path):
        self._dump_path = dump_path
        self._output_tensor_list = []
        self._time_list = []
        graph = json.loads(graph_json)
        self._nodes_list = graph["nodes"]
        self._shapes_list = graph["attrs"]["shape"]
        self._dtype_list = graph["attrs"]["dltype"]
        self._annotate_nodes()
        with open(os.path.join(dump_path, GRAPH_DUMP_FILE_NAME), "w") as f:
            json.dump(graph, f, indent=4)

    def _annotate_nodes(self):
        entry = 0
        for node in self._nodes_list:
            if node["op"] == "null":
                node["op"], node["attrs"], count = "param", {}, 1
            elif node["op"] == "tvm_op":
                node["op"] = node["attrs"]["func_name"]
                count = int(node["attrs"]["num_outputs"])
            else:
                raise ValueError("graph node '%s' has unknown op '%s'" % (node.get("name"), node["op"]))
            node["inputs"] = [self._nodes_list[i[0]]["name"] for i in node["inputs"]]
            node["attrs"]["T"] = "type: " + self._dtype_list[1][entry]
            node["shape"] = self._shapes_list[1][entry]
            entry += count

    def get_graph_nodes(self):
        return self._nodes_list

    def get_graph_node_shapes(self):
        return self._shapes_list

    def get_graph_node_dtypes(self):
        return self._dtype_list

    def get_graph_node_output_num(self, node):
        return 1 if node["op"] == "param" else int(node["attrs"]["num_outputs"])

    def update_output_tensors(self, tensors):
        self._output_tensor_list.extend(tensors)

    def get_output_tensors(self):
        """{output_key: NDArray} of every node output, in node order."""
        out = {}
        entry = 0
        for i, node in enumerate(self._nodes_list):
            for j in range(self.get_graph_node_output_num(node)):
                out[output_key(node["name"], i, j)] = self._output_tensor_list[entry]
                entry += 1
        return out

    def dump_output_tensor(self):
        with open(os.path.join(self._dump_path, OUTPUT_TENSORS_FILE_NAME), "wb") as f:
            f.write(save_param_dict(self.get_output_tensors()))

    def dump_chrome_trace(self):
        events = []
        start_us = 0.0
        for node, times in zip(self._nodes_list, self._time_list):
            duration_us = _mean(times) * 1e6
            events.append({"ts": start_us, "tid": 1, "pid": 1, "name": node["name"], "ph": "B"})
            events.append({"ts": start_us + duration_us, "tid": 1, "pid": 1, "name": node["name"], "ph": "E"})
            start_us += duration_us
        with open(os.path.join(self._dump_path, CHROME_TRACE_FILE_NAME), "w") as f:
            json.dump({"displayTimeUnit": "ns", "traceEvents": events}, f)

    def get_debug_result(self, sort_by_time=True):
        """The per-node timing table TVM's debug executor prints (times in microseconds)."""
        header = ["Node Name", "Ops", "Time(us)", "Time(%)", "Shape", "Inputs", "Outputs", "Measurements(us)"]
        total = sum(_mean(t) for t in self._time_list)
        rows = []
        entry = 0
        for node, times in zip(self._nodes_list, self._time_list):
            for _ in range(self.get_graph_node_output_num(node)):
                if node["op"] != "param":
                    mean = _mean(times)
                    rows.append([node["name"], node["op"], round(mean * 1e6, 3),
                                 round(mean / total * 100, 3) if total > 0 else 0.0,
                                 str(self._output_tensor_list[entry].shape), str(node["attrs"]["num_inputs"]),
                                 str(node["attrs"]["num_outputs"]), str([round(t * 1e6, 3) for t in times])])
                entry += 1
        if sort_by_time:
            rows.sort(key=lambda r: r[2], reverse=True)
            rows.append(["Total_time", "-", round(total * 1e6, 3), "-", "-", "-", "-", "-"])
        widths = [max([len(h)] + [len(str(r[i])) for r in rows]) + 2 for i, h in enumerate(header)]
        fmt = "".join("{:<%d}" % w for w in widths)
        lines = [fmt.format(*header), fmt.format(*["-" * len(h) for h in header])]
        lines.extend(fmt.format(*[str(c) for c in r]) for r in rows)
        return "\n".join(lines)

    def display_debug_result(self, sort_by_time=True):
        print(self.get_debug_result(sort_by_time))

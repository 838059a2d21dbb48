#!/usr/bin/env python3
"""A stand-in for an HPVM2FPGA flow, to try ``--backend command`` without an FPGA toolchain.

It reads a configuration (the JSON file given as the last argument, or stdin when there is none),
evaluates it with the analytical model of ``fpga_model.py`` (a MODEL, not synthesis), prints a
log line and then the protocol line that ``flow_command.py`` reads::

    python examples/hpvm2fpga/model_flow.py [--space FILE] [CONFIG.json]
    -> {"exec_time": 0.000511, "fits": true, "util_lut": 0.747, ...}

A real flow script would instead compile the HPVM program with these optimisation settings, run
HLS and place-and-route, report ``fits: false`` when the design does not fit, and time the
bitstream on the board.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fpga_design  # noqa: E402
import fpga_model  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--space", default=fpga_design.EDGE_DETECTION, help="space description JSON "
                    "(default: the shipped edge-detection space)")
    ap.add_argument("config", nargs="?", help="configuration JSON file (default: read stdin)")
    ns = ap.parse_args(argv)
    design = fpga_design.load_design(ns.space)
    text = open(ns.config).read() if ns.config else sys.stdin.read()
    cfg = json.loads(text)
    report = fpga_model.evaluate(design, cfg)
    print(f"model_flow: {len(report.kernels)} kernels, cycles {report.cycles}", flush=True)
    line = {"fits": report.fits, **fpga_model.result_extra(report)}
    if report.fits:
        line["exec_time"] = report.seconds
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The host-time measure the front's benches share: the wall time of one call, in loops of 200
calls (the stream drained between loops, untimed, where the calls launch), the median over
rounds."""

import statistics
import time

import torch


def per_call(fn, calls=2000, rounds=7, drain=True):
    """``{"us_per_call_median", "rounds"}``: microseconds a call of ``fn``."""
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    per_round = []
    for _ in range(rounds):
        spent = 0.0
        for _ in range(calls // 200):
            t0 = time.perf_counter()
            for _ in range(200):
                fn()
            spent += time.perf_counter() - t0
            if drain:
                torch.cuda.synchronize()
        per_round.append(spent / calls * 1e6)
    return {"us_per_call_median": statistics.median(per_round), "rounds": per_round}

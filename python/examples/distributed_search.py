#!/usr/bin/env python3
"""A plan search spread over a Dask or Ray cluster from a notebook or a script: the candidates are
split into shares exactly as `mpirun -np N fathom search` splits them (candidate i goes to share
i mod N), each share is evaluated by one task on the cluster, and the shares merge here into the
result of one process.

    PYTHONPATH=build/python python3 python/examples/distributed_search.py dask|ray|processes [SCENARIO]

Dask and Ray come from PyPI (`pip install "dask[distributed]"` or `pip install ray`); `processes`
needs nothing (a local ProcessPoolExecutor). The tests run `processes`, and Dask when installed.
"""
import concurrent.futures as cf
import os
import sys
import time

import fathom


def ray_executor(workers):
    """A concurrent.futures view of Ray tasks: submit() runs the function as a Ray task."""
    import ray

    ray.init(num_cpus=workers, ignore_reinit_error=True, include_dashboard=False)

    class RayExecutor(cf.Executor):
        _max_workers = workers

        def submit(self, fn, *args, **kwargs):
            return ray.remote(fn).remote(*args, **kwargs).future()

    return RayExecutor()


def main():
    engine = sys.argv[1] if len(sys.argv) > 1 else "processes"
    here = os.path.dirname(os.path.abspath(__file__))
    scenario = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "scenarios", "examples",
                                                                  "search-serving-llama3-70b-64xh100.yaml")
    workers = 2
    start = time.time()
    if engine == "dask":
        from dask.distributed import Client

        with Client(n_workers=workers, threads_per_worker=1, dashboard_address=None) as client:
            result = fathom.search(scenario, executor=client.get_executor(), partitions=workers)
    elif engine == "ray":
        result = fathom.search(scenario, executor=ray_executor(workers), partitions=workers)
    else:
        with cf.ProcessPoolExecutor(max_workers=workers) as pool:
            result = fathom.search(scenario, executor=pool)
    print(f"{engine}: {result} in {time.time() - start:.1f} s")
    print(result.to_pandas().sort_values("rank").head(5).to_string())


if __name__ == "__main__":
    main()

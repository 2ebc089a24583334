"""Same as `python -m vidur.main`, plus perf_counter timings of setup and Simulator.run()."""
import time

t0 = time.perf_counter()
from vidur.config import SimulationConfig
from vidur.simulator import Simulator
from vidur.utils.random import set_seeds

t1 = time.perf_counter()
config = SimulationConfig.create_from_cli_args()
set_seeds(config.seed)
sim = Simulator(config)  # builds cluster, loads/trains predictor, generates requests
t2 = time.perf_counter()
sim.run()
t3 = time.perf_counter()
n = config.request_generator_config.num_requests
print(f"BENCH import_s={t1-t0:.3f} setup_s={t2-t1:.3f} run_loop_s={t3-t2:.3f} "
      f"loop_req_per_s={n/(t3-t2):.1f} simulated_end_s={sim._time:.1f}", flush=True)
